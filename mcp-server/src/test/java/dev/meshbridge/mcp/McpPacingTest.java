package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Any;
import dev.meshbridge.ads.AdsTestClient;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Paced pushes to istiod: within the minimum push interval, catalog changes do not go out one push each; they are
 * merged into one push when the interval has passed. Time is the test's clock.
 */
class McpPacingTest {

    private static final String SE = McpKind.SERVICE_ENTRY.typeUrl("v1");

    /** A clock the test moves. */
    static final class TestClock extends Clock {
        private volatile Instant now = Instant.parse("2026-01-01T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private final TestCatalog catalog = new TestCatalog();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final TestClock clock = new TestClock();
    private McpServer server;
    private AdsTestClient istiod;

    @AfterEach
    void close() {
        if (istiod != null) istiod.close();
        if (server != null) server.close();
        catalog.close();
    }

    /** A server pacing pushes at 10 minutes of the test's clock, answering at once. */
    private void startServer() throws Exception {
        server = new McpServer(
                McpOptions.builder()
                        .bindAddress("127.0.0.1")
                        .port(0)
                        .initialSyncTimeout(Duration.ZERO)
                        .minPushInterval(Duration.ofMinutes(10))
                        .build(),
                meters,
                clock);
        server.start();
        catalog.aggregator().subscribe(server).join();
    }

    private void register(String name) {
        accept(name);
        catalog.aggregator().flushNow().join();
    }

    private void accept(String name) {
        catalog.aggregator()
                .accept(new ServiceUpsert(
                        ServiceKey.of("zookeeper", "zk1", name),
                        name + ".pacing",
                        List.of(new ServicePort("http", 8080, Protocol.HTTP)),
                        List.of(Endpoint.builder("10.0.0.1").port("http", 8080).build())));
    }

    /** The ServiceEntry names the services registered under these names get. */
    private static List<String> entries(String... names) {
        return java.util.Arrays.stream(names)
                .map(n -> "meshbridge/" + n + ".pacing")
                .toList();
    }

    private static List<String> names(DiscoveryResponse r) throws Exception {
        List<String> out = new ArrayList<>();
        for (Any a : r.getResourcesList())
            out.add(a.unpack(Resource.class).getMetadata().getName());
        return out;
    }

    private double count(String name) {
        return meters.find(name).counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count)
                .sum();
    }

    @Test
    void changesWithinTheInterval_areMergedIntoOnePush_whenItHasPassed() throws Exception {
        startServer();
        register("first");
        server.idle().join();

        istiod = new AdsTestClient(
                        server.port(), Node.newBuilder().setId("istiod-1").build())
                .openSotw();
        istiod.sotw(SE, List.of(), "", "");
        DiscoveryResponse initial = istiod.next();
        assertThat(names(initial)).containsExactly("meshbridge/first.pacing");
        istiod.ack(initial, List.of());

        for (String name : List.of("a", "b", "c", "d", "e")) {
            register(name);
            server.idle().join();
        }
        assertThat(istiod.pending()).as("nothing pushed within the interval").isZero();
        assertThat(count("meshbridge.mcp.pushes.paced")).isGreaterThanOrEqualTo(1);

        clock.advance(Duration.ofMinutes(10));
        register("f");
        DiscoveryResponse merged = istiod.next();
        server.idle().join(); // the push is counted after it is written: the client can read it first
        assertThat(names(merged)).containsExactlyInAnyOrderElementsOf(entries("first", "a", "b", "c", "d", "e", "f"));
        assertThat(count("meshbridge.mcp.pushes")).isEqualTo(2);
        assertThat(meters.find("meshbridge.mcp.push.size").summaries().stream()
                        .mapToLong(s -> s.count())
                        .sum())
                .isEqualTo(2);
    }

    @Test
    void aNewSubscription_isAnsweredAtOnce_evenWithinTheInterval() throws Exception {
        startServer();
        register("first");
        istiod = new AdsTestClient(
                        server.port(), Node.newBuilder().setId("istiod-1").build())
                .openSotw();
        istiod.sotw(SE, List.of(), "", "");
        istiod.ack(istiod.next(), List.of());
        String we = McpKind.WORKLOAD_ENTRY.typeUrl("v1");
        istiod.sotw(we, List.of(), "", "");
        DiscoveryResponse r = istiod.next();
        assertThat(r.getTypeUrl()).isEqualTo(we);
    }

    /** Waits until the server took in (applied, or holds for its paced application) the aggregator's last snapshot. */
    private void awaitTaken() {
        long sequence = catalog.aggregator().current().sequence();
        await().atMost(TestCatalog.TIMEOUT).until(() -> server.takenSequence() >= sequence);
    }

    @Test
    void snapshotsWithinTheInterval_waitForItsEnd_andAreAppliedTogether_butANewIstiodGetsTheNewest() throws Exception {
        startServer();
        awaitTaken();
        clock.advance(Duration.ofMinutes(10));
        register("first");
        awaitTaken();
        long applied = server.servedSequence();
        assertThat(applied)
                .as("a change after a quiet interval is applied at once")
                .isEqualTo(server.takenSequence());

        register("a");
        register("b");
        awaitTaken();
        assertThat(server.servedSequence())
                .as("changes within the interval wait")
                .isEqualTo(applied);
        assertThat(count("meshbridge.mcp.snapshots.paced")).isEqualTo(2);

        // istiod connecting meanwhile is answered with the newest state, not the one applied last
        istiod = new AdsTestClient(
                        server.port(), Node.newBuilder().setId("istiod-1").build())
                .openSotw();
        istiod.sotw(SE, List.of(), "", "");
        DiscoveryResponse initial = istiod.next();
        assertThat(names(initial)).containsExactlyInAnyOrderElementsOf(entries("first", "a", "b"));
        istiod.ack(initial, List.of());

        register("c");
        awaitTaken();
        // once the interval has passed, the next change is applied at once with whatever waited, and pushed
        register("d");
        awaitTaken();
        clock.advance(Duration.ofMinutes(10));
        register("e");
        awaitTaken();
        assertThat(server.servedSequence()).isEqualTo(server.takenSequence());
        DiscoveryResponse pushed = istiod.next();
        assertThat(names(pushed)).containsExactlyInAnyOrderElementsOf(entries("first", "a", "b", "c", "d", "e"));
        server.idle().join();
        assertThat(istiod.pending()).as("c, d and e in one push").isZero();
    }
}
