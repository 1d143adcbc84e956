package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster source against fabric8's mock API server in CRUD mode (kubernetes-server-mock 7.8.0: real list and
 * watch over HTTP, objects stored as the API server would), driven by the real fabric8 client: what a user applies
 * with kubectl and the route table and Events they get.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class KubernetesIngressSourceTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    KubernetesClient client;
    KubernetesMockServer server;

    private IngressController controller;
    private TestCatalog catalog;

    @AfterEach
    void tearDown() {
        if (controller != null) controller.close();
        if (catalog != null) catalog.close();
    }

    private IngressController start(String kubernetesOptions) {
        return start(kubernetesOptions, table -> {});
    }

    private IngressController start(String kubernetesOptions, RouteTableListener listener) {
        String yaml = "ingress:\n  syncTimeout: 5s\n  kubernetes:\n    enabled: true\n" + kubernetesOptions;
        IngressOptions options = TestOptions.parse(yaml);
        controller = new IngressController(
                options, client, new SimpleMeterRegistry(), Map.of(), registries -> {}, () -> true);
        controller.routes().addListener(listener);
        controller.start();
        return controller;
    }

    private <T extends HasMetadata> T apply(String yaml) {
        return Manifests.apply(client, yaml);
    }

    private RouteTable awaitRoutes(String... lines) {
        return RouteTables.await(controller, WAIT, lines);
    }

    private List<Event> events(String namespace, String name) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()))
                .toList();
    }

    private List<String> reasons(String namespace, String name) {
        return events(namespace, name).stream().map(Event::getReason).sorted().toList();
    }

    @Test
    void ingress_addedChangedDeleted_routeTableFollows() {
        start("");
        awaitRoutes();
        String before = controller.routes().current().version();

        apply(Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        RouteTable added = awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");
        assertThat(added.version()).isNotEqualTo(before);
        assertThat(added.registryHosts()).containsExactly("orders.dubbo");

        apply(Manifests.registryIngress("shop", "orders", "shop.example.com", "/api/orders/", "orders-v2.dubbo"));
        awaitRoutes("shop.example.com Prefix /api/orders -> 100 orders-v2.dubbo [shop/orders]");

        client.network().v1().ingresses().inNamespace("shop").withName("orders").delete();
        RouteTable deleted = awaitRoutes();
        assertThat(deleted.ingresses()).isEmpty();
        assertThat(deleted.version()).isEqualTo(before);
    }

    @Test
    void restart_ingressesAlreadyThere_firstPublishedTableHoldsThemAllWithTheirCertificates() {
        for (int i = 0; i < 3; i++) {
            apply(Manifests.tlsIngress("shop", "web-" + i, "web-" + i + ".example.com", "tls-" + i));
            apply(Manifests.tlsSecret("shop", "tls-" + i, "cert-" + i));
        }
        List<RouteTable> published = new java.util.concurrent.CopyOnWriteArrayList<>();
        start("", published::add);

        await().atMost(WAIT).until(() -> !published.isEmpty());
        RouteTable first = published.get(0);
        assertThat(RouteTables.routes(first))
                .containsExactly(
                        "web-0.example.com Prefix / -> 100 svc:web.shop.svc.cluster.local:80 [shop/web-0]",
                        "web-1.example.com Prefix / -> 100 svc:web.shop.svc.cluster.local:80 [shop/web-1]",
                        "web-2.example.com Prefix / -> 100 svc:web.shop.svc.cluster.local:80 [shop/web-2]");
        assertThat(RouteTables.tls(first))
                .containsExactly(
                        "web-0.example.com shop/tls-0 cert:cert-0 [shop/web-0]",
                        "web-1.example.com shop/tls-1 cert:cert-1 [shop/web-1]",
                        "web-2.example.com shop/tls-2 cert:cert-2 [shop/web-2]");
    }

    @Test
    void tlsSecret_missingThenCreatedThenRotated_certificateFollowsAndIsReported() {
        start("");
        apply("""
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: web, namespace: shop}
                spec:
                  ingressClassName: meshbridge
                  tls:
                  - hosts: [shop.example.com]
                    secretName: shop-tls
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: /
                        pathType: Prefix
                        backend: {service: {name: web, port: {number: 8080}}}
                """);
        awaitRoutes("shop.example.com Prefix / -> 100 svc:web.shop.svc.cluster.local:8080 [shop/web]");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(RouteTables.tls(controller.routes().current()))
                    .containsExactly("shop.example.com shop/shop-tls missing [shop/web]");
            assertThat(reasons("shop", "web")).containsExactly(Issue.TLS_SECRET);
        });
        assertThat(events("shop", "web").get(0).getMessage())
                .isEqualTo("TLS Secret shop/shop-tls does not exist; shop.example.com get no certificate");

        apply(Manifests.tlsSecret("shop", "shop-tls", "first"));
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(RouteTables.tls(controller.routes().current()))
                    .containsExactly("shop.example.com shop/shop-tls cert:first [shop/web]");
            assertThat(reasons("shop", "web")).containsExactly(Issue.TLS_SECRET, Issue.TLS_SECRET + "Resolved");
        });
        String firstVersion = controller.routes().current().version();

        apply(Manifests.tlsSecret("shop", "shop-tls", "rotated"));
        await().atMost(WAIT)
                .untilAsserted(
                        () -> assertThat(RouteTables.tls(controller.routes().current()))
                                .containsExactly("shop.example.com shop/shop-tls cert:rotated [shop/web]"));
        assertThat(controller.routes().current().version()).isNotEqualTo(firstVersion);
        assertThat(controller
                        .routes()
                        .current()
                        .tls()
                        .get("shop.example.com")
                        .material()
                        .orElseThrow()
                        .privateKey())
                .isEqualTo(Manifests.key("rotated"));
    }

    @Test
    void ingressClass_specClassLegacyAnnotationAndDefaultClass_onlyOursAreServed() {
        start("");
        apply(Manifests.classIngress("by-spec", "ingressClassName: meshbridge", ""));
        apply(Manifests.classIngress("by-annotation", "", "kubernetes.io/ingress.class: meshbridge"));
        apply(Manifests.classIngress("other-class", "ingressClassName: nginx", ""));
        apply(Manifests.classIngress("other-annotation", "", "kubernetes.io/ingress.class: nginx"));
        apply(Manifests.classIngress("no-class", "", ""));
        apply(Manifests.classIngress("by-controller", "ingressClassName: mesh-edge", ""));
        awaitRoutes(
                "* Prefix /by-annotation -> 100 by-annotation.dubbo [apps/by-annotation]",
                "* Prefix /by-spec -> 100 by-spec.dubbo [apps/by-spec]");

        // an IngressClass of our controller under another name, and ours made the default class
        apply("""
                apiVersion: networking.k8s.io/v1
                kind: IngressClass
                metadata: {name: mesh-edge}
                spec: {controller: meshbridge.dev/ingress-controller}
                """);
        apply("""
                apiVersion: networking.k8s.io/v1
                kind: IngressClass
                metadata:
                  name: meshbridge
                  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
                spec: {controller: meshbridge.dev/ingress-controller}
                """);
        awaitRoutes(
                "* Prefix /by-annotation -> 100 by-annotation.dubbo [apps/by-annotation]",
                "* Prefix /by-controller -> 100 by-controller.dubbo [apps/by-controller]",
                "* Prefix /by-spec -> 100 by-spec.dubbo [apps/by-spec]",
                "* Prefix /no-class -> 100 no-class.dubbo [apps/no-class]");

        client.network().v1().ingressClasses().withName("meshbridge").delete();
        awaitRoutes(
                "* Prefix /by-annotation -> 100 by-annotation.dubbo [apps/by-annotation]",
                "* Prefix /by-controller -> 100 by-controller.dubbo [apps/by-controller]",
                "* Prefix /by-spec -> 100 by-spec.dubbo [apps/by-spec]");
    }

    @Test
    void higressDestinationAnnotation_weightsToRegistryServicesAndAKubernetesService() {
        start("");
        apply(Manifests.HIGRESS_MULTI_DESTINATION);
        awaitRoutes("* Prefix /echo -> 33 service-provider.default-group.public.nacos, "
                + "33 service-provider-gray.default-group.public.nacos, "
                + "34 svc:bar-service.default.svc.cluster.local:5678 [default/echo]");

        apply("""
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: orders
                  namespace: shop
                  annotations:
                    meshbridge.dev/destination: |
                      90% orders.dubbo:20880 version=v1
                      10% orders.dubbo:20880 version=v2
                spec:
                  ingressClassName: meshbridge
                  defaultBackend:
                    resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: placeholder}
                  rules:
                  - host: orders.example.com
                    http:
                      paths:
                      - path: /v1/orders
                        pathType: Exact
                        backend:
                          resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: placeholder}
                """);
        awaitRoutes(
                "* Prefix /echo -> 33 service-provider.default-group.public.nacos, "
                        + "33 service-provider-gray.default-group.public.nacos, "
                        + "34 svc:bar-service.default.svc.cluster.local:5678 [default/echo]",
                "orders.example.com Exact /v1/orders -> 90 orders.dubbo:20880 version-v1{version=v1}, "
                        + "10 orders.dubbo:20880 version-v2{version=v2} [shop/orders]",
                "default -> 90 orders.dubbo:20880 version-v1{version=v1}, "
                        + "10 orders.dubbo:20880 version-v2{version=v2} [shop/orders]");
    }

    @Test
    void backends_registryServiceResourceAndServiceByPortName() {
        start("");
        apply("""
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: mixed, namespace: shop}
                spec:
                  ingressClassName: meshbridge
                  rules:
                  - host: Shop.Example.com
                    http:
                      paths:
                      - path: /greeter
                        pathType: ImplementationSpecific
                        backend:
                          resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: org.demo.greeter.dubbo}
                      - path: /static
                        pathType: Prefix
                        backend: {service: {name: static-web, port: {name: http}}}
                """);
        awaitRoutes(
                "shop.example.com Prefix /greeter -> 100 org.demo.greeter.dubbo [shop/mixed]",
                "shop.example.com Prefix /static -> 100 svc:static-web.shop.svc.cluster.local:http [shop/mixed]");
    }

    @Test
    void conflict_oldestIngressWins_loserGetsRouteConflictEvent() {
        start("");
        Ingress older = apply(Manifests.registryIngress("shop", "z-first", "shop.example.com", "/orders", "old.dubbo"));
        Instant olderCreated = Instant.parse(older.getMetadata().getCreationTimestamp());
        awaitRoutes("shop.example.com Prefix /orders -> 100 old.dubbo [shop/z-first]");
        // the API server stamps creation times in whole seconds: let one pass so the second Ingress is younger
        await().atMost(WAIT).until(() -> Instant.now().getEpochSecond() > olderCreated.getEpochSecond());

        apply(Manifests.registryIngress("shop", "a-second", "shop.example.com", "/orders", "new.dubbo"));
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(controller.routes().current().conflicts()).hasSize(1);
            assertThat(reasons("shop", "a-second")).containsExactly(Issue.CONFLICT);
        });
        assertThat(RouteTables.routes(controller.routes().current()))
                .containsExactly("shop.example.com Prefix /orders -> 100 old.dubbo [shop/z-first]");
        assertThat(events("shop", "a-second").get(0).getMessage())
                .startsWith("route shop.example.com Prefix /orders of shop/a-second is not served: shop/z-first claims"
                        + " it and is older");
        assertThat(events("shop", "a-second").get(0).getType()).isEqualTo("Warning");
        assertThat(events("shop", "z-first")).isEmpty();

        client.network()
                .v1()
                .ingresses()
                .inNamespace("shop")
                .withName("z-first")
                .delete();
        awaitRoutes("shop.example.com Prefix /orders -> 100 new.dubbo [shop/a-second]");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(reasons("shop", "a-second"))
                        .containsExactly(Issue.CONFLICT, Issue.CONFLICT + "Resolved"));
    }

    @Test
    void invalidIngress_lastValidVersionStaysServed_andInvalidIngressEventNamesTheField() {
        start("");
        apply(Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");

        apply("""
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: orders
                  namespace: shop
                  annotations:
                    higress.io/destination: |
                      60% orders.dubbo
                      40% orders_v2.DEFAULT_GROUP.nacos
                spec:
                  ingressClassName: meshbridge
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: /orders
                        pathType: Prefix
                        backend: {resource: {apiGroup: networking.higress.io, kind: McpBridge, name: default}}
                """);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(reasons("shop", "orders")).containsExactly(Issue.INVALID));
        assertThat(events("shop", "orders").get(0).getMessage())
                .isEqualTo("refused: metadata.annotations[higress.io/destination]: line 2 '40% orders_v2.DEFAULT_GROUP"
                        + ".nacos': the host 'orders_v2.default_group.nacos' has label 'orders_v2', which is not"
                        + " lower-case [a-z0-9-] starting and ending alphanumeric (hosts use '-' where registries use"
                        + " '_': orders-v2.default-group.nacos). Its last valid version stays served.");
        assertThat(RouteTables.routes(controller.routes().current()))
                .containsExactly("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");

        apply("""
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: orders
                  namespace: shop
                  annotations:
                    higress.io/destination: |
                      60% orders.dubbo
                      40% orders-v2.default-group.nacos
                spec:
                  ingressClassName: meshbridge
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: /orders
                        pathType: Prefix
                        backend: {resource: {apiGroup: networking.higress.io, kind: McpBridge, name: default}}
                """);
        awaitRoutes(
                "shop.example.com Prefix /orders -> 60 orders.dubbo, 40 orders-v2.default-group.nacos [shop/orders]");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(reasons("shop", "orders"))
                        .containsExactly(Issue.INVALID, Issue.INVALID + "Resolved"));
    }

    @Test
    void unknownDestination_reportedOnceOnTheIngress_thenResolvedWhenTheServiceAppears() {
        start("");
        catalog = new TestCatalog();
        catalog.aggregator().subscribe(controller.destinations()).join();
        apply(Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(reasons("shop", "orders")).containsExactly(Issue.UNKNOWN_DESTINATION));
        assertThat(events("shop", "orders").get(0).getMessage())
                .isEqualTo("destination orders.dubbo is not in the catalog; route shop.example.com Prefix /orders"
                        + " answers 503 until it appears");

        // several catalog changes that do not bring orders.dubbo: no new report
        for (int i = 0; i < 5; i++) catalog.aggregator().accept(upsert("other-" + i + ".dubbo"));
        catalog.awaitService("other-4.dubbo");

        catalog.aggregator().accept(upsert("orders.dubbo"));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(reasons("shop", "orders"))
                        .containsExactly(Issue.UNKNOWN_DESTINATION, Issue.UNKNOWN_DESTINATION + "Resolved"));
        assertThat(controller.destinations().missingCount()).isZero();
        assertThat(controller.issues().issues("shop", "orders")).isEmpty();
    }

    private static ServiceUpsert upsert(String host) {
        return new ServiceUpsert(
                ServiceKey.of("test", "zk1", host),
                host,
                List.of(new ServicePort("dubbo", 20880, Protocol.DUBBO)),
                List.of(Endpoint.builder("10.0.0.1").port("dubbo", 20880).build()));
    }

    @Test
    void namespaces_onlyTheListedNamespacesAreRead() {
        start("    namespaces: [shop, pay]\n");
        apply(Manifests.registryIngress("shop", "a", "a.example.com", "/", "a.dubbo"));
        apply(Manifests.registryIngress("pay", "b", "b.example.com", "/", "b.dubbo"));
        apply(Manifests.registryIngress("other", "c", "c.example.com", "/", "c.dubbo"));
        awaitRoutes("a.example.com Prefix / -> 100 a.dubbo [shop/a]", "b.example.com Prefix / -> 100 b.dubbo [pay/b]");
    }

    @Test
    void kubeconfig_namedInTheOptions_isWhatTheBridgeConnectsWith(@TempDir Path tmp) throws IOException {
        Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: mock
                  cluster: {server: "%s"}
                contexts:
                - name: other
                  context: {cluster: nowhere, user: nobody}
                - name: mock
                  context: {cluster: mock, user: tester, namespace: shop}
                current-context: other
                users:
                - name: tester
                  user: {token: secret-token}
                """.formatted(client.getMasterUrl()));
        IngressOptions options = TestOptions.parse("""
                ingress:
                  syncTimeout: 5s
                  kubernetes:
                    enabled: true
                    kubeconfig: %s
                    context: mock
                """.formatted(kubeconfig));
        controller = new IngressController(options, null, new SimpleMeterRegistry(), Map.of(), r -> {}, () -> true);
        controller.start();
        apply(Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");
    }

    @Test
    void tlsSecrets_onlyTheSecretsIngressesNameAreRead() throws InterruptedException {
        start("");
        apply(Manifests.tlsSecret("shop", "unrelated", "x"));
        apply(Manifests.tlsIngress("shop", "web", "a.example.com", "a-tls"));
        apply(Manifests.tlsSecret("shop", "a-tls", "a"));
        await().atMost(WAIT)
                .untilAsserted(
                        () -> assertThat(RouteTables.tls(controller.routes().current()))
                                .containsExactly("a.example.com shop/a-tls cert:a [shop/web]"));
        List<String> secretRequests = requestedSecretPaths();
        assertThat(secretRequests).isNotEmpty().allMatch(p -> p.contains("metadata.name%3Da-tls"));
    }

    private List<String> requestedSecretPaths() throws InterruptedException {
        List<String> paths = new java.util.ArrayList<>();
        for (int i = server.getRequestCount(); i > 0; i--) {
            var request = server.takeRequest();
            if (request.getMethod().equals("GET") && request.getPath().startsWith("/api/v1/namespaces/shop/secrets"))
                paths.add(request.getPath());
        }
        return paths;
    }
}
