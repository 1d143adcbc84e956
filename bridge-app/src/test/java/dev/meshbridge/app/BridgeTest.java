package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BridgeTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    private final HttpClient http = HttpClient.newHttpClient();
    private Bridge bridge;

    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        if (bridge != null) bridge.close();
    }

    private Bridge start(String yaml) throws Exception {
        Path file = dir.resolve("bridge.yaml");
        Files.writeString(file, yaml);
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
        return bridge;
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort() + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private void rewrite(String yaml) throws Exception {
        Files.writeString(dir.resolve("bridge.yaml"), yaml);
        bridge.checkConfigFile();
    }

    private static String config(String registries) {
        return "admin: {port: 0}\nxds: {port: 0, bindAddress: 127.0.0.1}\nmcp: {port: 0, bindAddress: 127.0.0.1}\nreload: {interval: 1h}\nregistries:\n"
                + registries;
    }

    @Test
    void admin_servesReadyHealthMetricsAndCatalog() throws Exception {
        start(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [orders, users]
                """));
        await().atMost(Duration.ofSeconds(60)).until(() -> get("/ready").statusCode() == 200);
        assertThat(get("/ready").body()).contains("\"ready\" : true").contains("\"services\" : 2");
        assertThat(get("/healthz").body()).contains("\"name\" : \"one\"").contains("\"state\" : \"UP\"");

        String metrics = get("/metrics").body();
        assertThat(metrics)
                .contains("meshbridge_registry_services{registry=\"one\",type=\"fixed\"} 2.0")
                .contains("meshbridge_registry_instances{registry=\"one\",type=\"fixed\"} 2.0")
                .contains("meshbridge_registry_up{registry=\"one\",type=\"fixed\"} 1.0")
                .contains("meshbridge_registry_skipped_total{registry=\"one\",type=\"fixed\"} 0.0")
                .contains("meshbridge_catalog_services 2.0");

        HttpResponse<String> catalog = get("/debug/catalog?service=orders");
        assertThat(catalog.statusCode()).isEqualTo(200);
        assertThat(catalog.body())
                .contains("\"host\" : \"orders.fixed\"")
                .doesNotContain("users.fixed")
                .contains("\"address\" : \"10.0.0.1\"")
                .contains("\"routable\" : true");
        assertThat(get("/debug/catalog?registry=nope").body()).contains("\"shown\" : 0");
        assertThat(get("/debug/registries").body())
                .contains("\"name\" : \"one\"")
                .contains("\"synced\" : true");
        assertThat(get("/debug/xds").statusCode()).isEqualTo(200);
        assertThat(get("/debug/mcp").statusCode()).isEqualTo(200);
        assertThat(get("/debug/nothing").statusCode()).isEqualTo(404);
        assertThat(get("/").body()).contains("/debug/catalog");
    }

    @Test
    void debugRegistries_showsTheHostTemplatesInForce() throws Exception {
        try (ZkServer zk = new ZkServer()) {
            start(config("""
                      - type: zookeeper
                        name: zk
                        addresses: ["%s"]
                        springCloudHostTemplate: "{service}.spring"
                    """.formatted(zk.address())));

            String body = get("/debug/registries").body();

            assertThat(body)
                    .contains("\"springCloudHost\" : \"{service}.spring\"")
                    .contains("\"dubboInterfaceHost\" : \"" + DubboNaming.DEFAULT_INTERFACE_TEMPLATE + "\"")
                    .contains("\"dubboApplicationHost\" : \"" + DubboNaming.DEFAULT_APPLICATION_TEMPLATE + "\"")
                    .doesNotContain("{ }");
            bridge.close();
            bridge = null;
        }
    }

    @Test
    void aHostServedByTwoRegistries_showsEveryShardOnTheDebugPage_andIsCounted() throws Exception {
        start(config("""
                  - type: fixed
                    name: zk-old
                    addresses: [x]
                    services: [orders, users]
                  - type: fixed
                    name: nacos-new
                    addresses: [x]
                    ip: 10.0.0.2
                    services: [orders]
                """));
        await().atMost(Duration.ofSeconds(60)).until(() -> get("/ready").statusCode() == 200);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> get("/metrics").body().contains("meshbridge_catalog_shared_hosts 1.0"));

        String shared = get("/debug/catalog?shared=true").body();
        assertThat(shared)
                .contains("\"sharedHosts\" : 1")
                .contains("\"shown\" : 1")
                .contains("\"host\" : \"orders.fixed\"")
                .contains("\"registry\" : \"zk-old\"")
                .contains("\"registry\" : \"nacos-new\"")
                .doesNotContain("users.fixed");
        com.fasterxml.jackson.databind.JsonNode orders = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(shared)
                .path("items")
                .get(0);
        List<String> shards = new ArrayList<>();
        orders.path("shards")
                .forEach(n -> shards.add(
                        n.path("registry").asText() + "=" + n.path("endpoints").asInt()));
        assertThat(shards).containsExactly("nacos-new=1", "zk-old=1");
        assertThat(orders.path("endpoints").findValuesAsText("address")).containsExactly("10.0.0.1", "10.0.0.2");
    }

    @Test
    void ready_isUnavailableWhileARegistryHasNotSynced_andNamesIt() throws Exception {
        start(config("""
                  - type: fixed
                    name: quick
                    addresses: [x]
                    services: [a]
                  - type: fixed
                    name: slow
                    addresses: [x]
                    services: [b]
                    sync: false
                    syncTimeout: 1h
                """));
        HttpResponse<String> ready = get("/ready");
        assertThat(ready.statusCode()).isEqualTo(503);
        assertThat(ready.body()).contains("\"waitingForFirstSync\" : [ \"slow\" ]");
        assertThat(bridge.ready()).isFalse();
    }

    @Test
    void ready_aRegistryPastItsSyncTimeout_noLongerHoldsReadiness() throws Exception {
        start(config("""
                  - type: fixed
                    name: slow
                    addresses: [x]
                    services: [b]
                    sync: false
                    syncTimeout: 200ms
                """));
        await().atMost(Duration.ofSeconds(60)).until(() -> get("/ready").statusCode() == 200);
    }

    @Test
    void reload_restartsOnlyChangedRegistries_andRemovesDeletedOnes() throws Exception {
        start(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                  - type: fixed
                    name: two
                    addresses: [x]
                    services: [b]
                """));
        await().until(() -> bridge.aggregator().current().serviceCount() == 2);
        int starts = FixedRegistryProvider.STARTS.get();
        int stops = FixedRegistryProvider.STOPS.get();

        rewrite(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                  - type: fixed
                    name: two
                    addresses: [x]
                    services: [b, c]
                    ip: 10.0.0.7
                  - type: fixed
                    name: three
                    addresses: [x]
                    services: [d]
                """));
        await().until(() -> bridge.aggregator()
                .current()
                .services()
                .keySet()
                .containsAll(java.util.List.of("a.fixed", "b.fixed", "c.fixed", "d.fixed")));
        assertThat(FixedRegistryProvider.STARTS.get() - starts)
                .as("two restarted, three started; one untouched")
                .isEqualTo(2);
        assertThat(FixedRegistryProvider.STOPS.get() - stops).isEqualTo(1);
        assertThat(bridge.aggregator().current().service("b.fixed").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.7");

        rewrite(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                """).replace("reload: {interval: 1h}", "reload: {interval: 1h, confirmRemoval: [two, three]}"));
        await().until(() -> bridge.aggregator().current().services().keySet().equals(java.util.Set.of("a.fixed")));
        assertThat(get("/metrics").body()).doesNotContain("registry=\"two\"").contains("registry=\"one\"");
    }

    @Test
    void ingressDirectory_routesReachTheSnapshot_andTheDebugPage() throws Exception {
        Path ingresses = Files.createDirectories(dir.resolve("ingress"));
        Files.writeString(ingresses.resolve("orders.yaml"), """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: orders
                  namespace: shop
                  annotations:
                    meshbridge.dev/destination: |
                      80% orders.fixed
                      20% users.fixed
                spec:
                  ingressClassName: meshbridge
                  rules:
                  - http:
                      paths:
                      - path: /orders
                        pathType: Prefix
                        backend:
                          resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: orders.fixed}
                """);
        start("ingress: {directory: {path: '" + ingresses + "'}}\n" + config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [orders, users]
                """));
        await().atMost(Duration.ofSeconds(20))
                .until(() -> !bridge.aggregator().current().routes().isEmpty());
        var route = bridge.aggregator().current().routes().routes().get(0);
        assertThat(route.match().path()).isEqualTo("/orders");
        assertThat(route.destinations()).extracting(d -> d.weight()).containsExactly(80, 20);
        assertThat(bridge.aggregator().current().routes().registryHosts())
                .containsExactly("orders.fixed", "users.fixed");
        assertThat(get("/debug/ingress").body()).contains("shop").contains("orders");
    }

    @Test
    void reload_badEdit_isRefusedAndRunningStateKept() throws Exception {
        start(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                """));
        await().until(() -> bridge.aggregator().current().serviceCount() == 1);
        int starts = FixedRegistryProvider.STARTS.get();
        rewrite(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    servics: [a, b]
                """));
        assertThat(bridge.reconciler().running())
                .singleElement()
                .satisfies(r -> assertThat(r.config().name()).isEqualTo("one"));
        assertThat(bridge.aggregator().flushNow().join().services().keySet()).containsExactly("a.fixed");
        assertThat(FixedRegistryProvider.STARTS.get()).isEqualTo(starts);
    }

    @Test
    void ready_staysAvailable_whileAWatcherRestartedByAnEditResyncs() throws Exception {
        start(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                """));
        await().atMost(Duration.ofSeconds(60)).until(() -> get("/ready").statusCode() == 200);

        // the edit restarts the watcher; the new one does not sync (yet): the old state is still served
        rewrite(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                    sync: false
                    syncTimeout: 1h
                  - type: fixed
                    name: added
                    addresses: [x]
                    services: [b]
                """));
        await().until(() -> bridge.aggregator().current().service("b.fixed") != null);
        HttpResponse<String> ready = get("/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).contains("\"ready\" : true").contains("\"resyncing\" : [ \"one\" ]");
        assertThat(bridge.aggregator().current().service("a.fixed")).isNotNull();

        // a registry that never synced is not ready, edit or not ("added" stays: removing it needs a confirmation)
        rewrite(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                    sync: false
                    syncTimeout: 1h
                  - type: fixed
                    name: added
                    addresses: [x]
                    services: [b]
                  - type: fixed
                    name: fresh
                    addresses: [x]
                    services: [c]
                    sync: false
                    syncTimeout: 1h
                """));
        await().until(() -> get("/ready").statusCode() == 503);
        assertThat(get("/ready").body()).contains("\"waitingForFirstSync\" : [ \"fresh\" ]");
    }

    private HttpResponse<String> post(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort() + path))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) b.header("Authorization", authorization);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void adminRelease_fromLoopback_answersWhatTheGuardHolds_orWhyNot() throws Exception {
        start(config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                """));
        HttpResponse<String> nothing = post("/admin/registries/one/release", null);
        assertThat(nothing.statusCode()).isEqualTo(409);
        assertThat(nothing.body()).contains("the deletion guard holds nothing");
        HttpResponse<String> unknown = post("/admin/registries/n%0Aope/release", null);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("no registry named n\\\\nope").doesNotContain("named n\nope");
        assertThat(post("/admin/registries/one/forget", null).statusCode()).isEqualTo(404);
        assertThat(get("/admin/registries/one/release").statusCode()).isEqualTo(405);
        assertThat(get("/").body()).contains("POST /admin/registries/...");
    }

    @Test
    void adminRelease_withAnAdminToken_needsTheToken() throws Exception {
        start("admin: {port: 0, token: s3cret-token}\n" + config("""
                  - type: fixed
                    name: one
                    addresses: [x]
                    services: [a]
                """).substring("admin: {port: 0}\n".length()));
        HttpResponse<String> without = post("/admin/registries/one/release", null);
        assertThat(without.statusCode()).isEqualTo(403);
        assertThat(without.body())
                .contains("admin actions need the admin token")
                .doesNotContain("s3cret");
        assertThat(post("/admin/registries/one/release", "Bearer wrong").statusCode())
                .isEqualTo(403);
        assertThat(post("/admin/registries/one/release", "Bearer s3cret-token").statusCode())
                .isEqualTo(409);
    }

    @Test
    void adminActions_withoutAToken_areRefusedFromOtherAddresses() throws Exception {
        java.net.InetAddress remote = java.net.InetAddress.getByName("192.0.2.7");
        assertThat(dev.meshbridge.app.admin.AdminServer.refusal(remote, null, null))
                .contains("loopback addresses only")
                .contains("admin.token");
        assertThat(dev.meshbridge.app.admin.AdminServer.refusal(java.net.InetAddress.getLoopbackAddress(), null, null))
                .isNull();
        dev.meshbridge.core.config.Secret token = dev.meshbridge.core.config.Secret.literal("t");
        assertThat(dev.meshbridge.app.admin.AdminServer.refusal(remote, "Bearer t", token))
                .isNull();
        assertThat(dev.meshbridge.app.admin.AdminServer.refusal(remote, "Bearer x", token))
                .isNotNull();
    }

    private static final String TWO_REGISTRIES = config("""
              - type: fixed
                name: one
                addresses: [x]
                services: [a]
              - type: fixed
                name: two
                addresses: [x]
                services: [b]
            """);

    @Test
    void reload_emptyFile_isRefused_andEveryRegistryKeepsServing() throws Exception {
        start(TWO_REGISTRIES);
        await().until(() -> bridge.aggregator().current().serviceCount() == 2);

        rewrite("");

        assertThat(bridge.reconciler().running())
                .extracting(r -> r.config().name())
                .containsExactly("one", "two");
        assertThat(bridge.aggregator().flushNow().join().services().keySet())
                .containsExactlyInAnyOrder("a.fixed", "b.fixed");
        assertThat(get("/metrics").body()).contains("meshbridge_config_reloads_total{result=\"refused\"} 1.0");
    }

    @Test
    void reload_fileCutAfterItsFirstRegistry_isRefused() throws Exception {
        start(TWO_REGISTRIES);
        await().until(() -> bridge.aggregator().current().serviceCount() == 2);

        rewrite(TWO_REGISTRIES.substring(0, TWO_REGISTRIES.indexOf("  - type: fixed\n    name: two")));

        assertThat(bridge.reconciler().running())
                .extracting(r -> r.config().name())
                .containsExactly("one", "two");
        assertThat(bridge.aggregator().flushNow().join().services().keySet())
                .containsExactlyInAnyOrder("a.fixed", "b.fixed");
    }

    /**
     * Every cut of the file (as an editor's save, a ConfigMap update or a copy that failed half way leaves it) keeps
     * every registry running: a cut either does not parse, or removes registries without the confirmation, and is
     * refused. A cut inside the last entry that still parses (its last options missing) is a valid edit of that
     * registry and is applied; the whole file puts it back.
     */
    @Test
    void reload_theFileCutAtAnyByte_neverRemovesARegistry() throws Exception {
        start(TWO_REGISTRIES);
        await().until(() -> bridge.aggregator().current().serviceCount() == 2);
        long refusedBefore = refusedReloads();

        int cuts = 0;
        for (int cut = 0; cut < TWO_REGISTRIES.length() - 1; cut++, cuts++) {
            rewrite(TWO_REGISTRIES.substring(0, cut));
            assertThat(bridge.reconciler().running())
                    .as("registries after a file cut at byte %d", cut)
                    .extracting(r -> r.config().name())
                    .containsExactly("one", "two");
        }
        long refused = refusedReloads() - refusedBefore;
        System.out.printf("file cut at %d bytes: %d edits refused, the others parsed%n", cuts, refused);
        assertThat(refused).isGreaterThan(cuts * 9L / 10);

        rewrite(TWO_REGISTRIES);
        await().until(() ->
                bridge.aggregator().current().services().keySet().equals(java.util.Set.of("a.fixed", "b.fixed")));
    }

    private long refusedReloads() throws Exception {
        String m = get("/metrics").body();
        var matcher = java.util.regex.Pattern.compile("meshbridge_config_reloads_total\\{result=\"refused\"} ([0-9.]+)")
                .matcher(m);
        return matcher.find() ? (long) Double.parseDouble(matcher.group(1)) : 0;
    }

    @Test
    void reload_removingEveryRegistry_needsTheExplicitConfirmation() throws Exception {
        start(TWO_REGISTRIES);
        await().until(() -> bridge.aggregator().current().serviceCount() == 2);

        rewrite("admin: {port: 0}\nreload: {interval: 1h}\nregistries: []\n");
        assertThat(bridge.reconciler().running()).hasSize(2);

        rewrite("admin: {port: 0}\nreload: {interval: 1h, confirmRemoval: [\"*\"]}\nregistries: []\n");
        assertThat(bridge.reconciler().running()).isEmpty();
        await().until(() -> bridge.aggregator().current().serviceCount() == 0);
    }

    @Test
    void reload_renamedRegistry_isMakeBeforeBreak_itsServicesAreNeverMissing() throws Exception {
        start(TWO_REGISTRIES);
        await().until(() -> bridge.aggregator().current().serviceCount() == 2);
        java.util.List<java.util.Set<String>> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        bridge.aggregator()
                .subscribe(s -> seen.add(java.util.Set.copyOf(s.services().keySet())))
                .join();

        rewrite(TWO_REGISTRIES
                .replace("name: two", "name: deux")
                .replace("reload: {interval: 1h}", "reload: {interval: 1h, confirmRemoval: [two]}"));
        await().until(() -> bridge.reconciler().running().stream()
                .map(r -> r.config().name())
                .toList()
                .equals(java.util.List.of("one", "deux")));
        bridge.aggregator().flushNow().join();

        assertThat(seen)
                .isNotEmpty()
                .allSatisfy(services -> assertThat(services).contains("a.fixed", "b.fixed"));
    }

    @Test
    void debugRegistries_withAConsulRegistryAndItsToken_rendersWithTheTokenMasked() throws Exception {
        start(config("""
                  - type: consul
                    name: c1
                    addresses: ["127.0.0.1:1"]
                    consulToken: s3cr3t-token-value
                """));

        HttpResponse<String> page = get("/debug/registries");

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("\"name\" : \"c1\"").doesNotContain("s3cr3t-token-value");
    }

    @Test
    void debugRegistries_everyRegistryTypeWithItsCredentials_rendersWithNoSecretAnywhere() throws Exception {
        start(config("""
                  - type: consul
                    name: c1
                    addresses: ["http://admin:S3cretPass1@127.0.0.1:1"]
                    consulToken: S3cretPass2
                  - type: nacos
                    name: n1
                    addresses: ["127.0.0.1:1"]
                    nacosUsername: nacos
                    nacosPassword: S3cretPass3
                    nacosAccessKey: ak
                    nacosSecretKey: S3cretPass4
                  - type: zookeeper
                    name: z1
                    addresses: ["127.0.0.1:1"]
                    username: dubbo
                    password: S3cretPass5
                  - type: eureka
                    name: e1
                    addresses: ["http://127.0.0.1:1/eureka"]
                    username: eureka
                    password: S3cretPass6
                """));

        HttpResponse<String> page = get("/debug/registries");

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body())
                .contains("\"name\" : \"c1\"", "\"name\" : \"n1\"", "\"name\" : \"z1\"", "\"name\" : \"e1\"")
                .contains("127.0.0.1:1")
                .doesNotContain("S3cretPass");
        assertThat(get("/metrics").body()).doesNotContain("S3cretPass");
    }

    @Test
    void aServerHoldShorterThanARegistrysSyncTimeout_isWarnedAtStart_andAnEqualOneIsNot() throws Exception {
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logs =
                new ch.qos.logback.core.read.ListAppender<>();
        ch.qos.logback.classic.Logger logger =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(Bridge.class);
        logs.start();
        logger.addAppender(logs);
        try {
            start(config("""
                      - type: fixed
                        name: slow
                        addresses: [x]
                        services: [a]
                        syncTimeout: 2m
                    """));
            assertThat(logs.list)
                    .extracting(e -> e.getFormattedMessage())
                    .anySatisfy(m -> assertThat(m)
                            .contains("xds.initialSyncTimeout=PT30S is shorter than registry=slow syncTimeout=PT2M")
                            .contains("raise xds.initialSyncTimeout"));
            bridge.close();
            bridge = null;
            logs.list.clear();

            start(config("""
                      - type: fixed
                        name: quick
                        addresses: [x]
                        services: [a]
                        syncTimeout: 30s
                    """));
            assertThat(logs.list)
                    .extracting(e -> e.getFormattedMessage())
                    .noneMatch(m -> m.contains("initialSyncTimeout"));
        } finally {
            logger.detachAppender(logs);
        }
    }
}
