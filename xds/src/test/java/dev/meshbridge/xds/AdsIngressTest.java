package dev.meshbridge.xds;

import static dev.meshbridge.xds.IngressTables.listenerLine;
import static dev.meshbridge.xds.IngressTables.routeLines;
import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a plain Envoy gets over ADS for Ingress YAML read by the real directory source and merged by the real
 * aggregator: a raw client subscribing as Envoy does (SotW and Delta) checks the listeners, routes, clusters,
 * endpoints and secrets, and that Envoy would take them all.
 */
class AdsIngressTest {

    private static final String ROUTES = XdsNames.INGRESS_ROUTE;
    private static final String ORDERS = "outbound|50051||orders.dubbo";
    private static final String GREETER = "outbound|50051||greeter.dubbo";
    private static final String WEB = "outbound|8080||web.shop.svc.cluster.local";

    @TempDir
    Path dir;

    private IngressBed bed;

    @AfterEach
    void close() {
        if (bed != null) bed.close();
    }

    /** The bridge with the shop's catalog and its representative Ingresses, and an Envoy-like client of it. */
    private EnvoyLikeClient shop(String protocol) {
        bed = new IngressBed(dir);
        bed.send(IngressBed.shopCatalog());
        bed.write("shop.yaml", IngressBed.resource("ingress/shop.yaml"));
        bed.awaitRoutes(6);
        return envoy(protocol);
    }

    private EnvoyLikeClient envoy(String protocol) {
        return new EnvoyLikeClient(bed.xds.client("envoy-" + protocol), protocol.equals("delta")).start();
    }

    private static String routeIngress(String name, String created, String path, String meshHost) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: %s, namespace: shop, creationTimestamp: "%s"}
                spec:
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: %s
                        pathType: Prefix
                        backend:
                          resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: %s}
                """.formatted(name, created, path, meshHost);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sotw", "delta"})
    void representativeIngress_envoyGetsListenersRoutesClustersEndpointsSecret_andWouldTakeThemAll(String protocol) {
        EnvoyLikeClient envoy = shop(protocol);

        envoy.await(c -> {
            assertThat(routeLines(c.routeConfiguration(ROUTES)))
                    .containsExactly(
                            "api.example.com sep=/orders -> 90 outbound|50051|version-v1|orders.dubbo{version=v1},"
                                    + " 10 outbound|50051|version-v2|orders.dubbo{version=v2}",
                            "api.example.com sep=/dubbo -> 80 " + GREETER + ", 20 outbound|50051||greeter-next.dubbo"
                                    + " rewrite regex ^/dubbo/? /",
                            "api.example.com prefix=/ -> " + WEB,
                            "shop.example.com path=/orders -> " + ORDERS,
                            "shop.example.com sep=/orders -> " + ORDERS,
                            "shop.example.com prefix=/ -> " + WEB,
                            "* prefix=/ -> " + WEB);
            assertThat(c.held(XdsType.SECRET)).containsOnlyKeys("kubernetes://shop/shop-tls");
            assertThat(c.endpoints(ORDERS)).containsExactly("10.1.0.1:50051", "10.1.0.2:50051", "10.1.0.3:50051");
            assertThat(c.endpoints(GREETER)).containsExactly("10.2.0.1:50051");
        });

        assertThat(envoy.held(XdsType.LISTENER).keySet().stream()
                        .map(n -> listenerLine(envoy.listener(n)))
                        .toList())
                .containsExactly(
                        "0.0.0.0_8080 0.0.0.0:8080 [plain rds=meshbridge_ingress]",
                        "0.0.0.0_8443 0.0.0.0:8443 [sni=[api.example.com, shop.example.com]"
                                + " sds=kubernetes://shop/shop-tls rds=meshbridge_ingress]");
        assertThat(envoy.held(XdsType.CLUSTER).keySet())
                .containsExactlyInAnyOrder(
                        ORDERS,
                        "outbound|50051|version-v1|orders.dubbo",
                        "outbound|50051|version-v2|orders.dubbo",
                        GREETER,
                        "outbound|50051||greeter-next.dubbo",
                        WEB);
        assertThat(IngressTables.clusterLine(envoy.cluster(WEB)))
                .isEqualTo(WEB + " STRICT_DNS web.shop.svc.cluster.local:8080");
        // the subset clusters take the service's own load assignment: no extra EDS resource
        assertThat(envoy.held(XdsType.ENDPOINT).keySet())
                .containsExactlyInAnyOrder(ORDERS, GREETER, "outbound|50051||greeter-next.dubbo");
        assertThat(EnvoyConfigCheck.check(envoy.held())).isEmpty();
        assertThat(bed.xds.server.debugView().clients())
                .singleElement()
                .satisfies(cl -> assertThat(cl.types().values())
                        .allSatisfy(t -> assertThat(t.nacks()).isZero()));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sotw", "delta"})
    void subsetRoutes_putTheirLabelKeysOnTheSelectedServiceOnly_andTakeThemOffWhenTheRouteGoes(String protocol) {
        EnvoyLikeClient envoy = shop(protocol);

        // orders is selected by version (the canary Ingress): its endpoints carry version, and only that label
        // (dubbo.metadata.revision and the rest stay off, lbMetadataLabels being empty by default); greeter carries
        // none
        envoy.await(c -> {
            assertThat(c.lbLabels(ORDERS))
                    .containsExactly(
                            java.util.Map.entry("10.1.0.1:50051", List.of("version=v1")),
                            java.util.Map.entry("10.1.0.2:50051", List.of("version=v1")),
                            java.util.Map.entry("10.1.0.3:50051", List.of("version=v2")));
            assertThat(c.lbLabels(GREETER)).containsExactly(java.util.Map.entry("10.2.0.1:50051", List.of()));
        });

        // the canary Ingress goes: nothing selects orders by label any more, and its endpoints lose the metadata
        String yaml = IngressBed.resource("ingress/shop.yaml");
        int start =
                yaml.indexOf("---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: orders-canary");
        int end = yaml.indexOf("---", start + 3);
        assertThat(start).isPositive();
        bed.write("shop.yaml", yaml.substring(0, start) + yaml.substring(end));
        bed.awaitRoutes(5);

        envoy.await(c -> {
            assertThat(c.lbLabels(ORDERS).values())
                    .allSatisfy(l -> assertThat(l).isEmpty());
            // the route update follows the cluster removal by one response: wait for both
            assertThat(EnvoyConfigCheck.check(c.held())).isEmpty();
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sotw", "delta"})
    void unknownDestination_answers503NamingIt_thenTheRouteSwitchesWhenTheServiceAppears(String protocol) {
        bed = new IngressBed(dir);
        bed.send(IngressBed.shopCatalog());
        bed.write("pay.yaml", routeIngress("pay", "2024-05-01T10:00:00Z", "/pay", "payments.dubbo"));
        bed.awaitRoutes(1);
        EnvoyLikeClient envoy = envoy(protocol);

        envoy.await(c -> assertThat(routeLines(c.routeConfiguration(ROUTES)))
                .containsExactly("shop.example.com sep=/pay -> 503 \"meshbridge: no destination of this route is"
                        + " available: payments.dubbo is not in the catalog\""));
        assertThat(EnvoyConfigCheck.check(envoy.held())).isEmpty();
        assertThat(bed.xds.server.debugView().ingress().unavailable())
                .containsExactly("shop.example.com Prefix /pay of shop/pay: payments.dubbo is not in the catalog");
        assertThat(bed.xds.gauge("meshbridge.xds.ingress.unavailable")).isEqualTo(1);

        bed.send(IngressBed.dubboApp("payments", "v1", "10.9.0.1", "10.9.0.2"));

        envoy.await(c -> {
            assertThat(routeLines(c.routeConfiguration(ROUTES)))
                    .containsExactly("shop.example.com sep=/pay -> outbound|50051||payments.dubbo");
            assertThat(c.endpoints("outbound|50051||payments.dubbo"))
                    .containsExactly("10.9.0.1:50051", "10.9.0.2:50051");
        });
        assertThat(EnvoyConfigCheck.check(envoy.held())).isEmpty();
        assertThat(bed.xds.server.debugView().ingress().unavailable()).isEmpty();
    }

    @Test
    void conflict_twoIngressesClaimTheSameRoute_theOlderIsServed_theNewerOnceTheOlderGoes() {
        bed = new IngressBed(dir);
        bed.send(IngressBed.shopCatalog());
        bed.write("a.yaml", routeIngress("a-newer", "2024-05-02T00:00:00Z", "/orders", "greeter.dubbo"));
        bed.write("b.yaml", routeIngress("b-older", "2024-05-01T00:00:00Z", "/orders", "orders.dubbo"));
        await(() -> bed.controller.routes().current().conflicts().size() == 1);
        EnvoyLikeClient envoy = envoy("sotw");

        envoy.await(c -> assertThat(routeLines(c.routeConfiguration(ROUTES)))
                .containsExactly("shop.example.com sep=/orders -> " + ORDERS));
        assertThat(envoy.routeConfiguration(ROUTES)
                        .getVirtualHosts(0)
                        .getRoutes(0)
                        .getName())
                .isEqualTo("shop/b-older");

        bed.delete("b.yaml");

        envoy.await(c -> assertThat(routeLines(c.routeConfiguration(ROUTES)))
                .containsExactly("shop.example.com sep=/orders -> " + GREETER));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sotw", "delta"})
    void endpointOnlyChange_pushesOnlyEds_andRoutesAreNotTranslatedAgain(String protocol) {
        EnvoyLikeClient envoy = shop(protocol);
        envoy.await(c -> {
            assertThat(c.held(XdsType.SECRET)).hasSize(1);
            assertThat(c.held(XdsType.ROUTE)).hasSize(1);
            assertThat(c.held(XdsType.ENDPOINT)).hasSize(3);
        });
        int mark = envoy.received().size();
        double translations = bed.xds.counter("meshbridge.xds.ingress.translations");

        bed.send(IngressBed.dubboApp("greeter", "v1", "10.2.0.1", "10.2.0.2"));
        envoy.await(c -> assertThat(c.endpoints(GREETER)).containsExactly("10.2.0.1:50051", "10.2.0.2:50051"));
        // a second change fences the first: whatever the first caused has arrived before this one's push
        bed.send(IngressBed.dubboApp("greeter-next", "v1", "10.3.0.1", "10.3.0.2"));
        envoy.await(c -> assertThat(c.endpoints("outbound|50051||greeter-next.dubbo"))
                .containsExactly("10.3.0.1:50051", "10.3.0.2:50051"));

        assertThat(envoy.received().subList(mark, envoy.received().size()))
                .containsExactly(XdsType.ENDPOINT, XdsType.ENDPOINT);
        assertThat(bed.xds.counter("meshbridge.xds.ingress.translations")).isEqualTo(translations);
    }

    @Test
    void sdsSecrets_goOnlyToAllowedClients_anotherGetsNoPrivateKey() {
        // this client is on loopback: allow only another network, and it is a stranger
        bed = new IngressBed(
                dir,
                XdsOptions.loopbackEphemeral()
                        .withSdsClients(dev.meshbridge.ads.ClientNetworks.parse(java.util.List.of("10.20.0.0/16"))));
        bed.send(IngressBed.shopCatalog());
        bed.write("shop.yaml", IngressBed.resource("ingress/shop.yaml"));
        bed.awaitRoutes(6);
        EnvoyLikeClient stranger = envoy("sotw");

        // it asks for the listeners' secret, and is answered with none
        stranger.await(c -> assertThat(c.held(XdsType.LISTENER)).hasSize(2));
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(20))
                .until(() -> bed.xds.counter("meshbridge.xds.limits", "limit", "restricted:sds") > 0);
        stranger.await(c -> assertThat(c.endpoints(ORDERS)).isNotEmpty());
        bed.xds.server.idle().join();

        assertThat(stranger.held(XdsType.SECRET)).isEmpty();
    }

    @Test
    void tlsSecretRotated_envoyGetsOnlyTheNewSecret() {
        bed = new IngressBed(dir);
        bed.send(IngressBed.shopCatalog());
        String yaml = IngressBed.resource("ingress/shop.yaml");
        bed.write("shop.yaml", yaml);
        bed.awaitRoutes(6);
        EnvoyLikeClient envoy = envoy("delta");
        envoy.await(c -> assertThat(c.held(XdsType.SECRET)).hasSize(1));
        int mark = envoy.received().size();
        String before = bed.controller.routes().current().version();

        bed.write("shop.yaml", yaml.replace("c2hvcC1rZXk=", "cm90YXRlZC1rZXk="));
        envoy.await(c -> assertThat(IngressTables.unpack(
                                c.held(XdsType.SECRET).get("kubernetes://shop/shop-tls"),
                                io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret.class)
                        .getTlsCertificate()
                        .getPrivateKey()
                        .getInlineString())
                .contains("cm90YXRlZC1rZXk="));
        bed.send(IngressBed.dubboApp("greeter", "v1", "10.2.0.9"));
        envoy.await(c -> assertThat(c.endpoints(GREETER)).containsExactly("10.2.0.9:50051"));

        assertThat(bed.controller.routes().current().version()).isNotEqualTo(before);
        // the listener names the secret, so a rotation changes neither the listener nor the routes
        assertThat(envoy.received().subList(mark, envoy.received().size()))
                .containsExactly(XdsType.SECRET, XdsType.ENDPOINT);
    }

    @Test
    void serviceGainsAPort_routeWithThatPortSwitchesFromItsAnswer503() {
        bed = new IngressBed(dir);
        bed.send(IngressBed.shopCatalog());
        bed.write("legacy.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: legacy
                  namespace: shop
                  annotations: {meshbridge.dev/destination: "orders.dubbo:20880"}
                spec:
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: /legacy
                        pathType: Prefix
                        backend: {resource: {apiGroup: networking.higress.io, kind: McpBridge, name: default}}
                """);
        bed.awaitRoutes(1);
        EnvoyLikeClient envoy = envoy("sotw");
        envoy.await(c -> assertThat(routeLines(c.routeConfiguration(ROUTES)))
                .singleElement()
                .asString()
                .contains("503")
                .contains("orders.dubbo has no port 20880 (it has [50051])"));

        bed.send(new dev.meshbridge.core.spi.ServiceUpsert(
                Upserts.dubboApplication("orders", List.of()).key(),
                "orders.dubbo",
                List.of(
                        new dev.meshbridge.core.model.ServicePort(
                                "dubbo", 20880, dev.meshbridge.core.model.Protocol.DUBBO),
                        new dev.meshbridge.core.model.ServicePort(
                                "tri", 50051, dev.meshbridge.core.model.Protocol.TRIPLE)),
                List.of(dev.meshbridge.core.model.Endpoint.builder("10.1.0.1")
                        .port("dubbo", 20880)
                        .port("tri", 50051)
                        .build())));

        envoy.await(c -> {
            assertThat(routeLines(c.routeConfiguration(ROUTES)))
                    .containsExactly("shop.example.com sep=/legacy -> outbound|20880||orders.dubbo");
            assertThat(c.endpoints("outbound|20880||orders.dubbo")).containsExactly("10.1.0.1:20880");
            assertThat(c.cluster("outbound|20880||orders.dubbo").getType()).isEqualTo(Cluster.DiscoveryType.EDS);
        });
    }

    @Test
    void ingressDisabled_envoyGetsNoListenerAndNoRoute() {
        bed = new IngressBed(
                dir, XdsOptions.loopbackEphemeral().withIngress(new XdsOptions.Ingress(false, "0.0.0.0", 8080, 8443)));
        bed.send(IngressBed.shopCatalog());
        bed.write("shop.yaml", IngressBed.resource("ingress/shop.yaml"));
        bed.awaitRoutes(6);
        String routes = bed.controller.routes().current().version();
        await(() -> bed.xds.server.debugView().ingress().routesVersion().equals(routes));
        bed.send(IngressBed.dubboApp("greeter", "v1", "10.2.0.7"));
        EnvoyLikeClient envoy = envoy("sotw");

        envoy.await(c -> assertThat(c.endpoints(GREETER)).containsExactly("10.2.0.7:50051"));
        assertThat(envoy.held(XdsType.LISTENER)).isEmpty();
        assertThat(envoy.held(XdsType.ROUTE)).isEmpty();
        assertThat(envoy.held(XdsType.CLUSTER).keySet())
                .containsExactlyInAnyOrder(ORDERS, GREETER, "outbound|50051||greeter-next.dubbo");
        assertThat(bed.xds.server.debugView().ingress().enabled()).isFalse();
    }

    private static void await(java.util.concurrent.Callable<Boolean> condition) {
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(20))
                .until(condition);
    }
}
