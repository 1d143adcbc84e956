package dev.meshbridge.xds;

import static dev.meshbridge.xds.IngressTables.DUBBO;
import static dev.meshbridge.xds.IngressTables.HTTP;
import static dev.meshbridge.xds.IngressTables.TRI;
import static dev.meshbridge.xds.IngressTables.contribution;
import static dev.meshbridge.xds.IngressTables.defaultBackend;
import static dev.meshbridge.xds.IngressTables.ref;
import static dev.meshbridge.xds.IngressTables.registry;
import static dev.meshbridge.xds.IngressTables.rewritten;
import static dev.meshbridge.xds.IngressTables.route;
import static dev.meshbridge.xds.IngressTables.routeLines;
import static dev.meshbridge.xds.IngressTables.service;
import static dev.meshbridge.xds.IngressTables.subset;
import static dev.meshbridge.xds.IngressTables.tls;
import static dev.meshbridge.xds.IngressTables.unpack;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.PathRewrite;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** What an Envoy gets for Ingress routes, rule by rule, and that it would take all of it. */
class EnvoyIngressTranslatorTest {

    private static final IngressRef SHOP = ref("shop", "shop", 0);

    private final EnvoyTranslator base = new EnvoyTranslator();
    private final Map<String, ServiceResources> catalog = new TreeMap<>();
    private EnvoyIngressTranslator translator = new EnvoyIngressTranslator(base, XdsOptions.Ingress.DEFAULTS);

    private void catalogService(String host, ServicePort... ports) {
        List<ServicePort> ps = List.of(ports);
        Endpoint.Builder e = Endpoint.builder("10.0.0." + (catalog.size() + 1)).label("version", "v1");
        for (ServicePort p : ps) e.port(p.name(), 9000 + p.number() % 1000);
        MeshService s = new MeshService(
                host,
                ps,
                List.of(e.build()),
                new TreeMap<>(),
                new TreeSet<>(List.of(ServiceKey.of("zookeeper", "zk1", host))),
                Hash64.toHex(Hash64.of(host + ps)));
        catalog.put(host, base.translate(s));
    }

    private IngressResources translate(IngressRoutes... contributions) {
        return translate(RouteTable.merge(List.of(contributions)));
    }

    private IngressResources translate(RouteTable table) {
        IngressResources r = translator.translate(
                table, h -> catalog.containsKey(h) ? EnvoyTranslator.servedPorts(catalog.get(h)) : null);
        assertThat(EnvoyConfigCheck.check(everything(r)))
                .as("what Envoy would refuse or could not route with")
                .isEmpty();
        return r;
    }

    /** The services' resources and the Ingress's, as an Envoy subscribed to all of them holds them. */
    private Map<XdsType, Map<String, Any>> everything(IngressResources r) {
        Map<XdsType, Map<String, Any>> all = new EnumMap<>(XdsType.class);
        for (XdsType t : XdsType.values()) all.put(t, new TreeMap<>());
        for (ServiceResources s : catalog.values()) {
            for (XdsResource x : s.resources()) {
                if (x.wildcard()) all.get(x.type()).put(x.name(), x.any());
            }
        }
        for (XdsResource x : r.resources()) all.get(x.type()).put(x.name(), x.any());
        return all;
    }

    private static RouteConfiguration routes(IngressResources r) {
        return unpack(r.find(XdsType.ROUTE, XdsNames.INGRESS_ROUTE).any(), RouteConfiguration.class);
    }

    private static List<String> clusters(IngressResources r) {
        List<String> out = new ArrayList<>();
        for (XdsResource x : r.resources()) {
            if (x.type() == XdsType.CLUSTER) out.add(IngressTables.clusterLine(unpack(x.any(), Cluster.class)));
        }
        return out;
    }

    private static List<String> listeners(IngressResources r) {
        List<String> out = new ArrayList<>();
        for (XdsResource x : r.resources()) {
            if (x.type() == XdsType.LISTENER) out.add(IngressTables.listenerLine(unpack(x.any(), Listener.class)));
        }
        return out;
    }

    @Test
    void routes_exactFirstThenLongerPrefixesFirst_defaultBackendLastInEveryVirtualHost() {
        catalogService("orders.dubbo", TRI);
        catalogService("web.dubbo", TRI);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(
                        route(SHOP, "shop.example.com", PathType.PREFIX, "/", registry("web.dubbo", 100)),
                        route(SHOP, "shop.example.com", PathType.PREFIX, "/orders", registry("orders.dubbo", 100)),
                        route(SHOP, "shop.example.com", PathType.EXACT, "/orders", registry("orders.dubbo", 100)),
                        route(SHOP, "shop.example.com", PathType.PREFIX, "/orders/items", registry("web.dubbo", 100)),
                        route(SHOP, "api.example.com", PathType.PREFIX, "/v1", registry("orders.dubbo", 100))),
                defaultBackend(SHOP, registry("web.dubbo", 100))));

        assertThat(routeLines(routes(r)))
                .containsExactly(
                        "api.example.com sep=/v1 -> outbound|50051||orders.dubbo",
                        "api.example.com prefix=/ -> outbound|50051||web.dubbo",
                        "shop.example.com path=/orders -> outbound|50051||orders.dubbo",
                        "shop.example.com sep=/orders/items -> outbound|50051||web.dubbo",
                        "shop.example.com sep=/orders -> outbound|50051||orders.dubbo",
                        // the host's own "/" takes everything: the default backend would never be reached
                        "shop.example.com prefix=/ -> outbound|50051||web.dubbo",
                        "* prefix=/ -> outbound|50051||web.dubbo");
        RouteConfiguration rc = routes(r);
        assertThat(rc.getVirtualHostsList())
                .extracting(vh -> vh.getName() + " " + vh.getDomainsList())
                .containsExactly("api.example.com [api.example.com]", "shop.example.com [shop.example.com]", "* [*]");
        // the service clusters are the services' own: no cluster is made for them
        assertThat(clusters(r)).isEmpty();
    }

    @Test
    void hostlessRules_areTheStarVirtualHost_wildcardHostsKept() {
        catalogService("echo.nacos", HTTP);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(
                        route(SHOP, "", PathType.PREFIX, "/echo", registry("echo.nacos", 100)),
                        route(SHOP, "*.example.com", PathType.EXACT, "/ping", registry("echo.nacos", 100))),
                null));

        assertThat(routeLines(routes(r)))
                .containsExactly(
                        "*.example.com path=/ping -> outbound|80||echo.nacos",
                        "* sep=/echo -> outbound|80||echo.nacos");
        assertThat(listeners(r)).containsExactly("0.0.0.0_8080 0.0.0.0:8080 [plain rds=meshbridge_ingress]");
    }

    @Test
    void weightedDestinations_areWeightedClustersOfTheServicesClusters_aPortPicksThatPort() {
        catalogService("orders.dubbo", DUBBO, TRI);
        catalogService("orders-v2.dubbo", TRI);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(
                        route(
                                SHOP,
                                "shop.example.com",
                                PathType.PREFIX,
                                "/orders",
                                registry("orders.dubbo", 90),
                                registry("orders-v2.dubbo", 10)),
                        route(
                                SHOP,
                                "shop.example.com",
                                PathType.PREFIX,
                                "/legacy",
                                registry("orders.dubbo", 20880, 100))),
                null));

        assertThat(routeLines(routes(r)))
                .containsExactly(
                        "shop.example.com sep=/legacy -> outbound|20880||orders.dubbo",
                        // without a port: the service's HTTP-family port (Triple), not its first (dubbo)
                        "shop.example.com sep=/orders -> 90 outbound|50051||orders.dubbo, 10 outbound|50051||orders-v2.dubbo");
    }

    @Test
    void labelSubset_getsASubsetClusterOnTheServicesEndpoints_andAMetadataMatch() {
        catalogService("orders.dubbo", TRI);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(route(
                        SHOP,
                        "shop.example.com",
                        PathType.PREFIX,
                        "/orders",
                        subset("orders.dubbo", 90, "version", "v1"),
                        subset("orders.dubbo", 10, "version", "v2"))),
                null));

        assertThat(routeLines(routes(r)))
                .containsExactly(
                        "shop.example.com sep=/orders -> 90 outbound|50051|version-v1|orders.dubbo{version=v1},"
                                + " 10 outbound|50051|version-v2|orders.dubbo{version=v2}");
        assertThat(clusters(r))
                .containsExactly(
                        "outbound|50051|version-v1|orders.dubbo EDS eds=outbound|50051||orders.dubbo"
                                + " subset-keys=[version]",
                        "outbound|50051|version-v2|orders.dubbo EDS eds=outbound|50051||orders.dubbo"
                                + " subset-keys=[version]");
        Cluster v1 = unpack(
                r.find(XdsType.CLUSTER, "outbound|50051|version-v1|orders.dubbo")
                        .any(),
                Cluster.class);
        assertThat(v1.getLbSubsetConfig().getFallbackPolicy())
                .isEqualTo(Cluster.LbSubsetConfig.LbSubsetFallbackPolicy.NO_FALLBACK);
        assertThat(v1.getTypedExtensionProtocolOptionsMap()).containsKey(EnvoyTranslator.HTTP_PROTOCOL_OPTIONS);
    }

    @Test
    void kubernetesService_isAStrictDnsClusterOnItsClusterLocalHostAndPort() {
        IngressResources r = translate(contribution(
                SHOP,
                List.of(route(SHOP, "shop.example.com", PathType.PREFIX, "/", service("shop", "web", 8080))),
                null));

        assertThat(routeLines(routes(r)))
                .containsExactly("shop.example.com prefix=/ -> outbound|8080||web.shop.svc.cluster.local");
        assertThat(clusters(r))
                .containsExactly(
                        "outbound|8080||web.shop.svc.cluster.local STRICT_DNS web.shop.svc.cluster.local:8080");
        assertThat(r.dependencies()).containsOnlyKeys("web.shop.svc.cluster.local");
    }

    @Test
    void unreachableDestinations_answer503NamingThem_aWeightedShareGoesToTheClusterWithoutEndpoints() {
        catalogService("orders.dubbo", TRI);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(
                        route(SHOP, "shop.example.com", PathType.PREFIX, "/missing", registry("nope.dubbo", 100)),
                        route(SHOP, "shop.example.com", PathType.PREFIX, "/port", registry("orders.dubbo", 9, 100)),
                        route(
                                SHOP,
                                "shop.example.com",
                                PathType.PREFIX,
                                "/named",
                                new dev.meshbridge.core.route.WeightedDestination(
                                        new dev.meshbridge.core.route.RegistryDestination(
                                                "orders.dubbo", 0, "v1", new TreeMap<>()),
                                        100)),
                        route(
                                SHOP,
                                "shop.example.com",
                                PathType.PREFIX,
                                "/byname",
                                new dev.meshbridge.core.route.WeightedDestination(
                                        new dev.meshbridge.core.route.KubernetesServiceDestination(
                                                "shop", "web", "web.shop.svc.cluster.local", 0, "http"),
                                        100)),
                        route(
                                SHOP,
                                "shop.example.com",
                                PathType.PREFIX,
                                "/canary",
                                registry("orders.dubbo", 90),
                                registry("orders-canary.dubbo", 10))),
                null));

        assertThat(routeLines(routes(r)))
                .containsExactly(
                        "shop.example.com sep=/missing -> 503 \"meshbridge: no destination of this route is available:"
                                + " nope.dubbo is not in the catalog\"",
                        "shop.example.com sep=/byname -> 503 \"meshbridge: no destination of this route is available:"
                                + " Service shop/web port 'http' is given by name; Envoy needs its number\"",
                        "shop.example.com sep=/canary -> 90 outbound|50051||orders.dubbo, 10 meshbridge_unavailable",
                        "shop.example.com sep=/named -> 503 \"meshbridge: no destination of this route is available:"
                                + " subset 'v1' of orders.dubbo has no labels here; name the endpoints' labels instead"
                                + " (key=value)\"",
                        "shop.example.com sep=/port -> 503 \"meshbridge: no destination of this route is available:"
                                + " orders.dubbo has no port 9 (it has [50051])\"");
        assertThat(clusters(r)).containsExactly("meshbridge_unavailable STATIC");
        assertThat(r.unavailable())
                .containsExactly(
                        "shop.example.com Prefix /missing of shop/shop: nope.dubbo is not in the catalog",
                        "shop.example.com Prefix /byname of shop/shop: Service shop/web port 'http' is given by name;"
                                + " Envoy needs its number",
                        "shop.example.com Prefix /canary of shop/shop: orders-canary.dubbo is not in the catalog",
                        "shop.example.com Prefix /named of shop/shop: subset 'v1' of orders.dubbo has no labels here;"
                                + " name the endpoints' labels instead (key=value)",
                        "shop.example.com Prefix /port of shop/shop: orders.dubbo has no port 9 (it has [50051])");
        assertThat(r.dependencies()).containsOnlyKeys("nope.dubbo", "orders.dubbo", "orders-canary.dubbo");
    }

    @Test
    void rewrites_prefixReplacesTheMatchedPart_withoutDoubleSlashes_nginxStyleReplacesTheWholePath() {
        catalogService("orders.dubbo", TRI);
        var d = registry("orders.dubbo", 100);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(
                        rewritten(route(SHOP, "a", PathType.PREFIX, "/dubbo", d), PathRewrite.prefix("/api")),
                        rewritten(route(SHOP, "b", PathType.PREFIX, "/dubbo", d), PathRewrite.prefix("/")),
                        rewritten(route(SHOP, "c", PathType.PREFIX, "/", d), PathRewrite.prefix("/api")),
                        rewritten(route(SHOP, "d", PathType.EXACT, "/dubbo", d), PathRewrite.prefix("/api")),
                        rewritten(route(SHOP, "e", PathType.PREFIX, "/v1.0", d), PathRewrite.wholePath("/")),
                        rewritten(route(SHOP, "f", PathType.PREFIX, "/v1.0", d), PathRewrite.prefix("/"))),
                null));

        assertThat(routeLines(routes(r)))
                .containsExactly(
                        "a sep=/dubbo -> outbound|50051||orders.dubbo rewrite prefix /api",
                        "b sep=/dubbo -> outbound|50051||orders.dubbo rewrite regex ^/dubbo/? /",
                        "c prefix=/ -> outbound|50051||orders.dubbo rewrite prefix /api/",
                        "d path=/dubbo -> outbound|50051||orders.dubbo rewrite prefix /api",
                        "e sep=/v1.0 -> outbound|50051||orders.dubbo rewrite regex ^.*$ /",
                        "f sep=/v1.0 -> outbound|50051||orders.dubbo rewrite regex ^/v1\\.0/? /");
    }

    @Test
    void tls_oneChainPerSecretMatchedBySni_certificatesOverSds_hostlessTlsIsTheChainForOtherNames() {
        catalogService("orders.dubbo", TRI);
        IngressRef other = ref("pay", "pay", 1);

        IngressResources r = translate(
                contribution(
                        SHOP,
                        List.of(route(SHOP, "shop.example.com", PathType.PREFIX, "/", registry("orders.dubbo", 100))),
                        null,
                        tls(SHOP, "shop-tls", true, "shop.example.com", "www.example.com"),
                        tls(SHOP, "missing-tls", false, "old.example.com")),
                contribution(other, List.of(), null, tls(other, "wild-tls", true)));

        assertThat(listeners(r))
                .containsExactly(
                        "0.0.0.0_8080 0.0.0.0:8080 [plain rds=meshbridge_ingress]",
                        "0.0.0.0_8443 0.0.0.0:8443"
                                + " [sni=[shop.example.com, www.example.com] sds=kubernetes://shop/shop-tls"
                                + " rds=meshbridge_ingress]"
                                + " [sni=[] sds=kubernetes://pay/wild-tls rds=meshbridge_ingress]");
        XdsResource secret = r.find(XdsType.SECRET, "kubernetes://shop/shop-tls");
        assertThat(secret.wildcard()).as("secrets go to clients that name them").isFalse();
        assertThat(unpack(secret.any(), Secret.class)
                        .getTlsCertificate()
                        .getPrivateKey()
                        .getInlineString())
                .startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(r.resources())
                .filteredOn(x -> x.type() == XdsType.SECRET)
                .extracting(XdsResource::name)
                .containsExactly("kubernetes://pay/wild-tls", "kubernetes://shop/shop-tls");
    }

    @Test
    void portsOption_zeroTurnsAListenerOff_noHttpsPortSendsNoKey() {
        translator = new EnvoyIngressTranslator(base, new XdsOptions.Ingress(true, "0.0.0.0", 80, 0));
        catalogService("orders.dubbo", TRI);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(route(SHOP, "shop.example.com", PathType.PREFIX, "/", registry("orders.dubbo", 100))),
                null,
                tls(SHOP, "shop-tls", true, "shop.example.com")));

        assertThat(listeners(r)).containsExactly("0.0.0.0_80 0.0.0.0:80 [plain rds=meshbridge_ingress]");
        assertThat(r.resources()).noneMatch(x -> x.type() == XdsType.SECRET);
    }

    @Test
    void pathEnvoyWouldRefuse_leftOutAndReported() {
        catalogService("orders.dubbo", TRI);

        IngressResources r = translate(contribution(
                SHOP,
                List.of(
                        route(SHOP, "shop.example.com", PathType.PREFIX, "/a?b", registry("orders.dubbo", 100)),
                        route(SHOP, "shop.example.com", PathType.PREFIX, "/ok", registry("orders.dubbo", 100))),
                null));

        assertThat(routeLines(routes(r))).containsExactly("shop.example.com sep=/ok -> outbound|50051||orders.dubbo");
        assertThat(r.skipped())
                .extracting(ServiceResources.Skipped::item, ServiceResources.Skipped::reason)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(
                        "shop.example.com Prefix /a?b of shop/shop", "invalid-path"));
    }

    @Test
    void sameTableBuiltInAnotherOrder_sameBytesAndVersions() {
        catalogService("orders.dubbo", TRI);
        catalogService("web.dubbo", TRI);
        IngressRef pay = ref("pay", "pay", 5);
        List<HttpRoute> shopRoutes = List.of(
                route(SHOP, "shop.example.com", PathType.PREFIX, "/b", subset("orders.dubbo", 1, "version", "v1")),
                route(SHOP, "shop.example.com", PathType.EXACT, "/a", registry("web.dubbo", 100)),
                route(SHOP, "", PathType.PREFIX, "/", service("shop", "web", 80)));
        List<HttpRoute> payRoutes =
                List.of(route(pay, "pay.example.com", PathType.PREFIX, "/", registry("orders.dubbo", 100)));

        IngressResources a = translate(RouteTable.merge(List.of(
                contribution(SHOP, shopRoutes, null, tls(SHOP, "shop-tls", true, "shop.example.com")),
                contribution(pay, payRoutes, null))));
        IngressResources b = translate(RouteTable.merge(List.of(
                contribution(pay, payRoutes, null),
                contribution(
                        SHOP,
                        List.of(shopRoutes.get(2), shopRoutes.get(0), shopRoutes.get(1)),
                        null,
                        tls(SHOP, "shop-tls", true, "shop.example.com")))));

        EnvoyTranslatorTest.assertSameResources(b.resources(), a.resources());
    }

    @Test
    void emptyTable_givesNothing() {
        IngressResources r = translate(RouteTable.empty());

        assertThat(r.resources()).isEmpty();
        assertThat(r.dependencies()).isEmpty();
    }
}
