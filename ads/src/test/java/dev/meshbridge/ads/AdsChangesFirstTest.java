package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A producer's change does not wait behind the clients' requests already queued on the serving thread, those requests
 * still take effect, and they still move while changes keep coming. A thousand streams answer a response with ACKs and
 * NACKs while the serving thread is held, a change is handed after them, and the change is applied and pushed after at
 * most {@link AdsServer#CLIENT_TURN} of them; then every ACK and NACK of the older response is recorded as for a
 * response that crossed the newer one on the wire, the rejected version is not sent again, and the clients ACK the
 * newer response. And while producer tasks keep coming, a new client's first subscription is still answered. Real
 * gRPC transport, raw ADS streams (Delta and SotW) sharing a few connections.
 */
class AdsChangesFirstTest {

    static final ResourceType THING = AdsDrainTest.THING;
    static final int DELTA = 600;
    static final int SOTW = 400; // together the most clients a debug view lists (AdsEngine.MAX_DEBUG_CLIENTS)
    static final int PER_CONNECTION = 500;

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final List<ManagedChannel> channels = new ArrayList<>();
    AdsServer server;

    @BeforeEach
    void start() throws Exception {
        AdsLimits d = AdsLimits.DEFAULTS;
        AdsLimits limits = new AdsLimits(
                d.maxConnections(),
                PER_CONNECTION,
                d.maxNamesPerSubscription(),
                d.maxNamesPerStream(),
                d.maxSubscribedNames(),
                d.maxUnknownTypesPerStream(),
                d.maxRequestsPerSecond(),
                d.maxInboundMessageSize(),
                d.idleTimeout(),
                d.handshakeTimeout());
        server = new AdsServer(
                        new AdsOptions(
                                "first",
                                "127.0.0.1",
                                0,
                                Duration.ZERO,
                                Duration.ZERO,
                                limits,
                                Duration.ZERO,
                                Duration.ZERO),
                        ResourceTypes.of(List.of(THING)),
                        meters)
                .start();
        server.markReady("test");
        for (int i = 0; i < (DELTA + SOTW + PER_CONNECTION - 1) / PER_CONNECTION; i++) {
            channels.add(NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                    .usePlaintext()
                    .build());
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (ManagedChannel c : channels) c.shutdownNow();
        for (ManagedChannel c : channels) c.awaitTermination(10, TimeUnit.SECONDS);
        server.close();
    }

    /** One raw stream: what it received, and its request observer. */
    static final class Stream<Q, R> {
        final BlockingQueue<R> received = new LinkedBlockingQueue<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        StreamObserver<Q> requests;

        StreamObserver<R> responses() {
            return new StreamObserver<>() {
                @Override
                public void onNext(R value) {
                    received.add(value);
                }

                @Override
                public void onError(Throwable t) {
                    failure.set(t);
                }

                @Override
                public void onCompleted() {}
            };
        }

        R next() throws InterruptedException {
            R r = received.poll(AdsTestClient.WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(r)
                    .as("a response within %s s (stream failure: %s)", AdsTestClient.WAIT_SECONDS, failure.get())
                    .isNotNull();
            return r;
        }
    }

    private void put(String value) {
        server.execute(() ->
                server.engine().applyChange(0, () -> server.engine().put(THING, thing(value))));
    }

    private static AdsDrainTest.Thing thing(String value) {
        return new AdsDrainTest.Thing("a", value);
    }

    private double count(String meter) {
        return meters.counter("meshbridge.first." + meter, "type", "thing").count();
    }

    @Test
    void aChangeHandedWhileThousandsOfAcksAndNacksAreQueued_goesOutFirst_andEveryAckAndNackStillTakesEffect()
            throws Exception {
        put("1");
        server.idle().get(60, TimeUnit.SECONDS);
        String v1 = Hash64.toHex(thing("1").versionHash());
        String v2 = Hash64.toHex(thing("2").versionHash());

        List<Stream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>> deltas = new ArrayList<>();
        List<Stream<DiscoveryRequest, DiscoveryResponse>> sotws = new ArrayList<>();
        for (int i = 0; i < DELTA + SOTW; i++) {
            var stub = AggregatedDiscoveryServiceGrpc.newStub(channels.get(i / PER_CONNECTION));
            Node node = Node.newBuilder().setId("n" + i).build();
            if (i < DELTA) {
                Stream<DeltaDiscoveryRequest, DeltaDiscoveryResponse> s = new Stream<>();
                s.requests = stub.deltaAggregatedResources(s.responses());
                s.requests.onNext(DeltaDiscoveryRequest.newBuilder()
                        .setNode(node)
                        .setTypeUrl(THING.typeUrl())
                        .addResourceNamesSubscribe("a")
                        .build());
                deltas.add(s);
            } else {
                Stream<DiscoveryRequest, DiscoveryResponse> s = new Stream<>();
                s.requests = stub.streamAggregatedResources(s.responses());
                s.requests.onNext(DiscoveryRequest.newBuilder()
                        .setNode(node)
                        .setTypeUrl(THING.typeUrl())
                        .addResourceNames("a")
                        .build());
                sotws.add(s);
            }
        }
        List<DeltaDiscoveryResponse> firstDelta = new ArrayList<>();
        for (var s : deltas) {
            DeltaDiscoveryResponse r = s.next();
            assertThat(r.getResources(0).getVersion()).isEqualTo(v1);
            firstDelta.add(r);
        }
        List<DiscoveryResponse> firstSotw = new ArrayList<>();
        for (var s : sotws) firstSotw.add(s.next());
        server.idle().get(60, TimeUnit.SECONDS);
        double acksBefore = count("acks");
        double nacksBefore = count("nacks");

        // hold the serving thread while every client answers its first response: half the Delta clients NACK it
        CountDownLatch hold = AdsDrainTest.hold(server, 120, () -> {});
        int nacking = DELTA / 2;
        for (int i = 0; i < DELTA; i++) {
            DeltaDiscoveryRequest.Builder b = DeltaDiscoveryRequest.newBuilder()
                    .setTypeUrl(THING.typeUrl())
                    .setResponseNonce(firstDelta.get(i).getNonce());
            if (i < nacking) b.setErrorDetail(com.google.rpc.Status.newBuilder().setMessage("rejected by the test"));
            deltas.get(i).requests.onNext(b.build());
        }
        for (int i = 0; i < SOTW; i++) {
            DiscoveryResponse r = firstSotw.get(i);
            sotws.get(i)
                    .requests
                    .onNext(DiscoveryRequest.newBuilder()
                            .setTypeUrl(THING.typeUrl())
                            .addResourceNames("a")
                            .setVersionInfo(r.getVersionInfo())
                            .setResponseNonce(r.getNonce())
                            .build());
        }
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> server.queued() >= DELTA + SOTW);

        // the change, handed after them: applied and pushed before any of them is handled
        double[] acksWhenApplied = {-1};
        server.execute(() -> acksWhenApplied[0] = count("acks") + count("nacks"));
        put("2");
        hold.countDown();

        for (var s : deltas) {
            DeltaDiscoveryResponse r = s.next();
            assertThat(r.getResources(0).getVersion()).isEqualTo(v2);
            assertThat(AdsFanOutTest.body(r.getResources(0).getResource())).isEqualTo("a=2");
            s.requests.onNext(DeltaDiscoveryRequest.newBuilder()
                    .setTypeUrl(THING.typeUrl())
                    .setResponseNonce(r.getNonce())
                    .build());
        }
        for (var s : sotws) {
            DiscoveryResponse r = s.next();
            assertThat(r.getResourcesList()).extracting(AdsFanOutTest::body).containsExactly("a=2");
            s.requests.onNext(DiscoveryRequest.newBuilder()
                    .setTypeUrl(THING.typeUrl())
                    .addResourceNames("a")
                    .setVersionInfo(r.getVersionInfo())
                    .setResponseNonce(r.getNonce())
                    .build());
        }
        server.idle().get(60, TimeUnit.SECONDS);

        assertThat(acksWhenApplied[0] - (acksBefore + nacksBefore))
                .as(
                        "the change ran after at most %s of the %s queued ACKs and NACKs",
                        AdsServer.CLIENT_TURN, DELTA + SOTW)
                .isLessThanOrEqualTo(AdsServer.CLIENT_TURN);
        // every answer to the first response counted (ACK or NACK), then every ACK of the second
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .until(() -> count("acks") - acksBefore >= (DELTA - nacking) + SOTW + DELTA + SOTW);
        assertThat(count("nacks") - nacksBefore).isEqualTo(nacking);
        List<AdsClientView> clients = server.query(() -> server.engine().clients("", ""));
        assertThat(clients).hasSize(DELTA + SOTW);
        for (AdsClientView c : clients) {
            AdsClientView.TypeStatus t = c.types().get("thing");
            assertThat(t.status()).as(c.nodeId()).isEqualTo("SYNCED");
            assertThat(t.responses()).as(c.nodeId()).isEqualTo(2);
            int n = Integer.parseInt(c.nodeId().substring(1));
            if (n < nacking) {
                assertThat(t.nacks()).as(c.nodeId()).isEqualTo(1);
                assertThat(t.lastNack().error()).isEqualTo("rejected by the test");
                assertThat(t.lastNack().nonce()).isEqualTo(firstDelta.get(n).getNonce());
            } else {
                assertThat(t.nacks()).as(c.nodeId()).isZero();
            }
        }
        for (var s : deltas)
            assertThat(s.received).as("nothing sent again after the NACK").isEmpty();
        for (var s : sotws) assertThat(s.received).isEmpty();
        assertThat(v1).isNotEqualTo(v2);
    }

    @Test
    void aClientsSubscriptionIsAnsweredWhileProducerTasksKeepComing() throws Exception {
        put("1");
        server.idle().get(60, TimeUnit.SECONDS);
        // producer tasks that never let the producers' queue run empty, until the client has been answered (or 120 s)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        long[] ran = {0}; // serving thread only
        Runnable[] flood = {null};
        flood[0] = () -> {
            ran[0]++;
            if (pushes() < 1 && System.nanoTime() < deadline) server.execute(flood[0]);
        };
        double before = pushes();
        assertThat(before).isZero();
        server.execute(flood[0]);
        server.execute(flood[0]);

        Stream<DeltaDiscoveryRequest, DeltaDiscoveryResponse> s = new Stream<>();
        s.requests = AggregatedDiscoveryServiceGrpc.newStub(channels.get(0)).deltaAggregatedResources(s.responses());
        s.requests.onNext(DeltaDiscoveryRequest.newBuilder()
                .setNode(Node.newBuilder().setId("late"))
                .setTypeUrl(THING.typeUrl())
                .addResourceNamesSubscribe("a")
                .build());

        DeltaDiscoveryResponse r = s.next();
        assertThat(AdsFanOutTest.body(r.getResources(0).getResource())).isEqualTo("a=1");
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(server.query(() -> ran[0])).as("the flood was running").isPositive();
    }

    private double pushes() {
        return meters.find("meshbridge.first.pushes").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count)
                .sum();
    }
}
