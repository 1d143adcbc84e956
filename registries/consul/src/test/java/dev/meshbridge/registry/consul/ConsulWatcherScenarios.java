package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.kiwiproject.consul.model.agent.ImmutableRegCheck;
import org.kiwiproject.consul.model.agent.ImmutableRegistration;
import org.kiwiproject.consul.model.agent.Registration;
import org.kiwiproject.consul.model.catalog.ImmutableCatalogDeregistration;
import org.kiwiproject.consul.model.catalog.ImmutableCatalogRegistration;
import org.kiwiproject.consul.model.catalog.ImmutableServiceWeights;
import org.kiwiproject.consul.model.health.ImmutableService;

/**
 * The Consul scenarios, run against every {@link ConsulEnvironment}: a real {@link ConsulWatcher}, configured from
 * YAML as a user writes it, feeding a real aggregator ({@link TestCatalog}); applications register with the real
 * kiwiproject client the way Spring Cloud Consul does; every assertion is on the catalog a user sees or the registry
 * status {@code /ready} shows. Each test uses its own service name prefix, so environments may be shared.
 */
abstract class ConsulWatcherScenarios {

    private static final AtomicInteger RUN = new AtomicInteger();

    private final List<RegistryWatcher> watchers = new ArrayList<>();
    private final List<Runnable> cleanup = new ArrayList<>();
    private TestCatalog catalog;
    private String prefix;

    @TempDir
    Path tmp;

    /** The Consul these scenarios run against. */
    protected abstract ConsulEnvironment env();

    @BeforeEach
    void newCatalog() {
        catalog = new TestCatalog();
        prefix = "t" + RUN.incrementAndGet() + "-";
    }

    @AfterEach
    void closeAll() {
        watchers.forEach(RegistryWatcher::close);
        watchers.clear();
        Collections.reverse(cleanup);
        for (Runnable r : cleanup) {
            try {
                r.run();
            } catch (RuntimeException e) {
                // already gone
            }
        }
        cleanup.clear();
        catalog.close();
        afterScenario();
    }

    /** Runs after the watchers are closed and the registrations removed (JUnit runs a subclass's own after-each first). */
    protected void afterScenario() {}

    // ------------------------------------------------------------------ helpers

    String svc(String name) {
        return prefix + name;
    }

    String host(String name, String dc) {
        return prefix + name + "." + dc + ".consul";
    }

    String dc1() {
        return env().firstDatacenter();
    }

    String dc2() {
        return env().secondDatacenter();
    }

    /** Starts a watcher from a {@code bridge.yaml} entry; {@code extra} lines are further fields of the entry. */
    RegistryStatus watch(String name, String... extra) throws Exception {
        return watch(name, List.of(env().address()), "consulToken: " + env().managementToken(), extra);
    }

    RegistryStatus watch(String name, List<String> addresses, String tokenLine, String... extra) throws Exception {
        return watch(WatcherRuntime.system(), name, addresses, tokenLine, extra);
    }

    /** As {@link #watch(String, String...)}, with time and host-name lookups from {@code runtime}. */
    RegistryStatus watch(WatcherRuntime runtime, String name, String... extra) throws Exception {
        return watch(runtime, name, List.of(env().address()), "consulToken: " + env().managementToken(), extra);
    }

    RegistryStatus watch(WatcherRuntime runtime, String name, List<String> addresses, String tokenLine, String... extra)
            throws Exception {
        StringBuilder yaml = new StringBuilder("registries:\n")
                .append("  - type: consul\n")
                .append("    name: ")
                .append(name)
                .append('\n')
                .append("    addresses: ")
                .append(addresses)
                .append('\n')
                .append("    consulRefreshInterval: 2s\n")
                .append("    serviceAllowlist: ['")
                .append(prefix)
                .append("*']\n");
        if (tokenLine != null) yaml.append("    ").append(tokenLine).append('\n');
        for (String line : extra) yaml.append("    ").append(line).append('\n');
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml.toString());
        ConsulRegistryProvider provider = new ConsulRegistryProvider();
        List<RegistryConfig> configs = RegistriesConfig.parse(root, Map.of(provider.type(), provider));
        root.finish();
        WatcherContext base = catalog.context(configs.get(0));
        WatcherContext context = new WatcherContext(base.config(), base.events(), base.status(), runtime);
        RegistryWatcher watcher = provider.create(configs.get(0), context);
        watchers.add(watcher);
        watcher.start();
        return context.status();
    }

    /** A registration as Spring Cloud Consul sends it: id {@code <app>-<port>}, tag {@code secure=false}, meta. */
    ImmutableRegistration.Builder springApp(String app, int port, Map<String, String> meta) {
        String id = svc(app) + "-" + port;
        return ImmutableRegistration.builder()
                .id(id)
                .name(svc(app))
                .address("127.0.0.1")
                .port(port)
                .addTags("secure=false")
                .putAllMeta(meta)
                .check(ImmutableRegCheck.builder()
                        .http(env().app().url(id))
                        .interval("1s")
                        .timeout("2s")
                        .deregisterCriticalServiceAfter("30m")
                        .build());
    }

    /** An instance with a TTL check (Spring Cloud Consul's heartbeat mode), set passing. */
    String ttlInstance(String app, String id, String address, int port, ImmutableRegistration.Builder extra)
            throws Exception {
        String fullId = svc(id);
        register(extra.id(fullId).name(svc(app)).address(address).port(port).check(Registration.RegCheck.ttl(60)));
        env().client().agentClient().pass(fullId);
        return fullId;
    }

    String ttlInstance(String app, String id, String address, int port) throws Exception {
        return ttlInstance(app, id, address, port, ImmutableRegistration.builder());
    }

    void register(ImmutableRegistration.Builder registration) {
        Registration r = registration.build();
        env().client().agentClient().register(r);
        cleanup.add(() -> env().client().agentClient().deregister(r.getId()));
    }

    void deregister(String id) {
        env().client().agentClient().deregister(id);
    }

    /** Registers through the catalog API into another datacenter, as a WAN-federated operator can. */
    void registerInDatacenter(String dc, String node, String address, String app, String id, Map<String, String> meta) {
        env().client()
                .catalogClient()
                .register(ImmutableCatalogRegistration.builder()
                        .datacenter(dc)
                        .node(node)
                        .address(address)
                        .service(ImmutableService.builder()
                                .id(svc(id))
                                .service(svc(app))
                                .address(address)
                                .port(8080)
                                .putAllMeta(meta)
                                .build())
                        .build());
        cleanup.add(() -> env().client()
                .catalogClient()
                .deregister(ImmutableCatalogDeregistration.builder()
                        .datacenter(dc)
                        .node(node)
                        .build()));
    }

    /** A raw agent registration, as {@code consul services register} sends it (for fields the client lacks). */
    void registerRaw(String json, String id) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://" + env().address() + "/v1/agent/service/register"))
                                .header("X-Consul-Token", env().managementToken())
                                .PUT(HttpRequest.BodyPublishers.ofString(json))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        cleanup.add(() -> env().client().agentClient().deregister(id));
    }

    MeshService awaitService(String host, Predicate<MeshService> condition) {
        return catalog.awaitService(host, condition);
    }

    static Predicate<MeshService> endpoints(int n) {
        return s -> s.endpoints().size() == n;
    }

    static Predicate<MeshService> only(Predicate<Endpoint> e) {
        return s -> s.endpoints().size() == 1 && e.test(s.endpoints().get(0));
    }

    static void awaitState(RegistryStatus status, RegistryStatus.State state) {
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == state);
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    // ------------------------------------------------------------------ scenarios

    @Test
    void newService_registeredLikeSpringCloud_appearsWithItsEndpoint() throws Exception {
        register(springApp("orders", 8081, Map.of("zone", "zone-a", "version", "1.4.2")));
        RegistryStatus status = watch("c1");

        MeshService orders = awaitService(host("orders", dc1()), only(e -> e.health() == Health.HEALTHY));

        assertThat(orders.ports()).containsExactly(new ServicePort("http", 80, Protocol.HTTP));
        Endpoint e = orders.endpoints().get(0);
        assertThat(e.address()).isEqualTo("127.0.0.1");
        assertThat(e.ports()).containsExactly(Map.entry("http", 8081));
        assertThat(e.weight()).isEqualTo(Endpoint.DEFAULT_WEIGHT);
        assertThat(e.locality()).isEqualTo(Locality.of(dc1(), "zone-a"));
        assertThat(e.labels()).containsEntry("secure", "false").containsEntry("version", "1.4.2");
        await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);

        register(springApp("billing", 8082, Map.of()));
        awaitService(host("billing", dc1()), only(x -> x.port("http") == 8082 && x.health() == Health.HEALTHY));
    }

    @Test
    void httpCheckFailing_marksTheInstanceUnhealthy_andRecovering_healthyAgain() throws Exception {
        ImmutableRegistration.Builder app = springApp("orders", 8081, Map.of());
        register(app);
        String id = app.build().getId();
        watch("c1");
        awaitService(host("orders", dc1()), only(e -> e.health() == Health.HEALTHY));

        env().app().status(id, 503);
        awaitService(host("orders", dc1()), only(e -> e.health() == Health.UNHEALTHY));

        env().app().status(id, 200);
        awaitService(host("orders", dc1()), only(e -> e.health() == Health.HEALTHY));
    }

    @Test
    void instancesUpAndDown_followRegistrations_andTheLastOneRemovesTheService() throws Exception {
        String a = ttlInstance("web", "web-a", "10.0.0.1", 8080);
        watch("c1");
        awaitService(host("web", dc1()), endpoints(1));

        String b = ttlInstance("web", "web-b", "10.0.0.2", 8080);
        MeshService two = awaitService(host("web", dc1()), endpoints(2));
        assertThat(two.endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.1", "10.0.0.2");

        deregister(a);
        MeshService one = awaitService(host("web", dc1()), endpoints(1));
        assertThat(one.endpoints().get(0).address()).isEqualTo("10.0.0.2");

        deregister(b);
        catalog.awaitAbsent(host("web", dc1()));
    }

    @Test
    void health_passingWarningCritical_setHealthAndWeight() throws Exception {
        String id = ttlInstance(
                "pay",
                "pay-1",
                "10.0.0.1",
                8080,
                ImmutableRegistration.builder()
                        .serviceWeights(ImmutableServiceWeights.builder()
                                .passing(3)
                                .warning(1)
                                .build()));
        watch("c1");
        awaitService(host("pay", dc1()), only(e -> e.health() == Health.HEALTHY && e.weight() == 300));

        env().client().agentClient().warn(id);
        awaitService(host("pay", dc1()), only(e -> e.health() == Health.HEALTHY && e.weight() == 100));

        env().client().agentClient().fail(id);
        MeshService failed = awaitService(host("pay", dc1()), only(e -> e.health() == Health.UNHEALTHY));
        assertThat(failed.endpoints().get(0).routable()).isTrue();

        env().client().agentClient().pass(id);
        awaitService(host("pay", dc1()), only(e -> e.health() == Health.HEALTHY && e.weight() == 300));
    }

    @Test
    void sameAddressAndPortTwice_thePassingInstanceWins_evenWhenTheCriticalOneHasTheFirstId() throws Exception {
        // a process re-registered under a new id while its old registration lingers with a failing check
        String stale = ttlInstance("dup", "dup-a", "10.0.0.7", 8080);
        env().client().agentClient().fail(stale);
        ttlInstance("dup", "dup-b", "10.0.0.7", 8080);
        RegistryStatus status = watch("c1");

        MeshService dup = awaitService(host("dup", dc1()), endpoints(1));
        await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);
        assertThat(catalog.service(host("dup", dc1())).endpoints())
                .singleElement()
                .satisfies(e -> {
                    assertThat(e.address()).isEqualTo("10.0.0.7");
                    assertThat(e.health()).isEqualTo(Health.HEALTHY);
                });
        assertThat(dup.routableEndpoints()).hasSize(1);
    }

    @Test
    void instanceRegisteredUnderAHostName_likeSpringCloudConsulWithoutPreferIp_getsTrafficAtItsAddress()
            throws Exception {
        ttlInstance("named", "named-1", "localhost", 8080);
        ttlInstance("named", "named-2", "10.0.0.8", 8080);
        watch("c1");

        MeshService named = awaitService(host("named", dc1()), endpoints(2));

        assertThat(named.endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.8", "127.0.0.1");
        assertThat(named.routableEndpoints()).hasSize(2);
    }

    @Test
    void nonIpAddressSkip_leavesHostNameInstancesOut_andReportsThem() throws Exception {
        ttlInstance("named", "named-1", "localhost", 8080);
        ttlInstance("named", "named-2", "10.0.0.8", 8080);
        RegistryStatus status = watch("c1", "nonIpAddress: skip");

        MeshService named = awaitService(host("named", dc1()), endpoints(1));

        assertThat(named.endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.8");
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.skippedCount() > 0);
    }

    @Test
    void warningHealthUnhealthy_takesWarningInstancesOutOfTraffic() throws Exception {
        String id = ttlInstance("pay", "pay-1", "10.0.0.1", 8080);
        watch("c1", "warningHealth: unhealthy");
        awaitService(host("pay", dc1()), only(e -> e.health() == Health.HEALTHY));

        env().client().agentClient().warn(id);

        awaitService(host("pay", dc1()), only(e -> e.health() == Health.UNHEALTHY));
    }

    @Test
    void maintenanceMode_drainsTheInstance() throws Exception {
        String id = ttlInstance("pay", "pay-1", "10.0.0.1", 8080);
        watch("c1");
        awaitService(host("pay", dc1()), only(e -> e.health() == Health.HEALTHY));

        env().client().agentClient().toggleMaintenanceMode(id, true, "deploying");
        awaitService(host("pay", dc1()), only(e -> e.health() == Health.DRAINING));

        env().client().agentClient().toggleMaintenanceMode(id, false, "");
        awaitService(host("pay", dc1()), only(e -> e.health() == Health.HEALTHY));
    }

    @Test
    void tagsAndMeta_becomeSanitizedLabels_andMetaProtocolNamesThePort() throws Exception {
        ttlInstance(
                "api",
                "api-1",
                "10.0.0.1",
                9090,
                ImmutableRegistration.builder()
                        .addTags("secure=false", "canary", "version=v1", "bad tag!")
                        .putMeta("version", "v2")
                        .putMeta("team", "payments")
                        .putMeta("protocol", "grpc")
                        .putMeta("notes", "x".repeat(80)));
        RegistryStatus status = watch("c1");

        MeshService api = awaitService(host("api", dc1()), endpoints(1));

        assertThat(api.ports()).containsExactly(new ServicePort("grpc", 50051, Protocol.GRPC));
        assertThat(api.endpoints().get(0).ports()).containsExactly(Map.entry("grpc", 9090));
        assertThat(api.endpoints().get(0).labels())
                .containsEntry("secure", "false")
                .containsEntry("canary", "true")
                .containsEntry("version", "v2")
                .containsEntry("team", "payments")
                .containsEntry("bad_tag", "true")
                .doesNotContainKey("notes");
        assertThat(status.droppedLabelCount()).isPositive();
    }

    @Test
    void tagFilter_keepsTaggedServicesAndOnlyTheirTaggedInstances() throws Exception {
        ttlInstance(
                "a", "a-1", "10.0.0.1", 8080, ImmutableRegistration.builder().addTags("MESH"));
        ttlInstance(
                "a", "a-2", "10.0.0.2", 8080, ImmutableRegistration.builder().addTags("internal"));
        ttlInstance(
                "b", "b-1", "10.0.0.3", 8080, ImmutableRegistration.builder().addTags("internal"));
        RegistryStatus status = watch("c1", "consulServiceTag: mesh");

        MeshService a = awaitService(host("a", dc1()), endpoints(1));

        assertThat(a.endpoints().get(0).address()).isEqualTo("10.0.0.1");
        await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);
        assertThat(catalog.snapshot().services()).containsOnlyKeys(host("a", dc1()));
    }

    @Test
    void allowAndDenyPatterns_selectServicesByName() throws Exception {
        ttlInstance("shop-web", "w-1", "10.0.0.1", 8080);
        ttlInstance("shop-admin", "ad-1", "10.0.0.2", 8080);
        ttlInstance("other", "o-1", "10.0.0.3", 8080);
        RegistryStatus status = watch("c1", "serviceDenylist: ['*-admin', consul]");

        awaitService(host("shop-web", dc1()), endpoints(1));
        await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);

        assertThat(catalog.snapshot().services()).containsOnlyKeys(host("shop-web", dc1()), host("other", dc1()));
    }

    @Test
    void connectSidecarProxies_areLeftOut() throws Exception {
        String web = ttlInstance("web", "web-1", "10.0.0.1", 8080);
        registerRaw(
                "{\"Kind\":\"connect-proxy\",\"Name\":\"" + svc("web-sidecar-proxy") + "\",\"ID\":\""
                        + svc("web-proxy-1")
                        + "\",\"Address\":\"10.0.0.1\",\"Port\":21000,\"Proxy\":{\"DestinationServiceName\":\""
                        + svc("web") + "\",\"DestinationServiceID\":\"" + web + "\",\"LocalServicePort\":8080}}",
                svc("web-proxy-1"));
        RegistryStatus status = watch("c1");

        awaitService(host("web", dc1()), endpoints(1));
        await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);

        assertThat(catalog.snapshot().services()).containsOnlyKeys(host("web", dc1()));
    }

    @Test
    void twoDatacenters_giveOneHostEachWithTheDatacenterAsLocality() throws Exception {
        ttlInstance("web", "web-1", "10.1.0.1", 8080);
        registerInDatacenter(dc2(), prefix + "node-b", "10.2.0.1", "web", "web-2", Map.of("zone", "b1"));
        watch("c1", "consulDatacenter: [" + dc1() + ", " + dc2() + "]");

        MeshService first = awaitService(host("web", dc1()), endpoints(1));
        MeshService second = awaitService(host("web", dc2()), endpoints(1));

        assertThat(first.endpoints().get(0).locality()).isEqualTo(Locality.of(dc1(), ""));
        assertThat(second.endpoints().get(0).address()).isEqualTo("10.2.0.1");
        assertThat(second.endpoints().get(0).locality()).isEqualTo(Locality.of(dc2(), "b1"));
    }

    @Test
    void twoDatacentersUnderOneHost_mergeTheirEndpointsByLocality() throws Exception {
        ttlInstance("web", "web-1", "10.1.0.1", 8080);
        registerInDatacenter(dc2(), prefix + "node-b", "10.2.0.1", "web", "web-2", Map.of());
        watch("c1", "consulDatacenter: [" + dc1() + ", " + dc2() + "]", "hostTemplate: '{service}.global.consul'");

        MeshService web = awaitService(prefix + "web.global.consul", endpoints(2));

        assertThat(web.endpoints()).extracting(e -> e.locality().region()).containsExactlyInAnyOrder(dc1(), dc2());
    }

    @Test
    void consulRestart_keepsTheLastStateWhileDown_thenResumes() throws Exception {
        ttlInstance("web", "web-a", "10.0.0.1", 8080);
        RegistryStatus status = watch("c1");
        MeshService before = awaitService(host("web", dc1()), endpoints(1));
        awaitState(status, RegistryStatus.State.UP);

        env().stopConsul();
        awaitState(status, RegistryStatus.State.DOWN);
        assertThat(catalog.service(host("web", dc1()))).isEqualTo(before);
        assertThat(status.lastError()).contains("cannot reach Consul");

        env().startConsul();
        ttlInstance("web", "web-a", "10.0.0.1", 8080);
        ttlInstance("web", "web-b", "10.0.0.2", 8080);
        awaitService(host("web", dc1()), endpoints(2));
        awaitState(status, RegistryStatus.State.UP);
    }

    @Test
    void wrongToken_isRefusedClearly_andAFixedTokenFileRecovers() throws Exception {
        ttlInstance("web", "web-1", "10.0.0.1", 8080);
        Path tokenFile = tmp.resolve("consul-token");
        Files.writeString(tokenFile, "not-the-token\n");
        RegistryStatus status = watch("c1", List.of(env().address()), "consulToken: {file: " + tokenFile + "}");

        awaitState(status, RegistryStatus.State.DOWN);
        assertThat(status.lastError()).contains("refused the ACL token").contains("ACL not found");
        assertThat(status.lastError()).doesNotContain("not-the-token");
        assertThat(catalog.snapshot().services()).isEmpty();

        Files.writeString(tokenFile, env().managementToken() + "\n");
        awaitService(host("web", dc1()), endpoints(1));
        awaitState(status, RegistryStatus.State.UP);
    }

    @Test
    void enterpriseNamespaceAgainstConsulCe_isReportedClearly() throws Exception {
        RegistryStatus status = watch("c1", "consulNamespace: team-a");

        awaitState(status, RegistryStatus.State.DOWN);

        assertThat(status.lastError()).contains("400").contains("Namespaces are a Consul Enterprise feature");
    }

    @Test
    void severalAddresses_failOverToOneThatAnswers() throws Exception {
        ttlInstance("web", "web-1", "10.0.0.1", 8080);
        String dead = "127.0.0.1:" + freePort();

        RegistryStatus status = watch("c1", List.of(dead, env().address()), "consulToken: " + env().managementToken());

        awaitService(host("web", dc1()), endpoints(1));
        awaitState(status, RegistryStatus.State.UP);
    }
}
