package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The figures of issue 4: size and time of one full ServiceEntry push with 10,000 services x 10 instances, and how
 * many resources change version when one instance changes (the goal is exactly one). Real server, real aggregator, an
 * istiod-like client on loopback. Run with {@code ./mvnw -q -pl mcp-server -am verify -Dgroups=benchmark
 * -DexcludedGroups=none -Dtest=McpPushBenchmark -Dsurefire.failIfNoSpecifiedTests=false}; figures are printed to the
 * test output ({@code target/surefire-reports/*-output.txt}).
 */
@Tag("benchmark")
class McpPushBenchmark {

    static final int SERVICES = 10_000;
    static final int INSTANCES = 10;
    static final String SE = "networking.istio.io/v1/ServiceEntry";
    static final String WE = "networking.istio.io/v1/WorkloadEntry";

    static ServiceUpsert service(int s, int changedWeightOf) {
        String app = "app-" + s;
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < INSTANCES; i++) {
            endpoints.add(Endpoint.builder("10." + (s / 250) + "." + (s % 250) + "." + (i + 1))
                    .port("dubbo", 20880)
                    .port("tri", 50051)
                    .weight(i == changedWeightOf ? 7 : 100)
                    .label("application", app)
                    .label("release", "3.3.6")
                    .label("env", "prod")
                    .label("version", "v" + (i % 3))
                    .locality(Locality.of("cn-east-1", "cn-east-1" + (char) ('a' + i % 3)))
                    .build());
        }
        return new ServiceUpsert(
                new ServiceKey("zookeeper", "zk1", "", "", app, ""),
                app + ".dubbo",
                List.of(
                        new ServicePort("dubbo", 20880, Protocol.DUBBO),
                        new ServicePort("tri", 50051, Protocol.TRIPLE)),
                endpoints);
    }

    @ParameterizedTest
    @EnumSource(EndpointMode.class)
    void fullPushAndOneInstanceChange(EndpointMode mode) throws Exception {
        try (TestCatalog catalog = new TestCatalog();
                McpServer server = new McpServer(
                        McpOptions.builder()
                                .bindAddress("127.0.0.1")
                                .port(0)
                                .endpointMode(mode)
                                .build(),
                        new SimpleMeterRegistry())) {
            server.start();
            for (int s = 0; s < SERVICES; s++) catalog.aggregator().accept(service(s, -1));
            catalog.aggregator().flushNow().join();

            // 1. the whole catalog arrives in one snapshot: translate and apply it
            long heap0 = usedHeapAfterGc();
            long[] c0 = server.threadCost().join();
            long t0 = System.nanoTime();
            catalog.aggregator().subscribe(server).join();
            server.idle().join();
            long translateWall = System.nanoTime() - t0;
            long[] c1 = server.threadCost().join();
            long retained = usedHeapAfterGc() - heap0;

            // 2. one instance changes, nobody connected: the cost of applying it
            Map<String, String> before = versions(server);
            long[] c1b = server.threadCost().join();
            catalog.aggregator().accept(service(4241, 3));
            catalog.aggregator().flushNow().join();
            server.idle().join();
            long[] c2 = server.threadCost().join();
            Map<String, String> after = versions(server);
            long changed = changedVersions(before, after);

            server.markCatalogReady();
            server.idle().join();
            long[] c3 = server.threadCost().join();
            long t1 = System.nanoTime();
            try (IstiodMcpClient istiod = new IstiodMcpClient(server.port(), IstiodMcpClient.PILOT_TYPES_1_24)) {
                // 3. a full push: istiod connects and subscribes to every type
                istiod.start().awaitSynced();
                long pushWall = System.nanoTime() - t1;
                server.idle().join();
                long[] c4 = server.threadCost().join();
                DiscoveryResponse seFull = istiod.responses(SE).get(0);
                DiscoveryResponse weFull = istiod.responses(WE).get(0);

                // 4. one instance changes with istiod connected: applied and pushed
                Map<String, String> before2 = versions(server);
                long[] c4b = server.threadCost().join();
                String changedType = mode == EndpointMode.INLINE ? SE : WE;
                long t2 = System.nanoTime();
                catalog.aggregator().accept(service(4242, 3));
                org.awaitility.Awaitility.await()
                        .atMost(java.time.Duration.ofSeconds(120))
                        .pollInterval(java.time.Duration.ofMillis(1))
                        .until(() -> istiod.responses(changedType).size() == 2);
                long changeWall = System.nanoTime() - t2;
                server.idle().join();
                long[] c5 = server.threadCost().join();
                long changed2 = changedVersions(before2, versions(server));
                DiscoveryResponse second = istiod.responses(changedType).get(1);

                System.out.printf(
                        "MCP %s mode, %d services x %d instances (%d resources):%n"
                                + "  translate + apply the whole catalog: %s; server state retains about %.0f MB of heap%n"
                                + "  one instance changes (no client): %d resource(s) change version; %s%n"
                                + "  full push to an istiod-like client, all %d types answered: %s;"
                                + " ServiceEntry response %d resources, %.2f MB; WorkloadEntry response %d resources,"
                                + " %.2f MB%n"
                                + "  one instance changes (istiod connected): %d resource(s) change version;"
                                + " apply + SotW push %s; the %s response is %.2f MB%n",
                        mode,
                        SERVICES,
                        INSTANCES,
                        after.size(),
                        cost(c0, c1, translateWall),
                        retained / 1e6,
                        changed,
                        cost(c1b, c2, -1),
                        istiod.types().size(),
                        cost(c3, c4, pushWall),
                        seFull.getResourcesCount(),
                        seFull.getSerializedSize() / 1e6,
                        weFull.getResourcesCount(),
                        weFull.getSerializedSize() / 1e6,
                        changed2,
                        cost(c4b, c5, changeWall),
                        changedType.substring(changedType.lastIndexOf('/') + 1),
                        second.getSerializedSize() / 1e6);
                assertThat(changed).isEqualTo(1);
                assertThat(changed2).isEqualTo(1);
            }
        }
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) System.gc();
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    static String cost(long[] from, long[] to, long wallNanos) {
        return String.format(
                "server thread CPU %.2f ms, allocated %.1f MB%s",
                (to[0] - from[0]) / 1e6,
                (to[1] - from[1]) / 1e6,
                wallNanos < 0 ? "" : String.format(", wall %.0f ms", wallNanos / 1e6));
    }

    static long changedVersions(Map<String, String> before, Map<String, String> after) {
        long n = after.entrySet().stream()
                .filter(e -> !e.getValue().equals(before.get(e.getKey())))
                .count();
        return n + before.keySet().stream().filter(k -> !after.containsKey(k)).count();
    }

    private static Map<String, String> versions(McpServer server) {
        Map<String, String> out = new TreeMap<>();
        for (McpKind kind : McpKind.values()) {
            server.servedVersions(kind).join().forEach((name, v) -> out.put(kind + "/" + name, v));
        }
        return out;
    }
}
