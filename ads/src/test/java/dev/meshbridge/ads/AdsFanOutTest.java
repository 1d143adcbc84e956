package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.StringValue;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One change fanned out to many streams, through a real gRPC server and raw ADS clients: every Delta and SotW stream
 * gets the change and ACKs it, the Delta wrapper of the changed resource is made once for all of them, and the
 * serving thread's task queue keeps each producer's order, lets timers in during a flood, and is what {@code idle()}
 * waits for.
 */
class AdsFanOutTest {

    static final ResourceType THING = AdsDrainTest.THING;

    /** Delta wrappers made, over every {@link Counted} resource. */
    static final AtomicInteger WRAPPERS = new AtomicInteger();

    /** {@link AdsDrainTest.Thing} (a string body), counting the Delta wrappers made of it. */
    record Counted(AdsDrainTest.Thing thing) implements Resource {
        Counted(String name, String value) {
            this(new AdsDrainTest.Thing(name, value));
        }

        @Override
        public String name() {
            return thing.name();
        }

        @Override
        public long versionHash() {
            return thing.versionHash();
        }

        @Override
        public Any any() {
            return thing.any();
        }

        @Override
        public io.envoyproxy.envoy.service.discovery.v3.Resource delta() {
            WRAPPERS.incrementAndGet();
            return thing.delta();
        }

        @Override
        public boolean wildcard() {
            return true;
        }
    }

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    AdsServer server;

    @BeforeEach
    void start() throws Exception {
        server = AdsDrainTest.started("fan", meters, THING);
        server.markReady("test");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private void put(List<Counted> things) {
        server.execute(() -> server.engine().applyChange(0, () -> {
            for (Counted t : things) server.engine().put(THING, t);
        }));
        server.idle().join();
    }

    static String body(Any any) {
        try {
            return any.unpack(StringValue.class).getValue();
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void oneChange_reachesEveryDeltaAndSotwStream_andEachAcksIt_withOneDeltaWrapperForAll() {
        put(List.of(new Counted("a", "1")));
        List<AdsTestClient> deltas = new ArrayList<>();
        List<AdsTestClient> sotws = new ArrayList<>();
        try {
            for (int i = 0; i < 30; i++) {
                AdsTestClient d = new AdsTestClient(
                                server.port(), Node.newBuilder().setId("d" + i).build())
                        .openDelta();
                d.deltaSubscribe(THING.typeUrl(), List.of("a"), Map.of());
                d.deltaAck(d.nextDelta());
                deltas.add(d);
                AdsTestClient s = new AdsTestClient(
                                server.port(), Node.newBuilder().setId("s" + i).build())
                        .openSotw();
                s.sotw(THING.typeUrl(), List.of("a"), "", "");
                s.ack(s.next(), List.of("a"));
                sotws.add(s);
            }
            server.idle().join();
            int before = WRAPPERS.get();

            Counted changed = new Counted("a", "2");
            put(List.of(changed));

            for (AdsTestClient d : deltas) {
                DeltaDiscoveryResponse r = d.nextDelta();
                assertThat(r.getResourcesCount()).isEqualTo(1);
                assertThat(r.getResources(0).getName()).isEqualTo("a");
                assertThat(r.getResources(0).getVersion()).isEqualTo(Hash64.toHex(changed.versionHash()));
                assertThat(body(r.getResources(0).getResource())).isEqualTo("a=2");
                d.deltaAck(r);
            }
            for (AdsTestClient s : sotws) {
                DiscoveryResponse r = s.next();
                assertThat(r.getResourcesList()).extracting(AdsFanOutTest::body).containsExactly("a=2");
                s.ack(r, List.of("a"));
            }
            assertThat(WRAPPERS.get() - before)
                    .as("the Delta wrapper of the changed resource, made once for the 30 Delta streams")
                    .isEqualTo(1);
            // every stream ACKed both its responses (the ACKs are on their way when the last response is read)
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> meters.counter("meshbridge.fan.acks", "type", "thing")
                                    .count()
                            >= 120);
        } finally {
            deltas.forEach(AdsTestClient::close);
            sotws.forEach(AdsTestClient::close);
        }
    }

    /**
     * The ACKs of a change to many streams wake the idle serving thread once for a batch, not once each: held (here
     * for up to a minute, 0.5 ms in a deployed server) until the next producer's task, which runs at once and takes
     * them along; and a server that closes while it holds some still handles them.
     */
    @Test
    void acksOfAChangeToManyStreams_areHeldForOneWakeUp_aChangeTakesThemAlongAtOnce_andCloseStillRunsThem() {
        put(List.of(new Counted("a", "1")));
        List<AdsTestClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                AdsTestClient d = new AdsTestClient(
                                server.port(), Node.newBuilder().setId("d" + i).build())
                        .openDelta();
                d.deltaSubscribe(THING.typeUrl(), List.of("a"), Map.of());
                d.deltaAck(d.nextDelta());
                clients.add(d);
            }
            server.idle().join();
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> meters.counter("meshbridge.fan.acks", "type", "thing")
                                    .count()
                            >= 20);
            double acks = meters.counter("meshbridge.fan.acks", "type", "thing").count();
            server.clientDrainDelay(Duration.ofMinutes(1));

            put(List.of(new Counted("a", "2")));
            for (AdsTestClient d : clients) d.deltaAck(d.nextDelta());
            // all 20 ACKs arrive and wait together; none is handled yet
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> server.queued() >= 20);
            assertThat(meters.counter("meshbridge.fan.acks", "type", "thing").count())
                    .isEqualTo(acks);

            long drains = server.drains();
            put(List.of(new Counted("a", "3"))); // a change wakes the thread at once, the 20 ACKs run with it
            assertThat(meters.counter("meshbridge.fan.acks", "type", "thing").count())
                    .as("the held ACKs ran with the change, long before their minute was up")
                    .isEqualTo(acks + 20);
            assertThat(server.drains() - drains)
                    .as("the change, its push and the 20 ACKs in the drains that change woke, not one per ACK")
                    .isLessThanOrEqualTo(3);

            for (AdsTestClient d : clients) d.deltaAck(d.nextDelta());
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> server.queued() >= 20);
            server.close();
            assertThat(meters.counter("meshbridge.fan.acks", "type", "thing").count())
                    .as("ACKs held when the server closed still handled")
                    .isEqualTo(acks + 40);
        } finally {
            clients.forEach(AdsTestClient::close);
        }
    }

    @Test
    void aPushOfMoreResourcesThanTheSharedWrappersHold_sendsEveryOneWithItsVersion() {
        int n = AdsEngine.MAX_SHARED_WRAPPERS + 50;
        List<Counted> things = new ArrayList<>();
        for (int i = 0; i < n; i++) things.add(new Counted("r" + i, "v" + i));
        put(things);
        try (AdsTestClient d = new AdsTestClient(
                                server.port(), Node.newBuilder().setId("wild").build())
                        .openDelta();
                AdsTestClient twin = new AdsTestClient(
                                server.port(), Node.newBuilder().setId("twin").build())
                        .openDelta()) {
            d.deltaSubscribe(THING.typeUrl(), List.of(), Map.of());
            twin.deltaSubscribe(THING.typeUrl(), List.of(), Map.of());
            for (AdsTestClient c : List.of(d, twin)) {
                DeltaDiscoveryResponse r = c.nextDelta();
                assertThat(r.getResourcesCount()).isEqualTo(n);
                for (io.envoyproxy.envoy.service.discovery.v3.Resource res : r.getResourcesList()) {
                    int i = Integer.parseInt(res.getName().substring(1));
                    assertThat(res.getVersion())
                            .isEqualTo(Hash64.toHex(things.get(i).versionHash()));
                    assertThat(body(res.getResource())).isEqualTo("r" + i + "=v" + i);
                }
            }
        }
    }

    @Test
    void tasksFromManyThreads_runInEachThreadsOrder_timersGetATurnDuringAFlood_andIdleWaitsForAll() throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        List<String> ran = new ArrayList<>(); // serving thread only
        server.execute(() -> {
            try {
                hold.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        int perThread = 2_000;
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            String name = "p" + t;
            Thread p = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    int k = i;
                    server.execute(() -> ran.add(name + ":" + k));
                }
            });
            producers.add(p);
            p.start();
        }
        for (Thread p : producers) p.join(60_000);
        server.schedule(() -> ran.add("timer"), Duration.ZERO);
        hold.countDown();
        server.idle().get(60, TimeUnit.SECONDS);

        List<String> seen = server.query(() -> List.copyOf(ran));
        assertThat(seen).hasSize(4 * perThread + 1);
        for (int t = 0; t < 4; t++) {
            String prefix = "p" + t + ":";
            List<Integer> order = seen.stream()
                    .filter(s -> s.startsWith(prefix))
                    .map(s -> Integer.parseInt(s.substring(prefix.length())))
                    .toList();
            assertThat(order).isSorted().hasSize(perThread);
        }
        assertThat(seen.indexOf("timer"))
                .as("a due timer runs between two drains, not after the whole flood")
                .isLessThan(4 * perThread - AdsServer.DRAIN_BATCH);
    }
}
