package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.route.RouteTable;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.pcollections.TreePMap;

/**
 * A small snapshot handed over while the serving thread has nothing to do is applied on the thread that hands it (a
 * lone change wakes no thread of its own), a large one or one handed while the serving thread works is queued behind
 * that work, and either way the clients receive every change: real gRPC transport, SotW and Delta streams ACKing while
 * a producer hands snapshots as fast as it can.
 */
class AdsCallerRunsTest {

    static final ResourceType THING = AdsDrainTest.THING;

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final List<AdsTestClient> clients = new ArrayList<>();
    AdsServer server;

    @BeforeEach
    void start() throws Exception {
        server = AdsDrainTest.started("callers", meters, THING);
        server.callerRunsServices(8); // whatever -Dmeshbridge.ads.callerRunsServices says
        server.markReady("test");
        server.idle().get(60, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() {
        for (AdsTestClient c : clients) c.close();
        server.close();
    }

    /**
     * A snapshot that changes {@code services} services (their names only: the producer's task is the test's),
     * published while the aggregator had nothing else due.
     */
    static MeshSnapshot changing(int services, boolean routesChanged) {
        return changing(services, routesChanged, true);
    }

    static MeshSnapshot changing(int services, boolean routesChanged, boolean publishedAlone) {
        Set<String> hosts = new TreeSet<>();
        for (int i = 0; i < services; i++) hosts.add("s" + i + ".test");
        return new MeshSnapshot(
                1, 0, TreePMap.empty(), hosts, Set.of(), 0, RouteTable.empty(), routesChanged, 0, publishedAlone);
    }

    /**
     * A thread that takes and ACKs a client's responses ({@code nextAndAck} returns the value received) until the
     * value of the last change arrives, noting the last value and any failure.
     */
    private static Thread acker(
            int changes,
            List<AtomicReference<String>> last,
            List<AtomicReference<Throwable>> failed,
            java.util.concurrent.Callable<String> nextAndAck) {
        AtomicReference<String> seen = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        last.add(seen);
        failed.add(failure);
        return Thread.ofPlatform().daemon().start(() -> {
            try {
                while (!("a=" + changes).equals(seen.get())) seen.set(nextAndAck.call());
            } catch (Throwable t) {
                failure.set(t);
            }
        });
    }

    /** The producer's task: puts thing {@code a} with {@code value}, noting the thread it ran on. */
    private Runnable put(String value, AtomicReference<Thread> ranOn) {
        return () -> {
            ranOn.set(Thread.currentThread());
            server.engine().applyChange(0, () -> server.engine().put(THING, new AdsDrainTest.Thing("a", value)));
        };
    }

    private static String value(DiscoveryResponse r) throws Exception {
        return r.getResources(0).unpack(StringValue.class).getValue();
    }

    private static String value(DeltaDiscoveryResponse r) throws Exception {
        return r.getResources(0).getResource().unpack(StringValue.class).getValue();
    }

    /**
     * Waits until the serving thread has finished the drain that completed {@code idle()} (that future completes from
     * inside it) and nothing else is queued.
     */
    private void awaitIdle() {
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(1))
                .until(server::idleNow);
    }

    private AdsTestClient sotwClient(String id) {
        AdsTestClient c =
                new AdsTestClient(server.port(), Node.newBuilder().setId(id).build()).openSotw();
        clients.add(c);
        c.sotw(THING.typeUrl(), List.of(), "", "");
        return c;
    }

    @Test
    void aSmallSnapshotHandedWhileTheServerIsIdle_isAppliedOnTheHandingThread_andTheClientReceivesIt()
            throws Exception {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        server.execute(put("1", ranOn));
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(ranOn.get().getName())
                .as("execute() runs on the serving thread")
                .isEqualTo("meshbridge-callers");
        AdsTestClient client = sotwClient("n1");
        DiscoveryResponse first = client.next();
        assertThat(value(first)).isEqualTo("a=1");
        client.ack(first, List.of());
        server.idle().get(60, TimeUnit.SECONDS);

        for (int i = 2; i <= 4; i++) {
            awaitIdle();
            ranOn.set(null);
            long before = server.callerRuns();
            server.executeSnapshot(changing(1, false), put(Integer.toString(i), ranOn));
            // applied before executeSnapshot returned, on this thread
            assertThat(ranOn.get()).isSameAs(Thread.currentThread());
            assertThat(server.callerRuns()).isEqualTo(before + 1);
            DiscoveryResponse r = client.next();
            assertThat(value(r)).isEqualTo("a=" + i);
            client.ack(r, List.of());
            server.idle().get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void aLargeSnapshot_aRouteChange_oneWithEventsWaiting_andOneHandedWhileTheServingThreadWorks_areQueuedInOrder()
            throws Exception {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        server.execute(put("0", ranOn));
        server.idle().get(60, TimeUnit.SECONDS);
        AdsTestClient client = sotwClient("n1");
        DiscoveryResponse r = client.next();
        assertThat(value(r)).isEqualTo("a=0");
        client.ack(r, List.of());
        server.idle().get(60, TimeUnit.SECONDS);

        server.executeSnapshot(changing(9, false), put("large", ranOn));
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(ranOn.get().getName()).isEqualTo("meshbridge-callers");
        r = client.next();
        assertThat(value(r)).isEqualTo("a=large");
        client.ack(r, List.of());

        server.executeSnapshot(changing(1, true), put("routes", ranOn));
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(ranOn.get().getName()).isEqualTo("meshbridge-callers");
        r = client.next();
        assertThat(value(r)).isEqualTo("a=routes");
        client.ack(r, List.of());
        server.idle().get(60, TimeUnit.SECONDS);

        // published while the aggregator had events waiting (an ingest): its thread goes back to them
        awaitIdle();
        server.executeSnapshot(changing(1, false, false), put("busy aggregator", ranOn));
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(ranOn.get().getName()).isEqualTo("meshbridge-callers");
        r = client.next();
        assertThat(value(r)).isEqualTo("a=busy aggregator");
        client.ack(r, List.of());
        server.idle().get(60, TimeUnit.SECONDS);

        // the serving thread is held by a task: a small snapshot handed now waits behind it, and runs after it
        List<String> order = new CopyOnWriteArrayList<>();
        CountDownLatch release = AdsDrainTest.hold(server, 60, () -> order.add("held"));
        long before = server.callerRuns();
        Runnable small = put("small", ranOn);
        server.executeSnapshot(changing(1, false), () -> {
            order.add("small");
            small.run();
        });
        assertThat(order).as("not run while the serving thread works").isEmpty();
        release.countDown();
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(order).containsExactly("held", "small");
        assertThat(ranOn.get().getName()).isEqualTo("meshbridge-callers");
        assertThat(server.callerRuns()).isEqualTo(before);
        assertThat(value(client.next())).isEqualTo("a=small");
    }

    @Test
    void snapshotsHandedAsFastAsTheProducerCan_whileStreamsAck_leaveEveryStreamWithTheLastValue() throws Exception {
        int changes = 2_000;
        List<AdsTestClient> sotw = new ArrayList<>();
        List<AdsTestClient> delta = new ArrayList<>();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        server.execute(put("0", ranOn));
        for (int i = 0; i < 10; i++) {
            sotw.add(sotwClient("s" + i));
            AdsTestClient d = new AdsTestClient(
                            server.port(), Node.newBuilder().setId("d" + i).build())
                    .openDelta();
            clients.add(d);
            d.deltaSubscribe(THING.typeUrl(), List.of("a"), java.util.Map.of());
            delta.add(d);
        }
        // each client ACKs every response on its own thread while the producer hands the changes
        List<Thread> ackers = new ArrayList<>();
        List<AtomicReference<String>> last = new ArrayList<>();
        List<AtomicReference<Throwable>> failed = new ArrayList<>();
        for (AdsTestClient c : sotw) {
            ackers.add(acker(changes, last, failed, () -> {
                DiscoveryResponse r = c.next();
                c.ack(r, List.of());
                return value(r);
            }));
        }
        for (AdsTestClient c : delta) {
            ackers.add(acker(changes, last, failed, () -> {
                DeltaDiscoveryResponse r = c.nextDelta();
                c.deltaAck(r);
                return value(r);
            }));
        }
        long before = server.callerRuns();
        for (int i = 1; i <= changes; i++) {
            // every tenth change waits for a moment when the serving thread is idle, so both ways are taken while the
            // clients' ACKs arrive
            if (i % 10 == 0) awaitIdle();
            server.executeSnapshot(changing(1, false), put(Integer.toString(i), ranOn));
        }
        for (Thread t : ackers) t.join(TimeUnit.SECONDS.toMillis(AdsTestClient.WAIT_SECONDS * 2L));
        for (int i = 0; i < last.size(); i++) {
            assertThat(failed.get(i).get()).as("client %d's stream", i).isNull();
            assertThat(last.get(i).get()).as("client %d's last value", i).isEqualTo("a=" + changes);
        }
        // both ways were taken: some changes found the serving thread idle, others found it sending or reading ACKs
        assertThat(server.callerRuns() - before).isBetween(1L, (long) changes - 1);
        assertThat(meters.counter("meshbridge.callers.snapshots.caller.runs").count())
                .isEqualTo((double) server.callerRuns());
        assertThat(meters.counter("meshbridge.callers.tasks.failed").count())
                .as("no serving task failed (two tasks run at once on the engine's state would break it)")
                .isZero();
    }
}
