package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteMatch;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.SecretRef;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.TlsMaterial;
import dev.meshbridge.core.route.WeightedDestination;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The figures of issue 8 on the Istio side: the cost of turning 1,000 Ingresses (1,000 hosts with TLS, 10,000 routes,
 * 2,000 registry services) into Gateways, VirtualServices and DestinationRules; of one route change; of one endpoint
 * change (which must re-version none of them); and the size of a full VirtualService push. Real server, real
 * aggregator, an istiod-like client on loopback. Run with {@code ./mvnw -q -pl mcp-server -am verify
 * -Dgroups=benchmark -DexcludedGroups=none -Dtest=IngressRouteBenchmark -Dsurefire.failIfNoSpecifiedTests=false};
 * figures are printed to the test output ({@code target/surefire-reports/*-output.txt}).
 */
@Tag("benchmark")
class IngressRouteBenchmark {

    static final int INGRESSES = 1_000;
    static final int PATHS = 10;
    static final int SERVICES = 2_000;
    static final int INSTANCES = 10;
    static final String VS = "networking.istio.io/v1/VirtualService";

    static ServiceUpsert service(int s, int extraInstances) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < INSTANCES + extraInstances; i++) {
            endpoints.add(Endpoint.builder("10." + (s / 250) + "." + (s % 250) + "." + (i + 1))
                    .port("http", 8080)
                    .label("version", "v" + (i % 2))
                    .build());
        }
        return new ServiceUpsert(
                new ServiceKey("zookeeper", "zk1", "", "", "svc-" + s, ""),
                "svc-" + s + ".springcloud",
                List.of(new ServicePort("http", 80, Protocol.HTTP)),
                endpoints);
    }

    static RouteTable table(int changedIngress) {
        List<IngressRoutes> all = new ArrayList<>();
        TlsMaterial material = new TlsMaterial("-----BEGIN CERTIFICATE-----\n", "-----BEGIN PRIVATE KEY-----\n");
        for (int g = 0; g < INGRESSES; g++) {
            IngressRef owner = new IngressRef("kubernetes", "ns-" + (g % 20), "ing-" + g, Instant.EPOCH.plusSeconds(g));
            String host = "app-" + g + ".example.com";
            List<HttpRoute> routes = new ArrayList<>();
            for (int p = 0; p < PATHS; p++) {
                String service = "svc-" + ((g * PATHS + p) % SERVICES) + ".springcloud";
                List<WeightedDestination> ds = p == 0
                        ? List.of(
                                new WeightedDestination(
                                        new RegistryDestination(
                                                service, 0, "version-v0", new TreeMap<>(Map.of("version", "v0"))),
                                        g == changedIngress ? 80 : 90),
                                new WeightedDestination(
                                        new RegistryDestination(
                                                service, 0, "version-v1", new TreeMap<>(Map.of("version", "v1"))),
                                        g == changedIngress ? 20 : 10))
                        : List.of(new WeightedDestination(RegistryDestination.of(service), 100));
                routes.add(new HttpRoute(owner, new RouteMatch(host, PathType.PREFIX, "/p" + p), ds));
            }
            TlsEntry tls = new TlsEntry(
                    owner, List.of(host), new SecretRef(owner.namespace(), "tls-" + g), Optional.of(material));
            all.add(new IngressRoutes(owner, routes, Optional.empty(), List.of(tls)));
        }
        return RouteTable.merge(all);
    }

    @Test
    void translateApplyAndChange() throws Exception {
        RouteTable table = table(-1);

        // 1. the pure translation, warmed up
        IngressRouteTranslator translator = new IngressRouteTranslator(McpOptions.defaults());
        IngressRouteTranslator.Catalog catalog = new IngressRouteTranslator.Catalog() {
            final List<ServicePort> ports = List.of(new ServicePort("http", 80, Protocol.HTTP));

            @Override
            public List<ServicePort> servedPorts(String host) {
                return ports;
            }

            @Override
            public boolean contains(String host) {
                return true;
            }
        };
        RouteTranslation t = null;
        for (int i = 0; i < 10; i++) t = translator.translate(table, catalog);
        long[] runs = new long[30];
        for (int i = 0; i < runs.length; i++) {
            long t0 = System.nanoTime();
            t = translator.translate(table, catalog);
            runs[i] = System.nanoTime() - t0;
        }
        java.util.Arrays.sort(runs);
        double translateMin = runs[0] / 1e6;
        double translateMedian = runs[runs.length / 2] / 1e6;

        try (TestCatalog aggregator = new TestCatalog();
                McpServer server = new McpServer(
                        McpOptions.builder().bindAddress("127.0.0.1").port(0).build(), new SimpleMeterRegistry())) {
            server.start();
            for (int s = 0; s < SERVICES; s++) aggregator.aggregator().accept(service(s, 0));
            aggregator.aggregator().flushNow().join();
            aggregator.aggregator().subscribe(server).join();
            server.markCatalogReady();
            server.idle().join();

            // 2. the route table arrives: translated and applied on the server's thread
            long[] c0 = server.threadCost().join();
            aggregator.aggregator().setRoutes(table);
            aggregator.aggregator().flushNow().join();
            server.idle().join();
            long[] c1 = server.threadCost().join();
            Map<String, String> v1 = versions(server);

            // 3. one Ingress changes a weight
            aggregator.aggregator().setRoutes(table(417));
            aggregator.aggregator().flushNow().join();
            server.idle().join();
            long[] c2 = server.threadCost().join();
            Map<String, String> v2 = versions(server);

            // 4. one endpoint of a service the routes name changes
            aggregator.aggregator().accept(service(417 * PATHS % SERVICES, 1));
            aggregator.aggregator().flushNow().join();
            server.idle().join();
            long[] c3 = server.threadCost().join();
            Map<String, String> v3 = versions(server);

            // 5. a full push of every type to an istiod-like client
            long t1 = System.nanoTime();
            try (IstiodMcpClient istiod = new IstiodMcpClient(server.port(), IstiodMcpClient.PILOT_TYPES_1_24)) {
                istiod.start().awaitSynced();
                istiod.awaitConfigs(VS, c -> c.size() == INGRESSES);
                long pushWall = System.nanoTime() - t1;
                DiscoveryResponse vs =
                        istiod.responses(VS).get(istiod.responses(VS).size() - 1);

                System.out.printf(
                        "Ingress routes: %d Ingresses, %d hosts with TLS, %d routes, %d registry services x %d"
                                + " instances -> %d Gateways, VirtualServices and DestinationRules%n"
                                + "  pure translation: min %.1f ms, median %.1f ms (30 runs after 10 warm-up runs)%n"
                                + "  route table applied in the server: %s%n"
                                + "  one weight changes: %d resource(s) change version; %s%n"
                                + "  one endpoint changes: %d Ingress resource(s) change version; %s%n"
                                + "  full push of every type to an istiod-like client: wall %.0f ms; VirtualService"
                                + " response %d resources, %.2f MB%n",
                        INGRESSES,
                        INGRESSES,
                        INGRESSES * PATHS,
                        SERVICES,
                        INSTANCES,
                        t.resources().size(),
                        translateMin,
                        translateMedian,
                        cost(c0, c1),
                        changed(v1, v2),
                        cost(c1, c2),
                        changed(v2, v3),
                        cost(c2, c3),
                        pushWall / 1e6,
                        vs.getResourcesCount(),
                        vs.getSerializedSize() / 1e6);
                assertThat(changed(v1, v2)).isEqualTo(1);
                assertThat(changed(v2, v3)).isZero();
            }
        }
    }

    private static String cost(long[] from, long[] to) {
        return McpPushBenchmark.cost(from, to, -1);
    }

    private static long changed(Map<String, String> before, Map<String, String> after) {
        return McpPushBenchmark.changedVersions(before, after);
    }

    private static Map<String, String> versions(McpServer server) {
        Map<String, String> out = new TreeMap<>();
        for (McpKind kind : List.of(McpKind.GATEWAY, McpKind.VIRTUAL_SERVICE, McpKind.DESTINATION_RULE)) {
            server.servedVersions(kind).join().forEach((name, v) -> out.put(kind + "/" + name, v));
        }
        return out;
    }
}
