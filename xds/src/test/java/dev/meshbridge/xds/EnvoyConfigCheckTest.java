package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.DirectResponseAction;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The Envoy-like check used by the Ingress tests finds what Envoy would refuse or could not route with. */
class EnvoyConfigCheckTest {

    private final Map<XdsType, Map<String, Any>> resources = new EnumMap<>(XdsType.class);

    EnvoyConfigCheckTest() {
        for (XdsType t : XdsType.values()) resources.put(t, new TreeMap<>());
    }

    private void add(XdsType type, String name, Message m) {
        resources.get(type).put(name, EnvoyTranslator.pack(m, type.typeUrl()));
    }

    private static Route route(RouteMatch.Builder match, String cluster) {
        return Route.newBuilder()
                .setMatch(match)
                .setRoute(RouteAction.newBuilder().setCluster(cluster))
                .build();
    }

    private static RouteConfiguration routes(Route... routes) {
        return RouteConfiguration.newBuilder()
                .setName("r")
                .addVirtualHosts(VirtualHost.newBuilder()
                        .setName("v")
                        .addDomains("a.example.com")
                        .addAllRoutes(java.util.List.of(routes)))
                .build();
    }

    /** Envoy's generated validators report the first broken rule of each message, with its field. */
    @Test
    void envoyFieldRules_brokenValues_areReportedWithTheirField() {
        add(
                XdsType.ROUTE,
                "prefix",
                RouteConfiguration.newBuilder()
                        .setName("prefix")
                        .addVirtualHosts(VirtualHost.newBuilder()
                                .setName("v")
                                .addDomains("a.example.com")
                                .addRoutes(Route.newBuilder()
                                        .setMatch(RouteMatch.newBuilder().setPathSeparatedPrefix("/a/"))
                                        .setDirectResponse(DirectResponseAction.newBuilder()
                                                .setStatus(200))))
                        .build());
        add(
                XdsType.ROUTE,
                "status",
                RouteConfiguration.newBuilder()
                        .setName("status")
                        .addVirtualHosts(VirtualHost.newBuilder()
                                .setName("v")
                                .addDomains("b.example.com")
                                .addRoutes(Route.newBuilder()
                                        .setMatch(RouteMatch.newBuilder().setPrefix("/"))
                                        .setDirectResponse(DirectResponseAction.newBuilder()
                                                .setStatus(700))))
                        .build());
        add(
                XdsType.ROUTE,
                "empty",
                RouteConfiguration.newBuilder()
                        .setName("empty")
                        .addVirtualHosts(VirtualHost.newBuilder().setName("empty"))
                        .build());

        assertThat(EnvoyConfigCheck.check(resources))
                .containsExactlyInAnyOrder(
                        "rds prefix: RouteConfiguration: .envoy.config.route.v3.RouteMatch.path_separated_prefix: must"
                                + " match pattern ^[^?#]+[^?#/]$ - Got \"/a/\"",
                        "rds status: RouteConfiguration: .envoy.config.route.v3.DirectResponseAction.status: must be"
                                + " in the range [200, 600) - Got 700",
                        "rds empty: RouteConfiguration: .envoy.config.route.v3.VirtualHost.domains: must have at least"
                                + " 1 items - Got []");
    }

    @Test
    void references_missingClusterRouteSecretOrLoadAssignment_areReported() {
        add(XdsType.ROUTE, "r", routes(route(RouteMatch.newBuilder().setPrefix("/"), "nowhere")));
        add(
                XdsType.CLUSTER,
                "eds",
                Cluster.newBuilder()
                        .setName("eds")
                        .setType(Cluster.DiscoveryType.EDS)
                        .setEdsClusterConfig(
                                Cluster.EdsClusterConfig.newBuilder().setEdsConfig(EnvoyTranslator.ADS))
                        .build());
        Listener valid = IngressTables.unpack(
                new EnvoyIngressTranslator(new EnvoyTranslator(), XdsOptions.Ingress.DEFAULTS)
                        .translate(
                                dev.meshbridge.core.route.RouteTable.merge(java.util.List.of(IngressTables.contribution(
                                        IngressTables.ref("ns", "a", 0),
                                        java.util.List.of(),
                                        null,
                                        IngressTables.tls(
                                                IngressTables.ref("ns", "a", 0), "tls", true, "a.example.com")))),
                                h -> null)
                        .find(XdsType.LISTENER, "0.0.0.0_8443")
                        .any(),
                Listener.class);
        add(XdsType.LISTENER, valid.getName(), valid);

        assertThat(EnvoyConfigCheck.check(resources))
                .containsExactlyInAnyOrder(
                        "listener 0.0.0.0_8443 chain kubernetes://ns/tls: route configuration meshbridge_ingress does"
                                + " not exist",
                        "listener 0.0.0.0_8443 chain kubernetes://ns/tls: secret kubernetes://ns/tls does not exist",
                        "route configuration r vhost v route : cluster nowhere does not exist",
                        "cluster eds: load assignment eds does not exist");
    }

    @Test
    void subsetMatch_onKeysTheClusterDoesNotSelect_andDuplicateDomains_areReported() {
        add(
                XdsType.CLUSTER,
                "c",
                Cluster.newBuilder()
                        .setName("c")
                        .setType(Cluster.DiscoveryType.STATIC)
                        .setLoadAssignment(io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.newBuilder()
                                .setClusterName("c"))
                        .build());
        Route withMatch = Route.newBuilder()
                .setMatch(RouteMatch.newBuilder().setPrefix("/"))
                .setRoute(RouteAction.newBuilder()
                        .setCluster("c")
                        .setMetadataMatch(Metadata.newBuilder()
                                .putFilterMetadata(
                                        EnvoyTranslator.LB_METADATA,
                                        Struct.newBuilder()
                                                .putFields("version", EnvoyTranslator.string("v2"))
                                                .build())))
                .build();
        add(
                XdsType.ROUTE,
                "r",
                routes(withMatch).toBuilder()
                        .addVirtualHosts(VirtualHost.newBuilder().setName("w").addDomains("A.example.com"))
                        .build());

        assertThat(EnvoyConfigCheck.check(resources))
                .containsExactlyInAnyOrder(
                        "route configuration r vhost v route : cluster c has no subset selector for [version]",
                        "rds r: r: domain A.example.com is in two virtual hosts");
    }
}
