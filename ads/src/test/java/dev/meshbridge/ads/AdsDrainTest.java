package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Any;
import com.google.protobuf.StringValue;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine's shutdown path and its event-to-ACK histogram, through a real gRPC server and raw ADS clients: a drained
 * server ends every stream with {@code UNAVAILABLE} (after GOAWAY) and takes no new one; a change is measured once,
 * when the last subscribed client has ACKed it.
 */
class AdsDrainTest {

    static final ResourceType THING = ResourceType.of("thing", "type.googleapis.com/google.protobuf.StringValue", true);
    static final ResourceType OTHER = ResourceType.of("other", "type.googleapis.com/google.protobuf.BytesValue", true);

    /** A resource whose body is a string. */
    record Thing(String name, String value) implements Resource {
        @Override
        public long versionHash() {
            long h = new Hash64().putString(name).putString(value).finish();
            return h == 0 || h == Long.MIN_VALUE ? 1 : h;
        }

        @Override
        public Any any() {
            return Any.pack(StringValue.of(name + "=" + value));
        }

        @Override
        public io.envoyproxy.envoy.service.discovery.v3.Resource delta() {
            return io.envoyproxy.envoy.service.discovery.v3.Resource.newBuilder()
                    .setName(name)
                    .setVersion(Hash64.toHex(versionHash()))
                    .setResource(any())
                    .build();
        }

        @Override
        public boolean wildcard() {
            return true;
        }
    }

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    AdsServer server;

    /** A started plaintext server on a free loopback port, default limits, no pacing, no initial-sync timeout. */
    static AdsServer started(String name, SimpleMeterRegistry meters, ResourceType... types) throws Exception {
        return new AdsServer(
                        new AdsOptions(
                                name,
                                "127.0.0.1",
                                0,
                                Duration.ZERO,
                                Duration.ZERO,
                                AdsLimits.DEFAULTS,
                                Duration.ZERO,
                                Duration.ZERO),
                        ResourceTypes.of(List.of(types)),
                        meters)
                .start();
    }

    /**
     * Holds the server's serving thread with a task until the returned latch is counted down (at most {@code
     * seconds}), and returns once that task runs; {@code after} runs in it once released.
     */
    static java.util.concurrent.CountDownLatch hold(AdsServer server, int seconds, Runnable after)
            throws InterruptedException {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        server.execute(() -> {
            holding.countDown();
            try {
                release.await(seconds, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            after.run();
        });
        assertThat(holding.await(60, TimeUnit.SECONDS))
                .as("the serving thread runs the holding task")
                .isTrue();
        return release;
    }

    @BeforeEach
    void start() throws Exception {
        server = started("test", meters, THING, OTHER);
        put(new Thing("a", "1"), 0);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private void put(Thing t, long eventNanos) {
        server.execute(() ->
                server.engine().applyChange(eventNanos, () -> server.engine().put(THING, t)));
        server.idle().join();
    }

    private static Node node(String id) {
        return Node.newBuilder().setId(id).build();
    }

    private AdsTestClient subscribed(String id) {
        AdsTestClient c = new AdsTestClient(server.port(), node(id)).openSotw();
        c.sotw(THING.typeUrl(), List.of(), "", "");
        DiscoveryResponse r = c.next();
        assertThat(r.getResourcesCount()).isEqualTo(1);
        double before = acks();
        c.ack(r, List.of());
        await().atMost(Duration.ofSeconds(30)).until(() -> acks() > before);
        return c;
    }

    @Test
    void drain_endsEveryStreamWithUnavailable_andRefusesNewStreams() {
        try (AdsTestClient sotw = subscribed("one");
                AdsTestClient delta = new AdsTestClient(server.port(), node("two")).openDelta()) {
            delta.deltaSubscribe(THING.typeUrl(), List.of(), java.util.Map.of());
            assertThat(delta.nextDelta().getResourcesCount()).isEqualTo(1);

            server.drain().join();

            for (Throwable t : List.of(sotw.failure(), delta.failure())) {
                Status s = Status.fromThrowable(t);
                assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(s.getDescription()).contains("reconnect to another replica");
            }
            assertThat(server.draining()).isTrue();
            assertThat(server.query(() -> server.engine().streamCount())).isZero();
        }
        // the listener is closed and a stream is refused: a client reconnects through the Service to another replica
        try (AdsTestClient late = new AdsTestClient(server.port(), node("late")).openSotw()) {
            late.sotw(THING.typeUrl(), List.of(), "", "");
            assertThat(Status.fromThrowable(late.failure()).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        }
        // a second drain, then close, do nothing more
        server.drain().join();
    }

    @Test
    void eventToAck_isRecordedOnce_whenTheLastSubscribedClientAcks() {
        Timer timer = meters.get("meshbridge.test.event.to.ack").timer();
        try (AdsTestClient first = subscribed("first");
                AdsTestClient second = subscribed("second")) {
            long event = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(200);
            put(new Thing("a", "2"), event);

            DiscoveryResponse toFirst = first.next();
            first.ack(toFirst, List.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> acks() == 3);
            assertThat(timer.count()).as("one of two clients has ACKed").isZero();

            DiscoveryResponse toSecond = second.next();
            second.ack(toSecond, List.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> timer.count() == 1);
            assertThat(timer.max(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(200);

            // a change nobody subscribes to is not a measurement
            server.execute(() -> server.engine()
                    .applyChange(System.nanoTime(), () -> server.engine().put(OTHER, new Thing("b", "1"))));
            server.idle().join();
            assertThat(timer.count()).isEqualTo(1);

            // a NACK releases that client: the change counts once the other has ACKed
            put(new Thing("a", "3"), System.nanoTime());
            first.nack(first.next(), List.of(), toFirst.getVersionInfo());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> meters.counter("meshbridge.test.nacks", "type", "thing")
                                    .count()
                            == 1);
            assertThat(timer.count()).isEqualTo(1);
            second.ack(second.next(), List.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> timer.count() == 2);
        }
    }

    private double acks() {
        return meters.counter("meshbridge.test.acks", "type", "thing").count();
    }

    @Test
    void staleStreams_areThoseWithAResponseUnacknowledgedBeforeTheCutoff() {
        try (AdsTestClient quiet = new AdsTestClient(server.port(), node("quiet")).openSotw();
                AdsTestClient prompt = subscribed("prompt")) {
            quiet.sotw(THING.typeUrl(), List.of(), "", "");
            DiscoveryResponse unanswered = quiet.next();
            server.idle().join();
            java.time.Instant later = java.time.Instant.now().plusSeconds(1);
            assertThat(server.query(() -> server.engine().refreshStale(later))).isEqualTo(1);
            assertThat(meters.get("meshbridge.test.streams.stale").gauge().value())
                    .isEqualTo(1);
            assertThat(server.query(() -> server.engine().refreshStale(later.minusSeconds(60))))
                    .as("unacknowledged for less than the stale time")
                    .isZero();
            double before = acks();
            quiet.ack(unanswered, List.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> acks() > before);
            assertThat(server.query(() -> server.engine().refreshStale(later))).isZero();
        }
    }

    @Test
    void maxConnectionAgeGrace_isATenthOfTheAge_between1And10Seconds() {
        assertThat(AdsServer.maxConnectionAgeGrace(Duration.ofSeconds(2))).isEqualTo(Duration.ofSeconds(1));
        assertThat(AdsServer.maxConnectionAgeGrace(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(3));
        assertThat(AdsServer.maxConnectionAgeGrace(Duration.ofMinutes(30))).isEqualTo(Duration.ofSeconds(10));
    }
}
