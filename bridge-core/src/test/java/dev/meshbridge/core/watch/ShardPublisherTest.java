package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.config.HostNamePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.RemovalPolicy;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.ManualTicker;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TableLookup;
import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The publisher every watcher sends through: last-sent diff and host-name resolution, time driven by the test. */
class ShardPublisherTest {

    private static final ServiceKey KEY = new ServiceKey("test", "r", "", "", "orders", "");
    private static final List<ServicePort> PORTS = List.of(new ServicePort("http", 80, Protocol.HTTP));

    private final ManualTicker ticker = new ManualTicker();
    private final TableLookup dns = new TableLookup();
    private final RecordingSink sink = new RecordingSink();
    private RegistryStatus status;
    private WatcherKit kit;

    private void start(HostNamePolicy policy) {
        start(policy, dev.meshbridge.core.config.RegistryLimits.DEFAULTS);
    }

    private void start(HostNamePolicy policy, dev.meshbridge.core.config.RegistryLimits limits) {
        RegistryConfig config = new RegistryConfig(
                "test",
                "r",
                List.of("h:1"),
                EmptyServicePolicy.DELETE,
                Duration.ofSeconds(1),
                new TreeMap<>(),
                "x",
                policy,
                RemovalPolicy.IMMEDIATE,
                limits);
        status = new RegistryStatus("r", "test");
        kit = new WatcherKit(
                new WatcherContext(config, sink, status, new WatcherRuntime(ticker, dns)), "test-loop", Duration.ZERO);
        kit.start();
    }

    @AfterEach
    void close() {
        if (kit != null) kit.close();
    }

    private void onLoop(Runnable r) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        kit.loop().execute(() -> {
            r.run();
            done.complete(null);
        });
        done.join();
    }

    private static Endpoint ep(String address) {
        return Endpoint.builder(address).port("http", 8080).build();
    }

    private static ServiceUpsert upsert(Endpoint... endpoints) {
        return new ServiceUpsert(KEY, "orders.test", PORTS, List.of(endpoints));
    }

    private List<ServiceUpsert> upserts() {
        return sink.events(ServiceUpsert.class);
    }

    @Test
    void sameListAgain_sendsNothing_aChangeSendsTheFullList_emptyKeepsTheService_removeRemovesIt() {
        start(HostNamePolicy.DEFAULT);
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.1"))));
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.1"))));
        assertThat(upserts()).hasSize(1);
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.1"), ep("10.0.0.2"))));
        assertThat(upserts()).hasSize(2);
        assertThat(upserts().get(1).endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.1", "10.0.0.2");
        onLoop(() -> kit.publisher().upsert(upsert()));
        onLoop(() -> {});
        assertThat(upserts()).last().satisfies(u -> assertThat(u.endpoints()).isEmpty());
        assertThat(sink.events(ServiceRemoval.class)).isEmpty();
        onLoop(() -> kit.publisher().remove(KEY));
        onLoop(() -> {});
        assertThat(sink.events(ServiceRemoval.class)).hasSize(1);
        onLoop(() -> kit.publisher().synced());
        assertThat(sink.events(RegistrySynced.class))
                .singleElement()
                .satisfies(s -> assertThat(s.services()).isEmpty());
    }

    @Test
    void hostName_isSentAsItsAddressOnceResolved_andAgainWhenTheAddressChangesAtTheRefresh() {
        start(new HostNamePolicy(HostNamePolicy.Mode.RESOLVE, Duration.ofSeconds(30)));
        dns.put("orders-1.corp", "10.1.0.1");
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.9"), ep("orders-1.corp"))));
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        !upserts().isEmpty() && upserts().getLast().endpoints().size() == 2);
        assertThat(upserts().getLast().endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.9", "10.1.0.1");

        dns.put("orders-1.corp", "10.1.0.2");
        ticker.advance(Duration.ofSeconds(29));
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.9"), ep("orders-1.corp")))); // cached: no lookup
        assertThat(dns.lookups("orders-1.corp")).isEqualTo(1);
        ticker.advance(Duration.ofSeconds(2));
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.9"), ep("orders-1.corp")))); // due: refresh
        await().atMost(Duration.ofSeconds(10))
                .until(() -> upserts().getLast().endpoints().stream()
                        .anyMatch(e -> e.address().equals("10.1.0.2")));
        assertThat(status.skippedCount()).isZero();
    }

    @Test
    void aNameThatDoesNotResolve_isReportedPerInstance_andServedOnceItDoes() {
        start(new HostNamePolicy(HostNamePolicy.Mode.RESOLVE, Duration.ofSeconds(10)));
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.9"), ep("new-box.corp"))));
        await().atMost(Duration.ofSeconds(10)).until(() -> status.skippedCount() >= 1);
        assertThat(upserts().getLast().endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.9");

        dns.put("new-box.corp", "10.2.0.1");
        ticker.advance(Duration.ofSeconds(11));
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.9"), ep("new-box.corp"))));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> upserts().getLast().endpoints().size() == 2);
    }

    @Test
    void aRefreshThatFails_keepsTheLastAddress() {
        start(new HostNamePolicy(HostNamePolicy.Mode.RESOLVE, Duration.ofSeconds(5)));
        dns.put("box.corp", "10.3.0.1");
        onLoop(() -> kit.publisher().upsert(upsert(ep("box.corp"))));
        await().atMost(Duration.ofSeconds(10)).until(() -> !upserts().isEmpty());
        dns.remove("box.corp");
        ticker.advance(Duration.ofSeconds(6));
        onLoop(() -> kit.publisher().upsert(upsert(ep("box.corp"))));
        await().atMost(Duration.ofSeconds(10)).until(() -> dns.lookups("box.corp") == 2);
        onLoop(() -> {});
        assertThat(upserts()).hasSize(1);
        assertThat(sink.events(ServiceRemoval.class)).isEmpty();
        assertThat(status.skippedCount()).isZero();
    }

    @Test
    void skipMode_leavesHostNamesOutWithAReport() {
        start(new HostNamePolicy(HostNamePolicy.Mode.SKIP, Duration.ofSeconds(30)));
        dns.put("box.corp", "10.3.0.1");
        onLoop(() -> kit.publisher().upsert(upsert(ep("10.0.0.1"), ep("box.corp"))));
        assertThat(upserts())
                .singleElement()
                .satisfies(u -> assertThat(u.endpoints()).hasSize(1));
        assertThat(status.skippedCount()).isEqualTo(1);
        assertThat(dns.lookups("box.corp")).isZero();
    }

    @Test
    void twoNamesOfOneAddress_areOneEndpoint_theServingOneKept() {
        start(HostNamePolicy.DEFAULT);
        dns.put("a.corp", "10.4.0.1").put("b.corp", "10.4.0.1");
        Endpoint down = Endpoint.builder("a.corp")
                .port("http", 8080)
                .health(Health.UNHEALTHY)
                .build();
        Endpoint up = Endpoint.builder("b.corp").port("http", 8080).build();
        onLoop(() -> kit.publisher().upsert(upsert(down, up)));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !upserts().isEmpty()
                        && upserts().getLast().endpoints().stream().allMatch(e -> e.health() == Health.HEALTHY));
        assertThat(upserts().getLast().endpoints())
                .singleElement()
                .satisfies(e -> assertThat(e.address()).isEqualTo("10.4.0.1"));
    }

    @Test
    void afterClose_nothingIsSent() {
        start(HostNamePolicy.DEFAULT);
        kit.beginClose();
        kit.publisher().upsert(upsert(ep("10.0.0.1")));
        List<RegistryEvent> events = sink.events();
        assertThat(events).isEmpty();
    }

    @Test
    void addressesThatAreNotUnicast_areLeftOutAndReportedOnce() {
        start(HostNamePolicy.DEFAULT);
        for (int round = 0; round < 2; round++) {
            int r = round;
            onLoop(() -> kit.publisher()
                    .upsert(upsert(
                            ep("10.0.0.1"),
                            ep("255.255.255.255"),
                            ep("0.0.0.0"),
                            ep("224.0.0.5"),
                            ep("ff02::1"),
                            ep("::"),
                            ep("10.0.0." + (2 + r)))));
        }
        onLoop(() -> {}); // a removal is decided by a task the publisher queues on its loop: let it run

        assertThat(upserts().getLast().endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.1", "10.0.0.3");
        assertThat(status.skippedCount())
                .as("five bad instances, each counted once over two publishes")
                .isEqualTo(5);
    }

    @Test
    void registryLimits_servicesPastTheLimitWaitForRoom_labelsPastTheLimitAreDropped() {
        start(HostNamePolicy.DEFAULT, new dev.meshbridge.core.config.RegistryLimits(2, 100, 3));
        ServiceKey a = new ServiceKey("test", "r", "", "", "a", "");
        ServiceKey b = new ServiceKey("test", "r", "", "", "b", "");
        ServiceKey c = new ServiceKey("test", "r", "", "", "c", "");
        Endpoint labelled = Endpoint.builder("10.0.0.9")
                .port("http", 8080)
                .label("l1", "x")
                .label("l2", "x")
                .label("l3", "x")
                .label("l4", "x")
                .label("l5", "x")
                .build();
        onLoop(() -> {
            kit.publisher().upsert(new ServiceUpsert(a, "a.test", PORTS, List.of(labelled)));
            kit.publisher().upsert(new ServiceUpsert(b, "b.test", PORTS, List.of(ep("10.0.0.2"))));
            kit.publisher().upsert(new ServiceUpsert(c, "c.test", PORTS, List.of(ep("10.0.0.3"))));
        });
        assertThat(upserts()).extracting(ServiceUpsert::key).containsExactly(a, b);
        assertThat(upserts().get(0).endpoints().get(0).labels()).containsOnlyKeys("l1", "l2", "l3");
        assertThat(status.droppedLabelCount()).isEqualTo(2);
        assertThat(status.skippedCount()).isEqualTo(1);

        onLoop(() -> kit.publisher().remove(b));
        onLoop(() -> {}); // the removal is decided by a task the publisher queues on its loop: let it run
        assertThat(upserts()).extracting(ServiceUpsert::key).containsExactly(a, b, c);
    }
}
