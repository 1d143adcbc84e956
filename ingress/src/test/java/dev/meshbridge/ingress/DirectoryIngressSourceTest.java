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
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The directory source: the same Ingress YAML as in a cluster, written to files the way a docker-compose or
 * bare-metal user does, and the route table and reports they get.
 */
class DirectoryIngressSourceTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private IngressController controller;
    private TestCatalog catalog;

    @AfterEach
    void tearDown() {
        if (controller != null) controller.close();
        if (catalog != null) catalog.close();
    }

    private void start() {
        IngressOptions options = TestOptions.parse("""
                ingress:
                  syncTimeout: 5s
                  directory:
                    path: %s
                    reloadInterval: 100ms
                """.formatted(dir));
        controller =
                new IngressController(options, null, new SimpleMeterRegistry(), Map.of(), registries -> {}, () -> true);
        controller.start();
    }

    private void write(String file, String yaml) throws IOException {
        Path tmp = dir.resolve("." + file + ".tmp");
        Files.writeString(tmp, yaml);
        Files.move(tmp, dir.resolve(file), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private RouteTable awaitRoutes(String... lines) {
        return RouteTables.await(controller, WAIT, lines);
    }

    private static String registryIngress(String name, String created, String path, String meshHost) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: %s
                  namespace: shop
                  creationTimestamp: %s
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

    @Test
    void files_addedChangedRemoved_routeTableFollows() throws IOException {
        start();
        awaitRoutes();

        write(
                "orders.yaml",
                Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");

        write(
                "orders.yaml",
                Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders-v2.dubbo")
                        + "---\n"
                        + Manifests.registryIngress("shop", "users", "shop.example.com", "/users", "users.dubbo"));
        awaitRoutes(
                "shop.example.com Prefix /orders -> 100 orders-v2.dubbo [shop/orders]",
                "shop.example.com Prefix /users -> 100 users.dubbo [shop/users]");

        write("more.yml", Manifests.registryIngress("pay", "pay", "pay.example.com", "/", "pay.dubbo"));
        awaitRoutes(
                "pay.example.com Prefix / -> 100 pay.dubbo [pay/pay]",
                "shop.example.com Prefix /orders -> 100 orders-v2.dubbo [shop/orders]",
                "shop.example.com Prefix /users -> 100 users.dubbo [shop/users]");

        Files.delete(dir.resolve("orders.yaml"));
        awaitRoutes("pay.example.com Prefix / -> 100 pay.dubbo [pay/pay]");
    }

    @Test
    void tlsSecretFile_missingThenAddedThenRotated_certificateFollows() throws IOException {
        write("web.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: web, namespace: shop}
                spec:
                  tls: [{hosts: [shop.example.com], secretName: shop-tls}]
                  rules:
                  - host: shop.example.com
                    http:
                      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
                """);
        start();
        awaitRoutes("shop.example.com Prefix / -> 100 svc:web.shop.svc.cluster.local:80 [shop/web]");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(RouteTables.tls(controller.routes().current()))
                    .containsExactly("shop.example.com shop/shop-tls missing [shop/web]");
            assertThat(controller.issues().issues("shop", "web"))
                    .containsExactly(new Issue(
                            Issue.TLS_SECRET,
                            "TLS Secret shop/shop-tls does not exist; shop.example.com get no certificate"));
        });

        write("secrets.yaml", Manifests.tlsSecret("shop", "shop-tls", "first"));
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(RouteTables.tls(controller.routes().current()))
                    .containsExactly("shop.example.com shop/shop-tls cert:first [shop/web]");
            assertThat(controller.issues().issues("shop", "web")).isEmpty();
        });
        String first = controller.routes().current().version();

        write("secrets.yaml", Manifests.tlsSecret("shop", "shop-tls", "rotated"));
        await().atMost(WAIT)
                .untilAsserted(
                        () -> assertThat(RouteTables.tls(controller.routes().current()))
                                .containsExactly("shop.example.com shop/shop-tls cert:rotated [shop/web]"));
        assertThat(controller.routes().current().version()).isNotEqualTo(first);
    }

    @Test
    void ingressClass_otherClassIgnored_unclassedAndOurControllersClassAccepted() throws IOException {
        write("classes.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: IngressClass
                metadata: {name: edge}
                spec: {controller: meshbridge.dev/ingress-controller}
                """);
        write(
                "ingresses.yaml",
                String.join(
                        "---\n",
                        Manifests.classIngress("ours", "ingressClassName: meshbridge", ""),
                        Manifests.classIngress("edge", "ingressClassName: edge", ""),
                        Manifests.classIngress("legacy", "", "kubernetes.io/ingress.class: meshbridge"),
                        Manifests.classIngress("nginx", "ingressClassName: nginx", ""),
                        Manifests.classIngress("nginx-legacy", "", "kubernetes.io/ingress.class: nginx"),
                        Manifests.classIngress("unclassed", "", "")));
        start();
        awaitRoutes(
                "* Prefix /edge -> 100 edge.dubbo [apps/edge]",
                "* Prefix /legacy -> 100 legacy.dubbo [apps/legacy]",
                "* Prefix /ours -> 100 ours.dubbo [apps/ours]",
                "* Prefix /unclassed -> 100 unclassed.dubbo [apps/unclassed]");
    }

    @Test
    void higressDestinationAnnotation_andBackendResource_inOneMultiDocumentFile() throws IOException {
        write(
                "higress.yaml",
                Manifests.HIGRESS_MULTI_DESTINATION + "---\n# a comment document\n---\n"
                        + Manifests.registryIngress("shop", "greeter", "", "/greeter", "org.demo.greeter.v-1-0.dubbo"));
        start();
        awaitRoutes(
                "* Prefix /echo -> 33 service-provider.default-group.public.nacos, "
                        + "33 service-provider-gray.default-group.public.nacos, "
                        + "34 svc:bar-service.default.svc.cluster.local:5678 [default/echo]",
                "* Prefix /greeter -> 100 org.demo.greeter.v-1-0.dubbo [shop/greeter]");
    }

    @Test
    void conflict_olderCreationTimestampWins_loserReported() throws IOException {
        write("a.yaml", registryIngress("a-newer", "\"2024-05-02T00:00:00Z\"", "/orders", "new.dubbo"));
        write("b.yaml", registryIngress("b-older", "\"2024-05-01T00:00:00Z\"", "/orders", "old.dubbo"));
        start();
        RouteTable table = awaitRoutes("shop.example.com Prefix /orders -> 100 old.dubbo [shop/b-older]");
        assertThat(table.conflicts()).hasSize(1);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(controller.issues().issues("shop", "a-newer"))
                        .containsExactly(new Issue(
                                Issue.CONFLICT,
                                "route shop.example.com Prefix /orders of shop/a-newer is not served: shop/b-older"
                                        + " claims it and is older (created 2024-05-01T00:00:00Z)")));
        assertThat(controller.issues().issues("shop", "b-older")).isEmpty();
    }

    @Test
    void malformedFile_reportedWithFileLineAndReason_lastValidVersionKept_otherFilesUnaffected() throws IOException {
        write(
                "orders.yaml",
                Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        write("users.yaml", Manifests.registryIngress("shop", "users", "shop.example.com", "/users", "users.dubbo"));
        start();
        awaitRoutes(
                "shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]",
                "shop.example.com Prefix /users -> 100 users.dubbo [shop/users]");

        // a YAML syntax error
        write("orders.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: orders\n");
        Path orders = dir.resolve("orders.yaml");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(controller.refusedFiles().get(orders))
                        .singleElement()
                        .asString()
                        .startsWith(orders + ":4: YAML syntax: "));

        // a wrong field deep inside an Ingress: the problem names the line of that field
        write("orders.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: orders, namespace: shop}
                spec:
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: /orders
                        pathType: Regex
                        backend:
                          resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: orders-v3.dubbo}
                """);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(controller.refusedFiles().get(orders))
                        .containsExactly(
                                orders + ":10: Ingress shop/orders: spec.rules[0].http.paths[0].pathType: 'Regex'"
                                        + " is not Exact, Prefix or ImplementationSpecific"));

        // meanwhile another file still applies, and the refused one keeps its last valid version
        write("users.yaml", Manifests.registryIngress("shop", "users", "shop.example.com", "/users", "users-v2.dubbo"));
        awaitRoutes(
                "shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]",
                "shop.example.com Prefix /users -> 100 users-v2.dubbo [shop/users]");

        write(
                "orders.yaml",
                Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders-v3.dubbo"));
        awaitRoutes(
                "shop.example.com Prefix /orders -> 100 orders-v3.dubbo [shop/orders]",
                "shop.example.com Prefix /users -> 100 users-v2.dubbo [shop/users]");
        assertThat(controller.refusedFiles()).isEmpty();
    }

    @Test
    void aFileThatBecomesEmpty_isRefused_itsRoutesStay_deletingTheFileRemovesThem() throws IOException {
        write(
                "orders.yaml",
                Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        start();
        awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");
        Path orders = dir.resolve("orders.yaml");

        // what a truncating editor, a failed copy or an emptied ConfigMap key leaves: nothing, or only a comment
        for (String empty : new String[] {"", "\n", "# orders\n", "---\n"}) {
            write("orders.yaml", empty);
            await().atMost(WAIT)
                    .untilAsserted(() -> assertThat(controller.refusedFiles().get(orders))
                            .singleElement()
                            .asString()
                            .contains("the file is empty")
                            .contains("delete the file"));
            awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");
            write(
                    "orders.yaml",
                    Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
            await().atMost(WAIT).until(() -> controller.refusedFiles().isEmpty());
        }

        Files.delete(orders);
        awaitRoutes();
    }

    @Test
    void malformedFile_neverValid_contributesNothing_andEveryProblemIsListed() throws IOException {
        write("bad.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: bad
                  annotations:
                    higress.io/destination: |
                      50% orders.dubbo:http
                      50%
                spec:
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - path: /x
                        backend: {resource: {apiGroup: networking.higress.io, kind: McpBridge, name: default}}
                ---
                apiVersion: extensions/v1beta1
                kind: Ingress
                metadata: {name: old}
                ---
                kind: ConfigMap
                apiVersion: v1
                metadata: {name: ignored}
                """);
        write("good.yaml", Manifests.registryIngress("shop", "good", "", "/", "good.dubbo"));
        start();
        awaitRoutes("* Prefix / -> 100 good.dubbo [shop/good]");
        Path bad = dir.resolve("bad.yaml");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(controller.refusedFiles().get(bad))
                        .containsExactly(
                                bad + ":6: Ingress default/bad: metadata.annotations[higress.io/destination]: line 1"
                                        + " '50% orders.dubbo:http': the port 'http' is not a number in 1..65535",
                                bad + ":6: Ingress default/bad: metadata.annotations[higress.io/destination]: line 2"
                                        + " '50%': a weight without a host",
                                bad + ":17: Ingress extensions/v1beta1 is not read; write apiVersion:"
                                        + " networking.k8s.io/v1"));
    }

    @Test
    void unknownDestination_reportedOnTheIngress_thenResolved() throws IOException {
        write(
                "orders.yaml",
                Manifests.registryIngress("shop", "orders", "shop.example.com", "/orders", "orders.dubbo"));
        start();
        catalog = new TestCatalog();
        catalog.aggregator().subscribe(controller.destinations()).join();
        awaitRoutes("shop.example.com Prefix /orders -> 100 orders.dubbo [shop/orders]");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(controller.issues().issues("shop", "orders"))
                        .containsExactly(new Issue(
                                Issue.UNKNOWN_DESTINATION,
                                "destination orders.dubbo is not in the catalog; route shop.example.com Prefix /orders"
                                        + " answers 503 until it appears")));

        catalog.aggregator()
                .accept(new ServiceUpsert(
                        ServiceKey.of("test", "zk1", "orders"),
                        "orders.dubbo",
                        List.of(new ServicePort("dubbo", 20880, Protocol.DUBBO)),
                        List.of(Endpoint.builder("10.0.0.1")
                                .port("dubbo", 20880)
                                .build())));
        await().atMost(WAIT)
                .untilAsserted(() ->
                        assertThat(controller.issues().issues("shop", "orders")).isEmpty());
        assertThat(controller.destinations().missingCount()).isZero();
    }

    @Test
    void kubectlListOutput_itemsAreRead() throws IOException {
        write("list.yaml", """
                apiVersion: v1
                kind: List
                items:
                - apiVersion: networking.k8s.io/v1
                  kind: Ingress
                  metadata: {name: one, namespace: shop, creationTimestamp: "2024-05-01T00:00:00Z", uid: abc}
                  spec:
                    rules:
                    - http:
                        paths: [{path: /one, pathType: Exact, backend: {service: {name: one, port: {number: 80}}}}]
                  status: {loadBalancer: {}}
                """);
        start();
        awaitRoutes("* Exact /one -> 100 svc:one.shop.svc.cluster.local:80 [shop/one]");
    }

    @Test
    void rewriteAnnotations_giveEveryPathOfTheRulesItsRewrite_notTheDefaultBackend() throws IOException {
        write("rewrite.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: dubbo
                  namespace: shop
                  annotations: {meshbridge.dev/rewrite-target: /api}
                spec:
                  defaultBackend: {service: {name: web, port: {number: 80}}}
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - {path: /dubbo, pathType: Prefix, backend: {resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: orders.dubbo}}}
                ---
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: nginx-style
                  namespace: shop
                  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}
                spec:
                  rules:
                  - host: legacy.example.com
                    http:
                      paths:
                      - {path: /app, pathType: ImplementationSpecific, backend: {service: {name: app, port: {number: 8080}}}}
                      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 8080}}}}
                """);
        start();
        awaitRoutes(
                "legacy.example.com Prefix / -> 100 svc:app.shop.svc.cluster.local:8080 [shop/nginx-style]",
                "legacy.example.com Prefix /app -> 100 svc:app.shop.svc.cluster.local:8080 rewrite path / [shop/nginx-style]",
                "shop.example.com Prefix /dubbo -> 100 orders.dubbo rewrite prefix /api [shop/dubbo]",
                "default -> 100 svc:web.shop.svc.cluster.local:80 [shop/dubbo]");

        write("rewrite.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: dubbo
                  namespace: shop
                  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /$1}
                spec:
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - {path: /dubbo/(.*), pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
                """);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(controller.refusedFiles().values())
                        .singleElement()
                        .asString()
                        .contains("rewrite-target]: uses capture groups or variables ('/$1')")
                        .contains("spec.rules[0].http.paths[0].path: '/dubbo/(.*)' is a regular expression"));
        // the file's last valid version stays in effect
        assertThat(RouteTables.routes(controller.routes().current()))
                .contains("shop.example.com Prefix /dubbo -> 100 orders.dubbo rewrite prefix /api [shop/dubbo]");
    }
}
