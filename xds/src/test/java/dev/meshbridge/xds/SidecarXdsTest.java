package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An Envoy sidecar over ADS (an {@link EnvoyLikeClient}: CDS and LDS wildcard, the rest by the names they give,
 * SotW and Delta): what it holds routes every catalog service by name, passes Envoy's validation rules, and a catalog
 * change re-sends only the route configurations it touches.
 */
class SidecarXdsTest {

    private static final String GREETER = "org.demo.Greeter";
    private static final SidecarOptions SIDECAR =
            new SidecarOptions(true, "127.0.0.1", 15001, List.of(80, 50051), 20880, List.of());

    private final XdsTestBed bed = new XdsTestBed(XdsOptions.loopbackEphemeral().withSidecar(SIDECAR));

    @AfterEach
    void close() {
        bed.close();
    }

    private void catalog() {
        bed.send(
                Upserts.springCloud(
                        "orders",
                        List.of(Upserts.springInstance("10.0.0.1", 8080).build())),
                Upserts.dubboApplication(
                        "shop",
                        List.of(Upserts.dubboAppInstance("10.0.1.1", 50051).build())),
                Upserts.dubboInterface(
                        GREETER,
                        "1.0.0",
                        "",
                        List.of(Upserts.dubboProvider("10.0.2.1", 20880, Map.of())
                                .build())));
    }

    private EnvoyLikeClient synced(boolean delta) {
        EnvoyLikeClient envoy = new EnvoyLikeClient(bed.client("sidecar-1"), delta).start();
        envoy.await(c -> {
            assertThat(c.held(XdsType.LISTENER))
                    .containsOnlyKeys("outbound_15001", "outbound_80", "outbound_50051", "outbound_20880");
            assertThat(c.held(XdsType.ROUTE)).containsOnlyKeys("outbound_15001", "outbound_80", "outbound_50051");
            assertThat(c.held(XdsType.DUBBO_ROUTE)).containsOnlyKeys("outbound_20880");
            assertThat(c.held(XdsType.ENDPOINT)).hasSize(3);
            assertThat(EnvoyConfigCheck.check(c.held())).isEmpty();
        });
        return envoy;
    }

    /** The endpoints a request with this {@code Host} reaches through an HTTP listener's route configuration. */
    private static List<String> reach(EnvoyLikeClient envoy, String routeConfiguration, String host) {
        RouteConfiguration rc = envoy.routeConfiguration(routeConfiguration);
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            if (vh.getDomainsList().contains(host)) {
                String cluster = vh.getRoutes(0).getRoute().getCluster();
                return envoy.endpoints(
                        envoy.cluster(cluster).getEdsClusterConfig().getServiceName());
            }
        }
        return List.of();
    }

    @ParameterizedTest(name = "delta={0}")
    @ValueSource(booleans = {false, true})
    void sidecar_reachesEveryServiceByName_withAConfigurationEnvoyAccepts(boolean delta) {
        catalog();
        EnvoyLikeClient envoy = synced(delta);

        assertThat(reach(envoy, "outbound_15001", "orders.zookeeper")).containsExactly("10.0.0.1:8080");
        assertThat(reach(envoy, "outbound_15001", "orders:80")).containsExactly("10.0.0.1:8080");
        assertThat(reach(envoy, "outbound_15001", "shop.dubbo:50051")).containsExactly("10.0.1.1:50051");
        assertThat(reach(envoy, "outbound_80", "orders")).containsExactly("10.0.0.1:8080");
        assertThat(reach(envoy, "outbound_50051", "shop.dubbo")).containsExactly("10.0.1.1:50051");
        assertThat(reach(envoy, "outbound_80", "shop.dubbo")).isEmpty();

        MultipleRouteConfiguration dubbo = IngressTables.unpack(
                envoy.held(XdsType.DUBBO_ROUTE).get("outbound_20880"), MultipleRouteConfiguration.class);
        String cluster = dubbo.getRouteConfig(0).getRoutes(0).getRoute().getCluster();
        assertThat(dubbo.getRouteConfig(0).getInterface()).isEqualTo(GREETER);
        assertThat(dubbo.getRouteConfig(0).getVersion()).isEqualTo("1.0.0");
        assertThat(envoy.endpoints(cluster)).containsExactly("10.0.2.1:20880");
        // the sidecar's debug view lists them
        assertThat(bed.server.debugView().sidecar().resources()).contains("lds outbound_15001", "drds outbound_20880");
    }

    @ParameterizedTest(name = "delta={0}")
    @ValueSource(booleans = {false, true})
    void catalogChange_resendsOnlyTheRouteConfigurationsItTouches(boolean delta) {
        catalog();
        EnvoyLikeClient envoy = synced(delta);

        // a new HTTP service on port 80: the catch-all and the port-80 route configurations, nothing on 50051
        int mark = envoy.log().size();
        bed.send(Upserts.springCloud(
                "billing", List.of(Upserts.springInstance("10.0.3.1", 8080).build())));
        envoy.await(c -> {
            assertThat(reach(c, "outbound_80", "billing.zookeeper")).containsExactly("10.0.3.1:8080");
            assertThat(reach(c, "outbound_15001", "billing.zookeeper")).containsExactly("10.0.3.1:8080");
        });
        assertThat(resent(envoy, mark, XdsType.ROUTE)).containsExactly("outbound_15001", "outbound_80");
        assertThat(resent(envoy, mark, XdsType.DUBBO_ROUTE)).isEmpty();
        assertThat(resent(envoy, mark, XdsType.LISTENER)).isEmpty();

        // a new Dubbo interface: the Dubbo route configuration only
        mark = envoy.log().size();
        bed.send(Upserts.dubboInterface(
                GREETER,
                "2.0.0",
                "",
                List.of(Upserts.dubboProvider("10.0.2.2", 20880, Map.of()).build())));
        envoy.await(c -> {
            assertThat(IngressTables.unpack(
                                    c.held(XdsType.DUBBO_ROUTE).get("outbound_20880"), MultipleRouteConfiguration.class)
                            .getRouteConfigCount())
                    .isEqualTo(2);
            assertThat(c.endpoints("outbound|20880||org.demo.greeter.v-2-0-0.dubbo"))
                    .containsExactly("10.0.2.2:20880");
        });
        assertThat(resent(envoy, mark, XdsType.DUBBO_ROUTE)).containsExactly("outbound_20880");
        assertThat(resent(envoy, mark, XdsType.ROUTE)).isEmpty();

        // an instance moves: its load assignment only, no route configuration at all
        mark = envoy.log().size();
        bed.send(Upserts.springCloud(
                "orders", List.of(Upserts.springInstance("10.0.0.9", 8080).build())));
        envoy.await(c -> assertThat(reach(c, "outbound_80", "orders")).containsExactly("10.0.0.9:8080"));
        assertThat(resent(envoy, mark, XdsType.ROUTE)).isEmpty();
        assertThat(resent(envoy, mark, XdsType.DUBBO_ROUTE)).isEmpty();
        assertThat(resent(envoy, mark, XdsType.LISTENER)).isEmpty();
        assertThat(resent(envoy, mark, XdsType.ENDPOINT)).containsExactly("outbound|80||orders.zookeeper");

        // a service goes: the route configurations of its ports drop its virtual host; a request for it reaches none
        mark = envoy.log().size();
        bed.send(new dev.meshbridge.core.spi.ServiceRemoval(
                new ServiceKey("zookeeper", Upserts.REGISTRY, "", "", "billing", "")));
        envoy.await(
                c -> assertThat(reach(c, "outbound_80", "billing.zookeeper")).isEmpty());
        assertThat(resent(envoy, mark, XdsType.ROUTE)).containsExactly("outbound_15001", "outbound_80");
        assertThat(EnvoyConfigCheck.check(envoy.held())).isEmpty();
    }

    @Test
    void aServiceWithAnHttpsAndATcpPort_isNotedOnTheDebugPage_notRouted() {
        bed.send(new ServiceUpsert(
                ServiceKey.of("consul", "dc1", "db"),
                "db.dc1.consul",
                List.of(new ServicePort("https", 443, Protocol.HTTPS), new ServicePort("tcp", 5432, Protocol.TCP)),
                List.of(Endpoint.builder("10.0.9.1")
                        .port("https", 443)
                        .port("tcp", 5432)
                        .build())));

        assertThat(bed.server.debugView().sidecar().notes())
                .extracting(SidecarResources.Note::kind)
                .containsExactlyInAnyOrder("https-not-routed", "tcp-not-mapped");
    }

    /** The names of {@code type} carried by the responses received since {@code mark}. */
    private static Set<String> resent(EnvoyLikeClient envoy, int mark, XdsType type) {
        Set<String> out = new TreeSet<>();
        List<EnvoyLikeClient.Received> log = envoy.log();
        for (EnvoyLikeClient.Received r : log.subList(mark, log.size())) {
            if (r.type() == type) out.addAll(r.names());
        }
        return out;
    }
}
