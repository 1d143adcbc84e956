package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.Destination;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.PathRewrite;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteMatch;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.SecretRef;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.TlsMaterial;
import dev.meshbridge.core.route.WeightedDestination;
import dev.meshbridge.mcp.McpOptions.CredentialForm;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The translation rules from Ingress routes to Gateways, VirtualServices and DestinationRules. */
class IngressRouteTranslatorTest {

    static final IngressRef ORDERS = ingress("orders", "2024-05-01T10:00:00Z");
    static final IngressRef WEB = ingress("web", "2024-05-02T10:00:00Z");
    static final String SHOP = "shop.example.com";
    static final ServicePort HTTP = new ServicePort("http", 80, Protocol.HTTP);
    static final ServicePort DUBBO = new ServicePort("dubbo", 20880, Protocol.DUBBO);
    static final ServicePort TRI = new ServicePort("tri", 50051, Protocol.TRIPLE);

    /** A catalog whose served hosts have these ports, plus hosts that are in it but not served. */
    record FakeCatalog(Map<String, List<ServicePort>> served, Set<String> refused)
            implements IngressRouteTranslator.Catalog {
        @Override
        public List<ServicePort> servedPorts(String host) {
            return served.get(host);
        }

        @Override
        public boolean contains(String host) {
            return served.containsKey(host) || refused.contains(host);
        }
    }

    static final FakeCatalog CATALOG = new FakeCatalog(
            Map.of("orders.springcloud", List.of(HTTP), "demo-provider.dubbo", List.of(DUBBO, TRI)),
            Set.of("broken.dubbo"));

    static IngressRef ingress(String name, String created) {
        return new IngressRef("directory", "shop", name, Instant.parse(created));
    }

    static HttpRoute route(IngressRef owner, String host, PathType type, String path, WeightedDestination... ds) {
        return new HttpRoute(owner, new RouteMatch(host, type, path), List.of(ds));
    }

    /** A route of shop/orders to the whole registry service, with a path rewrite. */
    static HttpRoute rewritten(String host, PathType type, String path, String service, PathRewrite rewrite) {
        return new HttpRoute(
                ORDERS,
                new RouteMatch(host, type, path),
                List.of(to(RegistryDestination.of(service))),
                Optional.of(rewrite));
    }

    static WeightedDestination to(Destination d, int weight) {
        return new WeightedDestination(d, weight);
    }

    static WeightedDestination to(Destination d) {
        return to(d, 100);
    }

    static RegistryDestination subset(String host, String name, String key, String value) {
        return new RegistryDestination(host, 0, name, new TreeMap<>(Map.of(key, value)));
    }

    /** A table with one Prefix route of the Ingress shop/orders on shop.example.com. */
    static RouteTable shopPrefix(String path, WeightedDestination... ds) {
        return table(routes(ORDERS, shopRoute(path, ds)));
    }

    /** A Prefix route of the Ingress shop/orders on shop.example.com. */
    static HttpRoute shopRoute(String path, WeightedDestination... ds) {
        return route(ORDERS, SHOP, PathType.PREFIX, path, ds);
    }

    static RouteTable table(IngressRoutes... contributions) {
        return RouteTable.merge(List.of(contributions));
    }

    static IngressRoutes routes(IngressRef owner, HttpRoute... routes) {
        return new IngressRoutes(owner, List.of(routes), Optional.empty(), List.of());
    }

    static TlsEntry tls(IngressRef owner, String secret, boolean read, String... hosts) {
        return new TlsEntry(
                owner,
                List.of(hosts),
                new SecretRef(owner.namespace(), secret),
                read
                        ? Optional.of(new TlsMaterial("-----BEGIN CERTIFICATE-----\n", "-----BEGIN KEY-----\n"))
                        : Optional.empty());
    }

    static RouteTranslation translate(McpOptions options, RouteTable table) {
        return new IngressRouteTranslator(options).translate(table, CATALOG);
    }

    static RouteTranslation translate(RouteTable table) {
        return translate(McpOptions.defaults(), table);
    }

    static <T extends Message> T body(RouteTranslation t, McpKind kind, String host, Class<T> type)
            throws InvalidProtocolBufferException {
        for (McpResource r : t.resources()) {
            if (r.kind() == kind && r.host().equals(host)) return r.body().unpack(type);
        }
        throw new AssertionError(kind + " for " + host + " not in " + t.resources());
    }

    static List<String> names(RouteTranslation t, McpKind kind) {
        List<String> out = new ArrayList<>();
        for (McpResource r : t.resources()) if (r.kind() == kind) out.add(r.fullName());
        return out;
    }

    @Test
    void translate_hostWithPaths_gatewayAndVirtualServiceInKubernetesOrder() throws Exception {
        RegistryDestination orders = RegistryDestination.of("orders.springcloud");
        RouteTable table = table(routes(
                ORDERS,
                shopRoute("/", to(orders)),
                shopRoute("/orders", to(orders)),
                route(ORDERS, SHOP, PathType.EXACT, "/orders/list", to(orders)),
                shopRoute("/orders/v2", to(orders))));

        RouteTranslation t = translate(table);

        String name = IngressRouteTranslator.resourceName(SHOP);
        assertThat(name).matches("shop-example-com-[0-9a-f]{8}");
        assertThat(names(t, McpKind.GATEWAY)).containsExactly("istio-system/" + name);
        assertThat(names(t, McpKind.VIRTUAL_SERVICE)).containsExactly("istio-system/" + name);
        assertThat(names(t, McpKind.DESTINATION_RULE)).isEmpty();
        assertThat(t.skipped()).isEmpty();
        assertThat(t.unavailable()).isEmpty();
        for (McpResource r : t.resources()) {
            assertThat(r.labels()).containsExactly(Map.entry("app.kubernetes.io/managed-by", "meshbridge"));
        }

        Gateway gw = body(t, McpKind.GATEWAY, SHOP, Gateway.class);
        assertThat(gw.getSelectorMap()).containsExactly(Map.entry("istio", "ingressgateway"));
        assertThat(IstioRoutes.servers(gw)).containsExactly("HTTP 80 http [shop.example.com]");

        VirtualService vs = body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class);
        assertThat(vs.getHostsList()).containsExactly(SHOP);
        assertThat(vs.getGatewaysList()).containsExactly("istio-system/" + name);
        assertThat(IstioRoutes.http(vs))
                .containsExactly(
                        "exact /orders/list -> orders.springcloud:80 [shop/orders]",
                        "exact /orders/v2 | prefix /orders/v2/ -> orders.springcloud:80 [shop/orders]",
                        "exact /orders | prefix /orders/ -> orders.springcloud:80 [shop/orders]",
                        "prefix / -> orders.springcloud:80 [shop/orders]");
        assertThat(t.dependencies()).containsOnlyKeys("orders.springcloud");
    }

    @Test
    void translate_portOfRegistryDestination_numberedOrFirstHttpFamilyPort() throws Exception {
        RouteTable table = table(routes(
                ORDERS,
                route(ORDERS, SHOP, PathType.EXACT, "/any", to(RegistryDestination.of("demo-provider.dubbo"))),
                route(
                        ORDERS,
                        SHOP,
                        PathType.EXACT,
                        "/dubbo",
                        to(RegistryDestination.of("demo-provider.dubbo", 20880)))));

        VirtualService vs = body(translate(table), McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class);

        assertThat(IstioRoutes.http(vs))
                .containsExactly(
                        "exact /any -> demo-provider.dubbo:50051 [shop/orders]",
                        "exact /dubbo -> demo-provider.dubbo:20880 [shop/orders]");
    }

    @Test
    void translate_weightedLabelSubsets_weightsAndOneDestinationRuleWithTheSubsets() throws Exception {
        RouteTable table = table(routes(
                ORDERS,
                shopRoute(
                        "/orders",
                        to(subset("orders.springcloud", "version-v1", "version", "v1"), 90),
                        to(subset("orders.springcloud", "version-v2", "version", "v2"), 10)),
                shopRoute(
                        "/canary",
                        to(subset("orders.springcloud", "version-v2", "version", "v2"), 100),
                        to(new RegistryDestination("orders.springcloud", 0, "gold", new TreeMap<>()), 0))));

        RouteTranslation t = translate(table);

        VirtualService vs = body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class);
        assertThat(IstioRoutes.http(vs))
                .containsExactly(
                        "exact /canary | prefix /canary/ -> orders.springcloud:80/version-v2 [shop/orders]",
                        "exact /orders | prefix /orders/ -> 90 orders.springcloud:80/version-v1, "
                                + "10 orders.springcloud:80/version-v2 [shop/orders]");
        assertThat(names(t, McpKind.DESTINATION_RULE))
                .containsExactly("istio-system/" + IngressRouteTranslator.resourceName("orders.springcloud"));
        DestinationRule dr = body(t, McpKind.DESTINATION_RULE, "orders.springcloud", DestinationRule.class);
        assertThat(dr.getHost()).isEqualTo("orders.springcloud");
        assertThat(IstioRoutes.subsets(dr)).containsExactly("version-v1 {version=v1}", "version-v2 {version=v2}");
    }

    @Test
    void translate_subsetByNameOnly_refersToTheUsersDestinationRule() throws Exception {
        RouteTable table =
                shopPrefix("/", to(new RegistryDestination("orders.springcloud", 0, "gold", new TreeMap<>())));

        RouteTranslation t = translate(table);

        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class)))
                .containsExactly("prefix / -> orders.springcloud:80/gold [shop/orders]");
        assertThat(names(t, McpKind.DESTINATION_RULE)).isEmpty();
    }

    @Test
    void translate_kubernetesService_clusterLocalHostWithItsPortNumber() throws Exception {
        RouteTable table = table(routes(
                WEB,
                route(
                        WEB,
                        SHOP,
                        PathType.PREFIX,
                        "/",
                        to(new KubernetesServiceDestination("shop", "web", "web.shop.svc.cluster.local", 8080, ""))),
                route(
                        WEB,
                        SHOP,
                        PathType.PREFIX,
                        "/static",
                        to(new KubernetesServiceDestination("shop", "cdn", "cdn.shop.svc.cluster.local", 0, "http")))));

        RouteTranslation t = translate(table);

        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class)))
                .containsExactly(
                        "exact /static | prefix /static/ -> cdn.shop.svc.cluster.local [shop/web]",
                        "prefix / -> web.shop.svc.cluster.local:8080 [shop/web]");
        assertThat(t.unavailable()).isEmpty();
        assertThat(t.dependencies()).isEmpty();
    }

    @Test
    void translate_unknownDestination_directResponse503NamingIt() throws Exception {
        RouteTable table = shopPrefix("/legacy", to(RegistryDestination.of("legacy.springcloud")));

        RouteTranslation t = translate(table);

        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class)))
                .containsExactly("exact /legacy | prefix /legacy/ -> direct 503 \"meshbridge: no destination of this"
                        + " route is available: legacy.springcloud is not in the catalog\" [shop/orders]");
        assertThat(t.unavailable())
                .containsExactly(
                        "shop.example.com Prefix /legacy of shop/orders: legacy.springcloud is not in the catalog");
        assertThat(t.dependencies()).containsExactly(Map.entry("legacy.springcloud", 0L));
    }

    @Test
    void translate_someDestinationsMissing_theirShareAborts503AndTheRestKeepsItsWeights() throws Exception {
        RouteTable table = table(routes(
                ORDERS,
                shopRoute(
                        "/a",
                        to(RegistryDestination.of("orders.springcloud"), 70),
                        to(RegistryDestination.of("legacy.springcloud"), 30)),
                shopRoute(
                        "/b",
                        to(RegistryDestination.of("orders.springcloud"), 1),
                        to(RegistryDestination.of("demo-provider.dubbo"), 1),
                        to(RegistryDestination.of("broken.dubbo"), 1)),
                shopRoute(
                        "/c",
                        to(RegistryDestination.of("orders.springcloud", 8080), 50),
                        to(RegistryDestination.of("orders.springcloud", 80), 50))));

        RouteTranslation t = translate(table);

        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class)))
                .containsExactly(
                        "exact /a | prefix /a/ -> orders.springcloud:80 abort 503 30.0% [shop/orders]",
                        "exact /b | prefix /b/ -> 1 orders.springcloud:80, 1 demo-provider.dubbo:50051 abort 503"
                                + " 33.3333% [shop/orders]",
                        "exact /c | prefix /c/ -> orders.springcloud:80 abort 503 50.0% [shop/orders]");
        assertThat(t.unavailable())
                .containsExactly(
                        "shop.example.com Prefix /a of shop/orders: legacy.springcloud is not in the catalog",
                        "shop.example.com Prefix /b of shop/orders: broken.dubbo is in the catalog but not served to"
                                + " istiod (see the skipped services)",
                        "shop.example.com Prefix /c of shop/orders: orders.springcloud has no port 8080 (it has [80])");
    }

    @Test
    void translate_tlsSections_httpsServerForEveryHostTheyCover() throws Exception {
        IngressRoutes web = new IngressRoutes(
                WEB,
                List.of(
                        route(WEB, SHOP, PathType.PREFIX, "/", to(RegistryDestination.of("orders.springcloud"))),
                        route(
                                WEB,
                                "api.example.com",
                                PathType.PREFIX,
                                "/",
                                to(RegistryDestination.of("orders.springcloud"))),
                        route(
                                WEB,
                                "www.other.com",
                                PathType.PREFIX,
                                "/",
                                to(RegistryDestination.of("orders.springcloud"))),
                        route(
                                WEB,
                                "pay.example.com",
                                PathType.PREFIX,
                                "/",
                                to(RegistryDestination.of("orders.springcloud")))),
                Optional.empty(),
                List.of(
                        tls(WEB, "shop-tls", true, SHOP),
                        tls(WEB, "wild-tls", true, "*.example.com"),
                        tls(WEB, "pay-tls", false, "pay.example.com"),
                        tls(WEB, "default-tls", true)));

        RouteTranslation t = translate(table(web));

        assertThat(IstioRoutes.servers(body(t, McpKind.GATEWAY, SHOP, Gateway.class)))
                .containsExactly(
                        "HTTP 80 http [shop.example.com]",
                        "HTTPS 443 https [shop.example.com] SIMPLE kubernetes-gateway://shop/shop-tls");
        assertThat(IstioRoutes.servers(body(t, McpKind.GATEWAY, "api.example.com", Gateway.class)))
                .containsExactly(
                        "HTTP 80 http [api.example.com]",
                        "HTTPS 443 https [api.example.com] SIMPLE kubernetes-gateway://shop/wild-tls");
        // pay-tls was not read: the wildcard one covers the host, as a TLS stack falls back to it
        assertThat(IstioRoutes.servers(body(t, McpKind.GATEWAY, "pay.example.com", Gateway.class)))
                .containsExactly(
                        "HTTP 80 http [pay.example.com]",
                        "HTTPS 443 https [pay.example.com] SIMPLE kubernetes-gateway://shop/wild-tls");
        assertThat(IstioRoutes.servers(body(t, McpKind.GATEWAY, "www.other.com", Gateway.class)))
                .containsExactly(
                        "HTTP 80 http [www.other.com]",
                        "HTTPS 443 https [www.other.com] SIMPLE kubernetes-gateway://shop/default-tls");

        McpOptions.Ingress namespaced =
                new McpOptions.Ingress(true, "gateways", Map.of("app", "edge"), CredentialForm.NAMESPACE_NAME);
        RouteTranslation other =
                translate(McpOptions.builder().ingress(namespaced).build(), table(web));
        Gateway gw = body(other, McpKind.GATEWAY, SHOP, Gateway.class);
        assertThat(gw.getSelectorMap()).containsExactly(Map.entry("app", "edge"));
        assertThat(IstioRoutes.servers(gw)).contains("HTTPS 443 https [shop.example.com] SIMPLE shop/shop-tls");
        assertThat(names(other, McpKind.GATEWAY)).allMatch(n -> n.startsWith("gateways/"));
        VirtualService vs = body(other, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class);
        assertThat(vs.getGatewaysList()).containsExactly("gateways/" + IngressRouteTranslator.resourceName(SHOP));

        RouteTranslation byName = translate(
                McpOptions.builder()
                        .ingress(new McpOptions.Ingress(
                                true, "istio-system", Map.of("istio", "ingressgateway"), CredentialForm.NAME))
                        .build(),
                table(web));
        assertThat(IstioRoutes.servers(body(byName, McpKind.GATEWAY, SHOP, Gateway.class)))
                .contains("HTTPS 443 https [shop.example.com] SIMPLE shop-tls");
    }

    @Test
    void translate_pathRewrites_keepKubernetesElementWiseMeaning() throws Exception {
        RouteTable table = table(routes(
                ORDERS,
                rewritten(SHOP, PathType.PREFIX, "/dubbo", "orders.springcloud", PathRewrite.prefix("/api")),
                rewritten(SHOP, PathType.PREFIX, "/strip", "orders.springcloud", PathRewrite.prefix("/")),
                rewritten(SHOP, PathType.PREFIX, "/app", "orders.springcloud", PathRewrite.wholePath("/index\\x")),
                rewritten(SHOP, PathType.EXACT, "/old", "orders.springcloud", PathRewrite.prefix("/new")),
                rewritten(SHOP, PathType.PREFIX, "/", "orders.springcloud", PathRewrite.prefix("/root")),
                rewritten("gone.example.com", PathType.PREFIX, "/", "legacy.springcloud", PathRewrite.prefix("/x"))));

        RouteTranslation t = translate(table);

        assertThat(t.skipped()).isEmpty();
        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class)))
                .containsExactly(
                        "exact /old -> orders.springcloud:80 rewrite /new [shop/orders]",
                        "exact /dubbo -> orders.springcloud:80 rewrite /api [shop/orders]",
                        "prefix /dubbo/ -> orders.springcloud:80 rewrite /api/ [shop/orders]",
                        "exact /strip -> orders.springcloud:80 rewrite / [shop/orders]",
                        "prefix /strip/ -> orders.springcloud:80 rewrite / [shop/orders]",
                        "exact /app | prefix /app/ -> orders.springcloud:80 rewrite regex ^.*$ /index\\\\x [shop/orders]",
                        "prefix / -> orders.springcloud:80 rewrite /root/ [shop/orders]");
        // a direct response cannot rewrite: istiod would refuse the route
        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, "gone.example.com", VirtualService.class)))
                .singleElement()
                .asString()
                .startsWith("prefix / -> direct 503")
                .doesNotContain("rewrite");
    }

    @Test
    void translate_rulesWithoutHostAndDefaultBackend_anyHostVirtualServiceAndFallbackInEveryHost() throws Exception {
        RegistryDestination orders = RegistryDestination.of("orders.springcloud");
        HttpRoute fallback = new HttpRoute(WEB, IngressRoutes.DEFAULT_BACKEND_MATCH, List.of(to(orders)));
        IngressRoutes web = new IngressRoutes(
                WEB,
                List.of(
                        route(WEB, "", PathType.PREFIX, "/health", to(orders)),
                        route(WEB, SHOP, PathType.PREFIX, "/orders", to(orders)),
                        route(WEB, "all.example.com", PathType.PREFIX, "/", to(orders))),
                Optional.of(fallback),
                List.of());

        RouteTranslation t = translate(table(web));

        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, "*", VirtualService.class)))
                .containsExactly(
                        "exact /health | prefix /health/ -> orders.springcloud:80 [shop/web]",
                        "* -> orders.springcloud:80 [shop/web default backend]");
        assertThat(IstioRoutes.servers(body(t, McpKind.GATEWAY, "*", Gateway.class)))
                .containsExactly("HTTP 80 http [*]");
        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, SHOP, VirtualService.class)))
                .containsExactly(
                        "exact /orders | prefix /orders/ -> orders.springcloud:80 [shop/web]",
                        "* -> orders.springcloud:80 [shop/web default backend]");
        // a catch-all route leaves nothing for the default backend
        assertThat(IstioRoutes.http(body(t, McpKind.VIRTUAL_SERVICE, "all.example.com", VirtualService.class)))
                .containsExactly("prefix / -> orders.springcloud:80 [shop/web]");
        assertThat(names(t, McpKind.VIRTUAL_SERVICE))
                .contains("istio-system/" + IngressRouteTranslator.resourceName(""));
        assertThat(IngressRouteTranslator.resourceName("")).startsWith("any-host-");
    }

    @Test
    void translate_hostIstiodWouldRefuse_skippedWithReasonsAndTheOthersServed() {
        RegistryDestination orders = RegistryDestination.of("orders.springcloud");
        RouteTable table = table(routes(
                ORDERS,
                route(ORDERS, "bad_host.example.com", PathType.PREFIX, "/", to(orders)),
                shopRoute("/", to(orders))));

        RouteTranslation t = translate(table);

        assertThat(t.resources()).extracting(McpResource::host).containsExactly(SHOP, SHOP);
        assertThat(t.skipped()).singleElement().satisfies(s -> {
            assertThat(s.host()).isEqualTo("bad_host.example.com");
            assertThat(s.reasons())
                    .contains("Gateway: servers[0]: host 'bad_host.example.com' has label 'bad_host', which is not"
                            + " lower-case [a-z0-9-] starting and ending alphanumeric");
            assertThat(s.reasons()).anyMatch(r -> r.startsWith("VirtualService: host 'bad_host.example.com'"));
        });
    }

    @Test
    void translate_sameTable_sameBytesAndVersions_revisionLabelWhenConfigured() {
        RouteTable table = shopPrefix("/", to(subset("orders.springcloud", "version-v1", "version", "v1")));

        RouteTranslation a = translate(table);
        RouteTranslation b = translate(table);
        assertThat(b.resources())
                .extracting(McpResource::version)
                .containsExactlyElementsOf(
                        a.resources().stream().map(McpResource::version).toList());
        assertThat(b.resources())
                .extracting(McpResource::body)
                .containsExactlyElementsOf(
                        a.resources().stream().map(McpResource::body).toList());

        RouteTranslation revised =
                translate(McpOptions.builder().revision("canary").build(), table);
        assertThat(revised.resources())
                .hasSize(3)
                .allSatisfy(r -> assertThat(r.labels()).containsEntry("istio.io/rev", "canary"));
    }

    @Test
    void translate_disabledOrEmpty_nothing() {
        RouteTable table = shopPrefix("/", to(RegistryDestination.of("orders.springcloud")));
        McpOptions off = McpOptions.builder()
                .ingress(new McpOptions.Ingress(
                        false, "istio-system", Map.of("istio", "ingressgateway"), CredentialForm.KUBERNETES_GATEWAY))
                .build();

        assertThat(translate(off, table).resources()).isEmpty();
        assertThat(translate(RouteTable.empty()).resources()).isEmpty();
    }

    @Test
    void resourceName_readableUniqueDnsLabel() {
        assertThat(IngressRouteTranslator.resourceName("*.example.com")).startsWith("wildcard-example-com-");
        assertThat(IngressRouteTranslator.resourceName("a-b.c"))
                .isNotEqualTo(IngressRouteTranslator.resourceName("a.b-c"));
        String longHost = "a".repeat(60) + ".example.com";
        assertThat(IngressRouteTranslator.resourceName(longHost))
                .hasSizeLessThanOrEqualTo(63)
                .matches("[a-z0-9-]+");
        assertThat(IngressRouteTranslator.abortPercentage(1, 1_000_000)).isEqualTo(0.0001);
        assertThat(IngressRouteTranslator.abortPercentage(2, 1)).isEqualTo(66.6667);
    }
}
