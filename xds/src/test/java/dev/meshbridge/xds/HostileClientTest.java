package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.AdsLimits;
import dev.meshbridge.core.model.Endpoint;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile clients against the real xDS server on loopback (the ADS engine is the MCP server's too). After each attack
 * a well-behaved grpc-java xDS client (grpc-xds) still resolves a service and makes an RPC, and the heap after GC is
 * back within {@link #HEAP_SLACK} of what it was before. Every attack is bounded in count and time. Runs in its own
 * JVM with a small heap (the {@code hostile} surefire execution of this module).
 */
@Tag("hostile")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostileClientTest {

    private static final long HEAP_SLACK = 48L * 1024 * 1024;
    private static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    private static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

    private XdsTestBed bed;
    private final Backends backends = new Backends();
    private final List<ManagedChannel> attackers = new ArrayList<>();
    private final AtomicInteger goodClients = new AtomicInteger();

    @AfterEach
    void close() {
        for (ManagedChannel c : attackers) c.shutdownNow();
        backends.close();
        if (bed != null) bed.close();
    }

    private void start(XdsOptions options) {
        bed = new XdsTestBed(options);
        Backends.Backend shop = backends.start("shop-1");
        bed.send(Upserts.dubboApplication(
                "shop",
                List.of(Upserts.dubboAppInstance("127.0.0.1", shop.port()).build())));
    }

    private void start() {
        start(XdsOptions.loopbackEphemeral());
    }

    // ------------------------------------------------------------------ attacks

    @Test
    void millionsOfDistinctResourceNames_areForgotten_andTheHeapComesBack() {
        start();
        long before = heapAfterGc();
        ManagedChannel ch = attacker();
        // SotW: 30 subscriptions of 50,000 new EDS names each replace one another (1.5 M names)
        Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
        AggregatedDiscoveryServiceGrpc.newStub(ch).streamAggregatedResources(sotw);
        for (int round = 0; round < 30; round++) {
            DiscoveryRequest.Builder r =
                    DiscoveryRequest.newBuilder().setTypeUrl(EDS).setNode(node("names-sotw"));
            for (int i = 0; i < 50_000; i++) r.addResourceNames("outbound|80||n" + round + "-" + i + ".attack");
            sotw.send(r.build());
        }
        // Delta: subscribe 50,000 new names, then unsubscribe them, 10 times (500,000 names)
        Requests<DeltaDiscoveryRequest, DeltaDiscoveryResponse> delta = new Requests<>();
        AggregatedDiscoveryServiceGrpc.newStub(ch).deltaAggregatedResources(delta);
        for (int round = 0; round < 10; round++) {
            DeltaDiscoveryRequest.Builder sub =
                    DeltaDiscoveryRequest.newBuilder().setTypeUrl(EDS).setNode(node("names-delta"));
            DeltaDiscoveryRequest.Builder unsub =
                    DeltaDiscoveryRequest.newBuilder().setTypeUrl(EDS);
            for (int i = 0; i < 50_000; i++) {
                String n = "d" + round + "-" + i + ".attack";
                sub.addResourceNamesSubscribe(n);
                unsub.addResourceNamesUnsubscribe(n);
            }
            delta.send(sub.build());
            delta.send(unsub.build());
        }
        sotw.requests.onCompleted();
        delta.requests.onCompleted();
        awaitServerIdle();
        ch.shutdownNow();

        assertGoodClientServed("millions of names");
        assertHeapBack("millions of names", before);
    }

    @Test
    void aSubscriptionPastTheNameLimit_endsWithResourceExhaustedNamingIt() {
        start(XdsOptions.loopbackEphemeral().withLimits(AdsLimits.DEFAULTS.withNames(1_000, 1_500, 100_000)));
        Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
        AggregatedDiscoveryServiceGrpc.newStub(attacker()).streamAggregatedResources(sotw);
        DiscoveryRequest.Builder r =
                DiscoveryRequest.newBuilder().setTypeUrl(EDS).setNode(node("too-many"));
        for (int i = 0; i < 1_001; i++) r.addResourceNames("outbound|80||n" + i + ".attack");
        sotw.send(r.build());

        Status status = sotw.awaitError();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getDescription()).contains("maxNamesPerSubscription=1000");
        assertThat(bed.counter("meshbridge.xds.limits", "limit", "maxNamesPerSubscription"))
                .isEqualTo(1);
        assertGoodClientServed("name limit");
    }

    @Test
    void namesOverAStreamsTypes_pastThePerStreamLimit_endWithResourceExhaustedNamingIt() {
        start(XdsOptions.loopbackEphemeral().withLimits(AdsLimits.DEFAULTS.withNames(1_000, 1_500, 100_000)));
        Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
        AggregatedDiscoveryServiceGrpc.newStub(attacker()).streamAggregatedResources(sotw);
        sotw.send(names(EDS, "e", 1_000).setNode(node("per-stream")).build());
        sotw.send(names(CDS, "c", 501).build());

        Status status = sotw.awaitError();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getDescription()).contains("maxNamesPerStream=1500").contains("xds.limits.maxNamesPerStream");
        assertThat(bed.counter("meshbridge.xds.limits", "limit", "maxNamesPerStream"))
                .isEqualTo(1);
        assertGoodClientServed("per-stream name limit");
    }

    @Test
    void namesOverTheWholeServer_pastItsLimit_refuseTheStreamThatAsksForMore_othersKeepTheirs() {
        start(XdsOptions.loopbackEphemeral().withLimits(AdsLimits.DEFAULTS.withNames(1_000, 1_000, 2_000)));
        List<Requests<DiscoveryRequest, DiscoveryResponse>> streams = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
            AggregatedDiscoveryServiceGrpc.newStub(attacker()).streamAggregatedResources(sotw);
            sotw.send(
                    names(EDS, "s" + k + "-", 900).setNode(node("server-" + k)).build());
            streams.add(sotw);
            int held = 900 * Math.min(k + 1, 2);
            // the first two hold their 900 names each (EDS names nobody serves get no answer in SotW)
            await().atMost(Duration.ofSeconds(30)).until(() -> bed.gauge("meshbridge.xds.subscribed.names") == held);
        }

        Status status = streams.get(2).awaitError();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getDescription()).contains("maxSubscribedNames=2000");
        assertThat(bed.counter("meshbridge.xds.limits", "limit", "maxSubscribedNames"))
                .isEqualTo(1);
        assertThat(streams.get(0).received).noneMatch(o -> o instanceof Throwable);
        assertThat(streams.get(1).received).noneMatch(o -> o instanceof Throwable);
        assertThat(bed.gauge("meshbridge.xds.subscribed.names")).isEqualTo(1_800);
        // the well-behaved client subscribes to a handful: 1,800 + a few is within 2,000
        assertGoodClientServed("server-wide name limit");
    }

    @Test
    void streamsPastThePerConnectionLimit_areRefusedWithResourceExhaustedNamingIt() {
        start();
        ManagedChannel ch = attacker();
        List<Requests<DiscoveryRequest, DiscoveryResponse>> streams = new ArrayList<>();
        for (int k = 0; k < 16; k++) {
            Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
            AggregatedDiscoveryServiceGrpc.newStub(ch).streamAggregatedResources(sotw);
            sotw.send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(CDS)
                    .setNode(node("conn-" + k))
                    .build());
            sotw.next();
            streams.add(sotw);
        }
        Requests<DiscoveryRequest, DiscoveryResponse> seventeenth = new Requests<>();
        AggregatedDiscoveryServiceGrpc.newStub(ch).streamAggregatedResources(seventeenth);

        Status status = seventeenth.awaitError();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getDescription())
                .contains("maxStreamsPerConnection=16")
                .contains("xds.limits.maxStreamsPerConnection");
        assertThat(bed.counter("meshbridge.xds.limits", "limit", "maxStreamsPerConnection"))
                .isEqualTo(1);
        assertThat(streams).allSatisfy(st -> assertThat(st.received).noneMatch(o -> o instanceof Throwable));
        assertGoodClientServed("per-connection stream limit");
    }

    @Test
    void aRequestPastTheMessageSizeLimit_endsWithResourceExhausted_andIsCounted() {
        AdsLimits d = AdsLimits.DEFAULTS;
        start(XdsOptions.loopbackEphemeral()
                .withLimits(new AdsLimits(
                        d.maxConnections(),
                        d.maxStreamsPerConnection(),
                        d.maxNamesPerSubscription(),
                        d.maxNamesPerStream(),
                        d.maxSubscribedNames(),
                        d.maxUnknownTypesPerStream(),
                        d.maxRequestsPerSecond(),
                        64 * 1024,
                        d.idleTimeout(),
                        d.handshakeTimeout())));
        Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
        AggregatedDiscoveryServiceGrpc.newStub(attacker()).streamAggregatedResources(sotw);
        sotw.send(names(EDS, "big-", 5_000).setNode(node("big")).build());

        Status status = sotw.awaitError();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getDescription()).contains("65536");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> bed.counter("meshbridge.xds.limits", "limit", "maxInboundMessageSize") == 1);
        assertGoodClientServed("message size limit");
    }

    @Test
    void aRequestFlood_isReadNoFasterThanTheRateLimit_andNothingPilesUp() {
        start();
        long before = heapAfterGc();
        ManagedChannel ch = attacker();
        Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
        AggregatedDiscoveryServiceGrpc.newStub(ch).streamAggregatedResources(sotw);
        DiscoveryRequest.Builder a =
                DiscoveryRequest.newBuilder().setTypeUrl(EDS).setNode(node("flood"));
        DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder().setTypeUrl(EDS);
        for (int i = 0; i < 50; i++) {
            a.addResourceNames("outbound|80||a" + i + ".flood");
            b.addResourceNames("outbound|80||b" + i + ".flood");
        }
        DiscoveryRequest[] alternate = {a.build(), b.build()};
        // as fast as the transport takes them: at least 3 seconds, and until the server has slowed its reading down
        // (at most 20 seconds)
        long t0 = System.nanoTime();
        long least = t0 + TimeUnit.SECONDS.toNanos(3);
        long most = t0 + TimeUnit.SECONDS.toNanos(20);
        int sent = 0;
        while (System.nanoTime() < most) {
            if (sotw.call().isReady()) {
                sotw.requests.onNext(alternate[sent++ % 2]);
            } else if (System.nanoTime() > least
                    && bed.counter("meshbridge.xds.limits", "limit", "maxRequestsPerSecond") > 0) {
                break;
            } else {
                Thread.onSpinWait();
            }
        }
        System.out.printf(
                "flood: client wrote %d requests in %d ms%n",
                sent, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        assertThat(bed.counter("meshbridge.xds.limits", "limit", "maxRequestsPerSecond"))
                .isPositive();
        ch.shutdownNow();
        awaitServerIdle();

        assertGoodClientServed("request flood");
        assertHeapBack("request flood", before);
    }

    @Test
    void streamsThatNeverRead_costNoMoreThanTheirPendingChanges() {
        start();
        List<Endpoint> many = new ArrayList<>();
        for (int i = 0; i < 20; i++)
            many.add(Upserts.dubboAppInstance("10.1.0." + (i + 1), 50051).build());
        sendAll(many);
        long before = heapAfterGc();
        for (int k = 0; k < 20; k++) {
            Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>(0);
            AggregatedDiscoveryServiceGrpc.newStub(attacker()).streamAggregatedResources(sotw);
            sotw.send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(CDS)
                    .setNode(node("deaf-" + k))
                    .build());
            List<String> eds = new ArrayList<>();
            for (int s = 0; s < 1_000; s++) eds.add(XdsNames.cluster("svc" + s + ".dubbo", 50051));
            sotw.send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(EDS)
                    .addAllResourceNames(eds)
                    .build());
        }
        // the catalog keeps changing: every service's endpoints, 5 times
        for (int round = 0; round < 5; round++) {
            List<Endpoint> next = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                next.add(Upserts.dubboAppInstance("10.2." + round + "." + (i + 1), 50051)
                        .build());
            }
            sendAll(next);
        }
        awaitServerIdle();

        assertGoodClientServed("streams that never read");
        assertHeapBack("streams that never read", before);
    }

    @Test
    void twoThousandIdleConnections_pastTheLimitAreRefused_andIdleOnesClosed() throws Exception {
        start(XdsOptions.loopbackEphemeral()
                .withLimits(AdsLimits.DEFAULTS
                        .withMaxConnections(1_000)
                        .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(15))));
        long before = heapAfterGc();
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < 2_000; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", bed.server.port()), 5_000);
                s.setSoTimeout(1);
                sockets.add(s);
            }
            // a connection past the limit is closed by the server as soon as it is accepted; the rest once their
            // handshake time is over: every socket sees the end of its stream
            List<Socket> open = new ArrayList<>(sockets);
            await().atMost(Duration.ofSeconds(40))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        open.removeIf(HostileClientTest::closedByPeer);
                        return open.isEmpty();
                    });
            assertThat(bed.counter("meshbridge.xds.limits", "limit", "maxConnections"))
                    .isGreaterThanOrEqualTo(1_000);
        } finally {
            for (Socket s : sockets) s.close();
        }
        // connections that finish the handshake and open no stream are closed after the idle timeout
        List<ManagedChannel> idle = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            ManagedChannel c = attacker();
            c.getState(true);
            idle.add(c);
        }
        await().atMost(Duration.ofSeconds(20))
                .until(() -> idle.stream().allMatch(c -> c.getState(false) == ConnectivityState.READY));
        await().atMost(Duration.ofSeconds(20))
                .until(() -> idle.stream().noneMatch(c -> c.getState(false) == ConnectivityState.READY));
        await().atMost(Duration.ofSeconds(30)).until(() -> bed.gauge("meshbridge.xds.connections") == 0);

        assertGoodClientServed("2,000 idle connections");
        assertHeapBack("2,000 idle connections", before);
    }

    @Test
    void hugeNodesAndNackMessages_onStreamsThatStayOpen_areNotKeptWhole() {
        start();
        long before = heapAfterGc();
        String big = "m".repeat(1_000_000);
        Node node = Node.newBuilder()
                .setId("huge-" + big)
                .setCluster(big)
                .setMetadata(com.google.protobuf.Struct.newBuilder()
                        .putFields(
                                "blob",
                                com.google.protobuf.Value.newBuilder()
                                        .setStringValue(big)
                                        .build()))
                .build();
        List<Requests<DiscoveryRequest, DiscoveryResponse>> open = new ArrayList<>();
        ManagedChannel ch = null;
        for (int k = 0; k < 40; k++) {
            if (k % 10 == 0) ch = attacker();
            Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
            AggregatedDiscoveryServiceGrpc.newStub(ch).streamAggregatedResources(sotw);
            sotw.send(
                    DiscoveryRequest.newBuilder().setTypeUrl(CDS).setNode(node).build());
            DiscoveryResponse r = sotw.next();
            sotw.send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(CDS)
                    .setResponseNonce(r.getNonce())
                    .setErrorDetail(
                            com.google.rpc.Status.newBuilder().setCode(3).setMessage(big))
                    .build());
            open.add(sotw);
        }
        awaitServerIdle();

        // 40 streams, each sent 3 MB of node and 1 MB of NACK message, all still open
        assertThat(open).allSatisfy(st -> assertThat(st.received).noneMatch(o -> o instanceof Throwable));
        assertHeapBack("40 huge nodes and NACKs", before);
        XdsDebugView view = bed.server.debugView();
        assertThat(view.clients())
                .hasSize(40)
                .allSatisfy(c -> assertThat(c.nodeId().length()).isLessThan(1_100));
        assertGoodClientServed("huge nodes");
    }

    @Test
    void newlinesAndControlCharactersInEveryClientString_neverForgeALogLine() {
        start();
        String evil = "x\n[main] WARN dev.meshbridge.FORGED - \r\u001b[31mred\u0000";
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            ManagedChannel ch = attacker();
            Node node = Node.newBuilder()
                    .setId(evil)
                    .setCluster(evil)
                    .setUserAgentName(evil)
                    .setUserAgentVersion(evil)
                    .build();
            Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
            AggregatedDiscoveryServiceGrpc.newStub(ch).streamAggregatedResources(sotw);
            sotw.send(
                    DiscoveryRequest.newBuilder().setTypeUrl(CDS).setNode(node).build());
            DiscoveryResponse r = sotw.next();
            sotw.send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(CDS)
                    .setResponseNonce(r.getNonce())
                    .setErrorDetail(
                            com.google.rpc.Status.newBuilder().setCode(3).setMessage(evil))
                    .build());
            sotw.send(
                    DiscoveryRequest.newBuilder().setTypeUrl(evil).setNode(node).build());
            sotw.send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(EDS)
                    .addResourceNames(evil)
                    .build());
            Requests<DeltaDiscoveryRequest, DeltaDiscoveryResponse> delta = new Requests<>();
            AggregatedDiscoveryServiceGrpc.newStub(ch).deltaAggregatedResources(delta);
            delta.send(DeltaDiscoveryRequest.newBuilder()
                    .setNode(node)
                    .setTypeUrl(evil)
                    .addResourceNamesSubscribe(evil)
                    .build());
            delta.send(DeltaDiscoveryRequest.newBuilder()
                    .setTypeUrl(EDS)
                    .addResourceNamesSubscribe(evil)
                    .putInitialResourceVersions(evil, evil)
                    .build());
            awaitServerIdle();
            ch.shutdownNow();
            awaitServerIdle();
            await().atMost(Duration.ofSeconds(30)).until(() -> bed.gauge("meshbridge.xds.streams") == 0);
        } finally {
            System.setErr(original);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        assertThat(log).contains("NACK").contains("\\u000a[main] WARN dev.meshbridge.FORGED");
        for (String line : log.split("\n", -1)) {
            if (line.contains("FORGED")) {
                assertThat(line)
                        .as("a line carrying client text starts as the logger writes it")
                        .startsWith("[");
                assertThat(line).doesNotContain("\r").doesNotContain("\u001b").doesNotContain("\u0000");
            }
        }
        assertGoodClientServed("control characters");
    }

    @Test
    void tenThousandUnknownTypeUrls_endTheirStreams_andWriteAHandfulOfLines() {
        start();
        long before = heapAfterGc();
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        List<Requests<DiscoveryRequest, DiscoveryResponse>> streams = new ArrayList<>();
        try {
            ManagedChannel ch = attacker();
            for (int s = 0; s < 100; s++) {
                Requests<DiscoveryRequest, DiscoveryResponse> sotw = new Requests<>();
                // per-connection stream limit: 16 streams per connection
                if (s % 10 == 0) ch = attacker();
                AggregatedDiscoveryServiceGrpc.newStub(ch).streamAggregatedResources(sotw);
                streams.add(sotw);
                for (int t = 0; t < 100; t++) {
                    sotw.send(DiscoveryRequest.newBuilder()
                            .setTypeUrl("type.googleapis.com/attack.T" + s + "_" + t)
                            .setNode(node("unknown-" + s))
                            .build());
                }
            }
            for (Requests<DiscoveryRequest, DiscoveryResponse> sotw : streams) {
                Status status = sotw.awaitError();
                assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(status.getDescription()).contains("maxUnknownTypesPerStream=64");
            }
            awaitServerIdle();
        } finally {
            System.setErr(original);
        }
        long lines = captured.toString(StandardCharsets.UTF_8)
                .lines()
                .filter(l -> l.contains("attack.T") || l.contains("maxUnknownTypesPerStream"))
                .count();
        System.out.printf("unknown types: 10,000 type URLs wrote %d log lines%n", lines);
        assertThat(lines).isLessThanOrEqualTo(60);
        assertGoodClientServed("unknown types en masse");
        assertHeapBack("unknown types en masse", before);
    }

    // ------------------------------------------------------------------ helpers

    /** 1,000 services with these endpoints, applied in one go. */
    private void sendAll(List<Endpoint> endpoints) {
        dev.meshbridge.core.spi.RegistryEvent[] events = new dev.meshbridge.core.spi.RegistryEvent[1_000];
        for (int s = 0; s < events.length; s++) events[s] = Upserts.dubboApplication("svc" + s, endpoints);
        bed.send(Duration.ofSeconds(60), events); // 1,000 services at once: bounded generously for a busy machine
    }

    private static DiscoveryRequest.Builder names(String type, String prefix, int n) {
        DiscoveryRequest.Builder r = DiscoveryRequest.newBuilder().setTypeUrl(type);
        for (int i = 0; i < n; i++) r.addResourceNames("outbound|80||" + prefix + i + ".attack");
        return r;
    }

    private ManagedChannel attacker() {
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", bed.server.port())
                .usePlaintext()
                .maxInboundMessageSize(64 * 1024 * 1024)
                .build();
        attackers.add(c);
        return c;
    }

    private static Node node(String id) {
        return Node.newBuilder().setId(id).setCluster("attack").build();
    }

    /** The well-behaved client: grpc-java's xDS resolver finds the service through the bridge and an RPC completes. */
    private void assertGoodClientServed(String after) {
        long t0 = System.nanoTime();
        ManagedChannel channel =
                backends.xdsChannel("shop.dubbo", bed.server.port(), "good-" + goodClients.incrementAndGet());
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(Backends.who(channel)).isEqualTo("shop-1"));
        System.out.printf(
                "after %s: a grpc-java xDS client was served in %d ms%n",
                after, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        channel.shutdownNow();
    }

    private void assertHeapBack(String after, long before) {
        long now = heapAfterGc();
        System.out.printf("after %s: heap after GC %d MB (before the attack %d MB)%n", after, now >> 20, before >> 20);
        assertThat(now).as("heap after GC after " + after).isLessThan(before + HEAP_SLACK);
    }

    private void awaitServerIdle() {
        bed.server.idle().join();
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static boolean closedByPeer(Socket s) {
        try {
            InputStream in = s.getInputStream();
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    /** A raw stream: sends requests when the transport is ready, collects what comes back. */
    private static final class Requests<Q, R> implements ClientResponseObserver<Q, R> {
        private final int initialReads;
        final BlockingQueue<Object> received = new LinkedBlockingQueue<>();
        final AtomicReference<ClientCallStreamObserver<Q>> call = new AtomicReference<>();
        StreamObserver<Q> requests;

        Requests() {
            this(-1);
        }

        /** @param initialReads responses to read, -1 for all; 0 never reads */
        Requests(int initialReads) {
            this.initialReads = initialReads;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
            call.set(requestStream);
            requests = requestStream;
            if (initialReads >= 0) requestStream.disableAutoRequestWithInitial(initialReads);
        }

        ClientCallStreamObserver<Q> call() {
            return call.get();
        }

        /** Sends once the transport can take it (a client that does not buffer without end on its side). */
        void send(Q request) {
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(1))
                    .until(() -> call.get().isReady() || received.stream().anyMatch(o -> o instanceof Throwable));
            call.get().onNext(request);
        }

        @SuppressWarnings("unchecked")
        R next() {
            try {
                Object o = received.poll(30, TimeUnit.SECONDS);
                if (o == null) throw new AssertionError("no response within 30 s");
                if (o instanceof Throwable t) throw new AssertionError("stream failed: " + t, t);
                return (R) o;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }

        Status awaitError() {
            await().atMost(Duration.ofSeconds(20)).until(() -> received.stream().anyMatch(o -> o instanceof Throwable));
            return received.stream()
                    .filter(o -> o instanceof Throwable)
                    .map(o -> Status.fromThrowable((Throwable) o))
                    .findFirst()
                    .orElseThrow();
        }

        @Override
        public void onNext(R value) {
            received.add(value);
        }

        @Override
        public void onError(Throwable t) {
            received.add(t);
        }

        @Override
        public void onCompleted() {}
    }
}
