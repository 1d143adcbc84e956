package dev.meshbridge.mcp;

import dev.meshbridge.core.testing.TestCatalog;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 17's pacing figure: the ServiceEntry pushes and bytes one istiod-like client receives during a burst of 1,000
 * instance changes at 10,000 services (x 10 instances), sent at 100 changes per second as a rolling restart would, with
 * pushes paced at the given minimum interval (0: unpaced, every catalog snapshot pushed). The client ACKs each response
 * and keeps nothing. Run with {@code ./mvnw -q -pl mcp-server -am verify -Dgroups=benchmark -DexcludedGroups=none
 * -Dtest=McpPacingBenchmark -Dsurefire.failIfNoSpecifiedTests=false}; the figures go to the test output.
 */
@Tag("benchmark")
class McpPacingBenchmark {

    private static final int CHANGES = 1_000;
    private static final int PER_SECOND = 100;

    @ParameterizedTest
    @ValueSource(longs = {0, 1000, 2000})
    void burstOfChanges_pushesAndBytesToOneIstiod(long intervalMillis) throws Exception {
        String se = McpPushBenchmark.SE;
        try (TestCatalog catalog = new TestCatalog();
                McpServer server = new McpServer(
                        McpOptions.builder()
                                .bindAddress("127.0.0.1")
                                .port(0)
                                .minPushInterval(Duration.ofMillis(intervalMillis))
                                .build(),
                        new SimpleMeterRegistry())) {
            server.start();
            for (int s = 0; s < McpPushBenchmark.SERVICES; s++)
                catalog.aggregator().accept(McpPushBenchmark.service(s, -1));
            catalog.aggregator().subscribe(server).join();
            catalog.aggregator().flushNow().join();
            server.markCatalogReady();
            server.idle().join();

            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                    .usePlaintext()
                    .maxInboundMessageSize(256 * 1024 * 1024)
                    .build();
            AtomicLong pushes = new AtomicLong();
            AtomicLong bytes = new AtomicLong();
            AtomicLong lastAt = new AtomicLong();
            StreamObserver<DiscoveryRequest>[] requests = new StreamObserver[1];
            Node node = Node.newBuilder()
                    .setId("sidecar~10.0.0.1~istiod-bench.istio-system~cluster.local")
                    .build();
            requests[0] = AggregatedDiscoveryServiceGrpc.newStub(channel)
                    .streamAggregatedResources(new StreamObserver<>() {
                        @Override
                        public void onNext(DiscoveryResponse r) {
                            pushes.incrementAndGet();
                            bytes.addAndGet(r.getSerializedSize());
                            lastAt.set(System.nanoTime());
                            synchronized (requests) {
                                requests[0].onNext(DiscoveryRequest.newBuilder()
                                        .setNode(node)
                                        .setTypeUrl(r.getTypeUrl())
                                        .setVersionInfo(r.getVersionInfo())
                                        .setResponseNonce(r.getNonce())
                                        .build());
                            }
                        }

                        @Override
                        public void onError(Throwable t) {}

                        @Override
                        public void onCompleted() {}
                    });
            synchronized (requests) {
                requests[0].onNext(DiscoveryRequest.newBuilder()
                        .setNode(node)
                        .setTypeUrl(se)
                        .build());
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> pushes.get() == 1);
            long firstBytes = bytes.get();
            pushes.set(0);
            bytes.set(0);

            Random random = new Random(17);
            long start = System.nanoTime();
            long step = TimeUnit.SECONDS.toNanos(1) / PER_SECOND;
            for (int k = 0; k < CHANGES; k++) {
                long due = start + k * step;
                long wait = due - System.nanoTime();
                if (wait > 0) LockSupport.parkNanos(wait);
                catalog.aggregator()
                        .accept(McpPushBenchmark.service(random.nextInt(McpPushBenchmark.SERVICES), k % 10));
            }
            long sent = System.nanoTime();
            catalog.aggregator().flushNow().join();
            server.idle().join();
            // the burst is over once no push has come for three intervals (at least 3 s)
            long quiet = TimeUnit.MILLISECONDS.toNanos(Math.max(3000, 3 * intervalMillis));
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofMinutes(10))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> System.nanoTime() - Math.max(lastAt.get(), sent) > quiet);
            long done = lastAt.get();
            System.out.printf(
                    "MCP pacing, minPushInterval %d ms: %d services x %d, one full ServiceEntry response %.1f MB;"
                            + " burst of %d changes at %d/s over %.1f s: %d pushes, %.1f MB to one istiod,"
                            + " last push %.1f s after the last change%n",
                    intervalMillis,
                    McpPushBenchmark.SERVICES,
                    McpPushBenchmark.INSTANCES,
                    firstBytes / 1e6,
                    CHANGES,
                    PER_SECOND,
                    (sent - start) / 1e9,
                    pushes.get(),
                    bytes.get() / 1e6,
                    Math.max(0, done - sent) / 1e9);
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
