package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.envoy.validation.EnvoyValidators;
import dev.meshbridge.ingress.IngressController;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The translator's output for one service of each layout, and for a representative set of Ingresses, checked in under
 * {@code src/test/resources/golden/}: every resource as Envoy's JSON form, with its name and version (versions are
 * content hashes, so they are the same on every machine).
 *
 * <p>To regenerate after an intended change: {@code ./mvnw -q -pl xds -am verify -Dtest=GoldenFilesTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dmeshbridge.golden.update=true}, then review the diff.
 */
class GoldenFilesTest {

    private static final Path DIR = Path.of("src/test/resources/golden");
    private static final JsonFormat.Printer JSON = JsonFormat.printer()
            .usingTypeRegistry(JsonFormat.TypeRegistry.newBuilder()
                    .add(List.of(
                            Cluster.getDescriptor(),
                            ClusterLoadAssignment.getDescriptor(),
                            Listener.getDescriptor(),
                            RouteConfiguration.getDescriptor(),
                            HttpConnectionManager.getDescriptor(),
                            Router.getDescriptor(),
                            HttpProtocolOptions.getDescriptor(),
                            io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret.getDescriptor(),
                            io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext
                                    .getDescriptor(),
                            io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector
                                    .getDescriptor(),
                            io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy.getDescriptor(),
                            io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration
                                    .getDescriptor(),
                            io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.router.v3.Router
                                    .getDescriptor()))
                    .build());

    private final TestCatalog catalog = new TestCatalog();
    private final EnvoyTranslator translator = new EnvoyTranslator();

    @AfterEach
    void close() {
        catalog.close();
    }

    @Test
    void dubboInterfaceService() throws Exception {
        Map<String, String> params = Map.of(
                "application", "demo-provider",
                "side", "provider",
                "release", "3.3.6",
                "methods", "sayHello,sayBye",
                "timestamp", "1714550400000",
                "dubbo", "2.0.2");
        check(
                "dubbo-interface",
                Upserts.dubboInterface(
                        "org.demo.Greeter",
                        "1.0.0",
                        "blue",
                        List.of(
                                Upserts.dubboProvider("10.0.0.11", 20880, params)
                                        .locality(Locality.of("cn-hangzhou", "zone-a"))
                                        .build(),
                                Upserts.dubboProvider("10.0.0.12", 20880, Map.of("weight", "200", "side", "provider"))
                                        .locality(Locality.of("cn-hangzhou", "zone-b"))
                                        .build(),
                                Upserts.dubboProvider("10.0.0.13", 20880, Map.of("disabled", "true"))
                                        .build())));
    }

    @Test
    void dubboApplicationService() throws Exception {
        check(
                "dubbo-application",
                Upserts.dubboApplication(
                        "shop",
                        List.of(
                                Upserts.dubboAppInstance("10.0.1.21", 50051).build(),
                                Upserts.dubboAppInstance("10.0.1.22", 50051)
                                        .health(Health.UNHEALTHY)
                                        .build(),
                                Upserts.dubboAppInstance("10.0.1.23", 50051)
                                        .weight(0)
                                        .build(),
                                Upserts.dubboAppInstance("10.0.1.24", 50051)
                                        .weight(50)
                                        .build())));
    }

    @Test
    void springCloudService() throws Exception {
        check(
                "spring-cloud",
                Upserts.springCloud(
                        "orders",
                        List.of(
                                Upserts.springInstance("10.0.2.31", 8080)
                                        .label("zone", "zone-a")
                                        .label("version", "v2")
                                        .locality(Locality.of("eu-west", "zone-a"))
                                        .build(),
                                Upserts.springInstance("10.0.2.32", 8080)
                                        .label("zone", "zone-b")
                                        .label("version", "v1")
                                        .locality(Locality.of("eu-west", "zone-b"))
                                        .build())));
    }

    /**
     * What an Envoy gets for {@code src/test/resources/ingress/shop.yaml} (read by the real directory source) and the
     * services it names: the Ingress's listeners, route configuration, clusters and secret, then the services'
     * clusters and load assignments.
     */
    @Test
    void representativeIngress(@TempDir Path dir) throws Exception {
        for (ServiceUpsert u : IngressBed.shopCatalog()) catalog.aggregator().accept(u);
        Files.writeString(dir.resolve("shop.yaml"), IngressBed.resource("ingress/shop.yaml"));
        RouteTable table;
        try (IngressController controller = new IngressController(
                IngressBed.ingressOptions(dir), null, new SimpleMeterRegistry(), Map.of(), r -> {}, () -> true)) {
            controller.start();
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(20))
                    .until(() -> controller.routes().synced()
                            && controller.routes().current().servedRoutes().size() == 6);
            table = controller.routes().current();
        }
        Map<String, ServiceResources> services = new java.util.TreeMap<>();
        for (ServiceUpsert u : IngressBed.shopCatalog()) {
            // as the server does: the keys the routes select subsets on go under envoy.lb of the hosts they select
            java.util.Set<String> keys = table.subsetLabelKeys().getOrDefault(u.host(), new java.util.TreeSet<>());
            services.put(u.host(), translator.translate(catalog.awaitService(u.host()), null, keys));
        }
        IngressResources ingress = new EnvoyIngressTranslator(translator, XdsOptions.Ingress.DEFAULTS)
                .translate(table, h -> services.containsKey(h) ? EnvoyTranslator.servedPorts(services.get(h)) : null);
        List<XdsResource> all = new java.util.ArrayList<>(ingress.resources());
        for (ServiceResources r : services.values()) {
            for (XdsResource x : r.resources()) {
                if ((x.type() == XdsType.CLUSTER || x.type() == XdsType.ENDPOINT) && x.wildcard()) all.add(x);
            }
        }
        // the services' clusters and load assignments an Ingress route names (the Ingress's own Kubernetes Service
        // clusters are Envoy's alone, checked by EnvoyIngressTranslatorTest)
        for (XdsResource x :
                services.values().stream().flatMap(r -> r.resources().stream()).toList()) {
            if (x.type() == XdsType.CLUSTER)
                assertThat(ConformanceRules.cluster(Cluster.parseFrom(x.any().getValue())))
                        .as(x.name())
                        .isEmpty();
            if (x.type() == XdsType.ENDPOINT)
                assertThat(ConformanceRules.loadAssignment(
                                ClusterLoadAssignment.parseFrom(x.any().getValue())))
                        .as(x.name())
                        .isEmpty();
        }
        compare(
                "ingress-shop",
                render(new ServiceResources("ingress", table.version(), List.of(), all, ingress.skipped())));
    }

    /**
     * What a sidecar gets for the three services above: the outbound HTTP listener and its route configuration, a
     * per-port one for port 80, and the Dubbo listener with its Dubbo routes.
     */
    @Test
    void sidecarListeners() throws Exception {
        List<ServiceUpsert> upserts = List.of(
                Upserts.dubboInterface(
                        "org.demo.Greeter",
                        "1.0.0",
                        "blue",
                        List.of(Upserts.dubboProvider("10.0.0.11", 20880, Map.of())
                                .build())),
                Upserts.dubboApplication(
                        "shop",
                        List.of(Upserts.dubboAppInstance("10.0.1.21", 50051).build())),
                Upserts.springCloud(
                        "orders",
                        List.of(Upserts.springInstance("10.0.2.31", 8080).build())));
        java.util.SortedMap<String, EnvoySidecarTranslator.Entry> entries = new java.util.TreeMap<>();
        for (ServiceUpsert u : upserts) {
            catalog.aggregator().accept(u);
            MeshService s = catalog.awaitService(u.host());
            entries.put(u.host(), EnvoySidecarTranslator.entry(s, translator.translate(s)));
        }
        SidecarResources r = new EnvoySidecarTranslator(
                        translator, new SidecarOptions(true, "0.0.0.0", 15001, List.of(80), 20880, List.of()))
                .translate(entries);
        assertThat(r.notes()).isEmpty();
        compare("sidecar", render(new ServiceResources("sidecar", "", List.of(), r.resources(), List.of())));
    }

    private void check(String name, ServiceUpsert upsert) throws IOException {
        catalog.aggregator().accept(upsert);
        MeshService service = catalog.awaitService(upsert.host());
        ServiceResources r = translator.translate(service);
        compare(name, render(r));
        assertThat(ConformanceRules.proxyless(EnvoyTranslatorTest.asClientHolds(r)))
                .as("what a gRPC client or Envoy would refuse in golden file %s", name)
                .isEmpty();
    }

    private static void compare(String name, String actual) throws IOException {
        Path file = DIR.resolve(name + ".json");
        if (Boolean.getBoolean("meshbridge.golden.update")) {
            Files.createDirectories(DIR);
            Files.writeString(file, actual, StandardCharsets.UTF_8);
        }
        assertThat(file)
                .as("golden file %s (regenerate with -Dmeshbridge.golden.update=true and review the diff)", file)
                .exists();
        assertThat(actual).isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
    }

    /** Renders a golden file; every resource in it must keep Envoy's own validation rules (its generated PGV). */
    static String render(ServiceResources r) throws IOException {
        for (XdsResource x : r.resources()) EnvoyValidators.assertValid(x.type().shortName() + " " + x.name(), x.any());
        StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"host\": \"").append(r.host()).append("\",\n");
        sb.append("  \"skipped\": [");
        for (int i = 0; i < r.skipped().size(); i++) {
            ServiceResources.Skipped s = r.skipped().get(i);
            sb.append(i == 0 ? "\n" : ",\n")
                    .append("    {\"item\": \"")
                    .append(s.item())
                    .append("\", \"reason\": \"")
                    .append(s.reason())
                    .append("\"}");
        }
        sb.append(r.skipped().isEmpty() ? "],\n" : "\n  ],\n");
        sb.append("  \"resources\": [");
        for (int i = 0; i < r.resources().size(); i++) {
            XdsResource x = r.resources().get(i);
            sb.append(i == 0 ? "\n" : ",\n");
            sb.append("    {\n      \"type\": \"").append(x.type().shortName()).append("\",\n");
            sb.append("      \"name\": \"").append(x.name()).append("\",\n");
            sb.append("      \"version\": \"").append(x.version()).append("\",\n");
            sb.append("      \"resource\": ")
                    .append(JSON.print(x.any()).replace("\n", "\n      "))
                    .append("\n    }");
        }
        sb.append("\n  ]\n}\n");
        return sb.toString();
    }
}
