package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.IstiodMcpClient.destinationRule;
import static dev.meshbridge.mcp.IstiodMcpClient.gateway;
import static dev.meshbridge.mcp.IstiodMcpClient.serviceEntry;
import static dev.meshbridge.mcp.IstiodMcpClient.virtualService;
import static dev.meshbridge.mcp.McpServerIstiodTest.DUBBO_AND_TRI;
import static dev.meshbridge.mcp.McpServerIstiodTest.demoApp;
import static dev.meshbridge.mcp.McpServerIstiodTest.orders;
import static dev.meshbridge.mcp.ZookeeperRegistrations.springCloud;
import static dev.meshbridge.mcp.ZookeeperRegistrations.springInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteMatch;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.WeightedDestination;
import dev.meshbridge.mcp.IstiodMcpClient.Config;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kubernetes Ingresses written to a directory, read by the real ingress module, merged into a real aggregator's
 * snapshots and served by the MCP server: the Gateways, VirtualServices and DestinationRules an istiod-like client
 * holds, under Istio 1.24's and 1.23's type URLs.
 */
class McpIngressIstiodTest {

    static final String GW = "networking.istio.io/v1/Gateway";
    static final String VS = "networking.istio.io/v1/VirtualService";
    static final String DR = "networking.istio.io/v1/DestinationRule";
    static final String SE = McpServerIstiodTest.SE;
    static final String NS = McpOptions.Ingress.DEFAULT_NAMESPACE;
    static final String SHOP = "shop.example.com";
    static final String WWW = "www.example.com";

    @TempDir
    Path dir;

    private IngressBed bed;

    @AfterEach
    void tearDown() throws Exception {
        if (bed != null) bed.close();
    }

    static String name(String host) {
        return NS + "/" + IngressRouteTranslator.resourceName(host);
    }

    private static Map<String, String> versions(Map<String, Config> configs) {
        return configs.values().stream()
                .collect(Collectors.toMap(Config::name, c -> c.metadata().getVersion(), (a, b) -> a, TreeMap::new));
    }

    /** The versions istiod holds of the Gateways, VirtualServices and DestinationRules, by type URL. */
    private static Map<String, Map<String, String>> ingressVersions(IstiodMcpClient istiod) {
        istiod.awaitConfigs(GW, c -> c.size() == 2);
        Map<String, Map<String, String>> out = new TreeMap<>();
        for (String type : List.of(GW, VS, DR)) out.put(type, versions(istiod.configs(type)));
        return out;
    }

    private IstiodMcpClient shopServed() throws Exception {
        bed = new IngressBed(dir).register(orders(), demoApp(DUBBO_AND_TRI)).start();
        bed.copy("shop.yaml");
        IstiodMcpClient istiod = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();
        istiod.awaitConfigs(VS, c -> c.size() == 2);
        istiod.awaitConfigs(DR, c -> c.size() == 1);
        return istiod;
    }

    @Test
    void representativeIngresses_istio124_gatewaysVirtualServicesAndDestinationRules() throws Exception {
        IstiodMcpClient istiod = shopServed();

        Map<String, Config> gateways = istiod.awaitConfigs(GW, c -> c.size() == 2);
        assertThat(gateways).containsOnlyKeys(name(SHOP), name(WWW));
        assertThat(gateway(gateways.get(name(SHOP))).getSelectorMap())
                .containsExactly(Map.entry("istio", "ingressgateway"));
        assertThat(IstioRoutes.servers(gateway(gateways.get(name(SHOP)))))
                .containsExactly(
                        "HTTP 80 http [shop.example.com]",
                        "HTTPS 443 https [shop.example.com] SIMPLE kubernetes-gateway://shop/shop-tls");
        assertThat(IstioRoutes.servers(gateway(gateways.get(name(WWW)))))
                .containsExactly(
                        "HTTP 80 http [www.example.com]",
                        "HTTPS 443 https [www.example.com] SIMPLE kubernetes-gateway://shop/www-tls");

        Map<String, Config> vss = istiod.configs(VS);
        assertThat(vss).containsOnlyKeys(name(SHOP), name(WWW));
        assertThat(virtualService(vss.get(name(SHOP))).getHostsList()).containsExactly(SHOP);
        assertThat(virtualService(vss.get(name(SHOP))).getGatewaysList()).containsExactly(name(SHOP));
        assertThat(IstioRoutes.http(virtualService(vss.get(name(SHOP)))))
                .containsExactly(
                        "exact /greet -> demo-provider.dubbo:50051 [shop/greeter]",
                        "exact /orders | prefix /orders/ -> 90 orders.springcloud:80/version-v1, 10"
                                + " orders.springcloud:80/version-v2 [shop/orders]");
        assertThat(IstioRoutes.http(virtualService(vss.get(name(WWW)))))
                .containsExactly(
                        "exact /api | prefix /api/ -> 70 orders.springcloud:80, 30 demo-provider.dubbo:50051 [shop/api]",
                        "prefix / -> web.shop.svc.cluster.local:8080 [shop/web]");

        Map<String, Config> rules = istiod.configs(DR);
        assertThat(rules).containsOnlyKeys(name("orders.springcloud"));
        assertThat(destinationRule(rules.get(name("orders.springcloud"))).getHost())
                .isEqualTo("orders.springcloud");
        assertThat(IstioRoutes.subsets(destinationRule(rules.get(name("orders.springcloud")))))
                .containsExactly("version-v1 {version=v1}", "version-v2 {version=v2}");

        // the hosts the routes name are the ServiceEntry hosts istiod holds
        assertThat(istiod.configs(SE).values())
                .extracting(c -> serviceEntry(c).getHosts(0))
                .contains("orders.springcloud", "demo-provider.dubbo");
        for (Config c : gateways.values()) {
            assertThat(c.metadata().getLabelsMap()).containsEntry("app.kubernetes.io/managed-by", "meshbridge");
            assertThat(c.metadata().hasCreateTime()).isFalse();
        }
        assertThat(istiod.decodeErrors()).isZero();
        Map<String, McpServer.KindView> kinds = bed.debug(Map.of()).resources();
        assertThat(kinds.get("Gateway").count()).isEqualTo(2);
        assertThat(kinds.get("VirtualService").count()).isEqualTo(2);
        assertThat(kinds.get("DestinationRule").count()).isEqualTo(1);
    }

    @Test
    void representativeIngresses_istio123TypeUrls_sameResources() throws Exception {
        IstiodMcpClient istio124 = shopServed();
        IstiodMcpClient istio123 = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_23);
        istio123.awaitSynced();

        for (String kind : List.of("Gateway", "VirtualService", "DestinationRule")) {
            String v1 = "networking.istio.io/v1/" + kind;
            String v1alpha3 = "networking.istio.io/v1alpha3/" + kind;
            List<DiscoveryResponse> latest = istio123.responses(v1alpha3);
            DiscoveryResponse alpha = latest.get(latest.size() - 1);
            List<DiscoveryResponse> current = istio124.responses(v1);
            DiscoveryResponse ga = current.get(current.size() - 1);
            assertThat(alpha.getTypeUrl()).isEqualTo(v1alpha3);
            assertThat(alpha.getResourcesCount()).as(kind).isPositive();
            assertThat(alpha.getResourcesList()).as(kind).isEqualTo(ga.getResourcesList());
            assertThat(istio123.configs(v1alpha3))
                    .as(kind)
                    .containsOnlyKeys(istio124.configs(v1).keySet());
        }
        assertThat(istio123.decodeErrors()).isZero();
    }

    @Test
    void endpointChange_noGatewayVirtualServiceOrDestinationRuleReversioned() throws Exception {
        IstiodMcpClient istiod = shopServed();
        Map<String, Map<String, String>> before = ingressVersions(istiod);
        bed.server.idle().join();
        double gwPushes = bed.pushes(McpKind.GATEWAY);
        double vsPushes = bed.pushes(McpKind.VIRTUAL_SERVICE);
        double drPushes = bed.pushes(McpKind.DESTINATION_RULE);
        int vsResponses = istiod.responses(VS).size();

        // one more Spring Cloud instance of the service the routes and the DestinationRule name, then one less
        bed.register(orders(springInstance("orders", "a3", "10.0.0.33", 8080, "\"version\":\"v2\"")));
        istiod.awaitConfigs(
                SE,
                c -> c.containsKey("meshbridge/orders.springcloud")
                        && serviceEntry(c.get("meshbridge/orders.springcloud")).getEndpointsCount() == 3);
        bed.register(orders());
        istiod.awaitConfigs(
                SE, c -> serviceEntry(c.get("meshbridge/orders.springcloud")).getEndpointsCount() == 2);
        bed.server.idle().join();

        assertThat(bed.pushes(McpKind.GATEWAY)).isEqualTo(gwPushes);
        assertThat(bed.pushes(McpKind.VIRTUAL_SERVICE)).isEqualTo(vsPushes);
        assertThat(bed.pushes(McpKind.DESTINATION_RULE)).isEqualTo(drPushes);
        assertThat(bed.server.servedVersions(McpKind.GATEWAY).join()).isEqualTo(before.get(GW));
        assertThat(bed.server.servedVersions(McpKind.VIRTUAL_SERVICE).join()).isEqualTo(before.get(VS));
        assertThat(bed.server.servedVersions(McpKind.DESTINATION_RULE).join()).isEqualTo(before.get(DR));
        assertThat(istiod.responses(VS)).hasSize(vsResponses);
        assertThat(versions(istiod.configs(VS))).isEqualTo(before.get(VS));
    }

    @Test
    void routeChange_reversionsOnlyTheVirtualServiceItTouches() throws Exception {
        IstiodMcpClient istiod = shopServed();
        Map<String, Map<String, String>> before = ingressVersions(istiod);

        bed.write(
                "shop.yaml",
                IngressBed.yaml("shop.yaml")
                        .replace("70% orders", "50% orders")
                        .replace("30% demo-provider", "50% demo-provider"));

        Map<String, Config> changed = istiod.awaitConfigs(
                VS,
                c -> IstioRoutes.http(virtualService(c.get(name(WWW)))).get(0).contains(" 50 "));
        assertThat(IstioRoutes.http(virtualService(changed.get(name(WWW)))))
                .containsExactly(
                        "exact /api | prefix /api/ -> 50 orders.springcloud:80, 50 demo-provider.dubbo:50051 [shop/api]",
                        "prefix / -> web.shop.svc.cluster.local:8080 [shop/web]");
        Map<String, String> now = versions(changed);
        assertThat(now.get(name(SHOP))).isEqualTo(before.get(VS).get(name(SHOP)));
        assertThat(now.get(name(WWW))).isNotEqualTo(before.get(VS).get(name(WWW)));
        assertThat(changed.get(name(WWW)).metadata().hasCreateTime()).isFalse();
        bed.server.idle().join();
        assertThat(bed.server.servedVersions(McpKind.GATEWAY).join()).isEqualTo(before.get(GW));
        assertThat(bed.server.servedVersions(McpKind.DESTINATION_RULE).join()).isEqualTo(before.get(DR));

        // a new host: its own Gateway and VirtualService appear, the others keep their versions
        bed.write("pay.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: pay, namespace: pay}
                spec:
                  rules:
                  - host: pay.example.com
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: pay, port: {number: 80}}}}
                """);
        Map<String, Config> gateways = istiod.awaitConfigs(GW, c -> c.size() == 3);
        assertThat(IstioRoutes.servers(gateway(gateways.get(name("pay.example.com")))))
                .containsExactly("HTTP 80 http [pay.example.com]");
        assertThat(versions(gateways)).containsAllEntriesOf(before.get(GW));
        assertThat(versions(istiod.awaitConfigs(VS, c -> c.size() == 3))).containsAllEntriesOf(now);
    }

    @Test
    void tlsSecretRotated_gatewayUnchanged_removed_httpsServerGoes() throws Exception {
        IstiodMcpClient istiod = shopServed();
        Map<String, String> gw = versions(istiod.awaitConfigs(GW, c -> c.size() == 2));
        String tableVersion = bed.debug(Map.of()).routesVersion();

        // istiod reads the Secret itself: new certificate material changes the route table, not the Gateway
        bed.write("shop.yaml", IngressBed.yaml("shop.yaml").replace("key-www", "key-www-rotated"));
        await().atMost(Duration.ofSeconds(20))
                .until(() -> !bed.debug(Map.of()).routesVersion().equals(tableVersion));
        bed.server.idle().join();
        assertThat(bed.server.servedVersions(McpKind.GATEWAY).join()).isEqualTo(gw);

        // a Secret that is gone leaves its host with plain HTTP (the ingress module reports it)
        String yaml = IngressBed.yaml("shop.yaml");
        String withoutWwwSecret =
                yaml.substring(0, yaml.indexOf("apiVersion: v1\nkind: Secret\nmetadata: {name: www-tls"));
        bed.write("shop.yaml", withoutWwwSecret.substring(0, withoutWwwSecret.lastIndexOf("---")));
        Map<String, Config> gateways =
                istiod.awaitConfigs(GW, c -> gateway(c.get(name(WWW))).getServersCount() == 1);
        assertThat(IstioRoutes.servers(gateway(gateways.get(name(WWW)))))
                .containsExactly("HTTP 80 http [www.example.com]");
        assertThat(gateways.get(name(SHOP)).metadata().getVersion()).isEqualTo(gw.get(name(SHOP)));
    }

    @Test
    void unknownDestinations_answer503_untilTheServiceAppears() throws Exception {
        bed = new IngressBed(dir).register(orders()).start();
        bed.copy("unknown-destination.yaml");
        IstiodMcpClient istiod = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        Map<String, Config> vss = istiod.awaitConfigs(VS, c -> c.size() == 1);
        assertThat(IstioRoutes.http(virtualService(vss.get(name(SHOP)))))
                .containsExactly(
                        "exact /legacy | prefix /legacy/ -> direct 503 \"meshbridge: no destination of this route is"
                                + " available: legacy.springcloud is not in the catalog\" [shop/legacy]",
                        "exact /orders | prefix /orders/ -> orders.springcloud:80 abort 503 20.0% [shop/migrating]");
        assertThat(bed.debug(Map.of()).routesUnavailable())
                .containsExactly(
                        "shop.example.com Prefix /legacy of shop/legacy: legacy.springcloud is not in the catalog",
                        "shop.example.com Prefix /orders of shop/migrating: orders-next.springcloud is not in the"
                                + " catalog");
        assertThat(bed.meters.get("meshbridge.mcp.routes.unavailable").gauge().value())
                .isEqualTo(2);
        String before = vss.get(name(SHOP)).metadata().getVersion();

        bed.register(springCloud(
                "legacy", List.of(springInstance("legacy", "l1", "10.0.0.41", 8080, "\"instance_status\":\"UP\""))));
        vss = istiod.awaitConfigs(
                VS,
                c -> IstioRoutes.http(virtualService(c.get(name(SHOP)))).get(0).contains("legacy.springcloud:80"));
        assertThat(IstioRoutes.http(virtualService(vss.get(name(SHOP)))).get(0))
                .isEqualTo("exact /legacy | prefix /legacy/ -> legacy.springcloud:80 [shop/legacy]");
        assertThat(vss.get(name(SHOP)).metadata().getVersion()).isNotEqualTo(before);
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() ->
                        assertThat(bed.debug(Map.of()).routesUnavailable()).hasSize(1));
    }

    @Test
    void rewriteAnnotations_prefixAndWholePathRewrites() throws Exception {
        bed = new IngressBed(dir).register(orders()).start();
        bed.write("rewrite.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: api
                  namespace: shop
                  annotations: {meshbridge.dev/rewrite-target: /api}
                spec:
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: /orders
                        pathType: Prefix
                        backend: {resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: orders.springcloud}}
                ---
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: spa
                  namespace: shop
                  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /index.html}
                spec:
                  rules:
                  - host: www.example.com
                    http:
                      paths:
                      - path: /app
                        pathType: Prefix
                        backend: {resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: orders.springcloud}}
                """);
        IstiodMcpClient istiod = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        Map<String, Config> vss = istiod.awaitConfigs(VS, c -> c.size() == 2);
        assertThat(IstioRoutes.http(virtualService(vss.get(name(SHOP)))))
                .containsExactly(
                        "exact /orders -> orders.springcloud:80 rewrite /api [shop/api]",
                        "prefix /orders/ -> orders.springcloud:80 rewrite /api/ [shop/api]");
        assertThat(IstioRoutes.http(virtualService(vss.get(name(WWW)))))
                .containsExactly(
                        "exact /app | prefix /app/ -> orders.springcloud:80 rewrite regex ^.*$ /index.html [shop/spa]");
    }

    @Test
    void conflict_olderIngressServed_newerServedOnceTheOlderGoes() throws Exception {
        bed = new IngressBed(dir).register(orders(), demoApp(DUBBO_AND_TRI)).start();
        bed.copy("conflict.yaml");
        IstiodMcpClient istiod = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        Map<String, Config> vss = istiod.awaitConfigs(VS, c -> c.size() == 1);
        assertThat(IstioRoutes.http(virtualService(vss.get(name(SHOP)))))
                .containsExactly("exact /orders | prefix /orders/ -> orders.springcloud:80 [shop/orders-v1]");

        String yaml = IngressBed.yaml("conflict.yaml");
        bed.write("conflict.yaml", yaml.substring(0, yaml.lastIndexOf("---")));
        vss = istiod.awaitConfigs(
                VS,
                c -> IstioRoutes.http(virtualService(c.get(name(SHOP)))).get(0).contains("orders-v2"));
        assertThat(IstioRoutes.http(virtualService(vss.get(name(SHOP)))))
                .containsExactly("exact /orders | prefix /orders/ -> demo-provider.dubbo:50051 [shop/orders-v2]");
    }

    @Test
    void hostIstiodWouldRefuse_notServedAndReported_theOthersServed() throws Exception {
        bed = new IngressBed(null).register(orders()).start();
        IstiodMcpClient istiod = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();
        IngressRef owner = new IngressRef("kubernetes", "shop", "mixed", Instant.parse("2024-05-01T10:00:00Z"));
        List<WeightedDestination> orders =
                List.of(new WeightedDestination(RegistryDestination.of("orders.springcloud"), 100));
        bed.catalog
                .aggregator()
                .setRoutes(RouteTable.merge(List.of(new IngressRoutes(
                        owner,
                        List.of(
                                new HttpRoute(
                                        owner, new RouteMatch("bad_host.example.com", PathType.PREFIX, "/"), orders),
                                new HttpRoute(owner, new RouteMatch(SHOP, PathType.PREFIX, "/"), orders)),
                        Optional.empty(),
                        List.of()))));

        assertThat(istiod.awaitConfigs(VS, c -> c.size() == 1)).containsOnlyKeys(name(SHOP));
        assertThat(istiod.awaitConfigs(GW, c -> c.size() == 1)).containsOnlyKeys(name(SHOP));
        McpServer.DebugView view = bed.debug(Map.of());
        assertThat(view.routesSkipped()).singleElement().satisfies(s -> {
            assertThat(s.host()).isEqualTo("bad_host.example.com");
            assertThat(s.reasons()).anyMatch(r -> r.startsWith("Gateway: servers[0]: host 'bad_host.example.com'"));
        });
        assertThat(bed.meters.get("meshbridge.mcp.routes.skipped").gauge().value())
                .isEqualTo(1);
    }

    @Test
    void ingressOptions_namespaceSelectorAndCredentialForm() throws Exception {
        McpOptions options = McpOptions.builder()
                .revision("canary")
                .ingress(new McpOptions.Ingress(
                        true, "edge", Map.of("app", "edge-gateway"), McpOptions.CredentialForm.NAMESPACE_NAME))
                .build();
        bed = new IngressBed(dir, options)
                .register(orders(), demoApp(DUBBO_AND_TRI))
                .start();
        bed.copy("shop.yaml");
        IstiodMcpClient istiod = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        String shop = "edge/" + IngressRouteTranslator.resourceName(SHOP);
        Map<String, Config> gateways = istiod.awaitConfigs(GW, c -> c.size() == 2);
        assertThat(gateway(gateways.get(shop)).getSelectorMap()).containsExactly(Map.entry("app", "edge-gateway"));
        assertThat(IstioRoutes.servers(gateway(gateways.get(shop))))
                .contains("HTTPS 443 https [shop.example.com] SIMPLE shop/shop-tls");
        assertThat(gateways.get(shop).metadata().getLabelsMap()).containsEntry("istio.io/rev", "canary");
        Map<String, Config> vss = istiod.awaitConfigs(VS, c -> c.size() == 2);
        assertThat(virtualService(vss.get(shop)).getGatewaysList()).containsExactly(shop);
        assertThat(istiod.awaitConfigs(DR, c -> c.size() == 1))
                .allSatisfy((k, v) -> assertThat(k).startsWith("edge/"));
    }
}
