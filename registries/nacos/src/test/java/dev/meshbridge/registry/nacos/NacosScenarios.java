package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboApplicationInstance;
import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboInterfaceInstance;
import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboServiceName;
import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.pojo.Instance;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TestCatalog;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Nacos watcher's scenarios, written once and run against every kind of server (the protocol-level test server
 * in each followed version, and real Nacos images): real nacos-clients register as applications do, the watcher feeds
 * a real aggregator, and each test asserts the catalog a user would see.
 */
abstract class NacosScenarios {

    /** The Nacos server a scenario runs against. */
    interface ServerHandle extends AutoCloseable {
        /** {@code host:port} of the main (HTTP) port; gRPC is on port + 1000. */
        String address();

        /** Creates a namespace (servers may refuse unknown namespaces). */
        void createNamespace(String id);

        /** Whether the server pushes new services (Nacos 3 fuzzy watch). */
        boolean pushesNewServices();

        /** Stops the server; clients lose their connections. */
        void stop();

        /** Starts it again on the same address. */
        void start();

        @Override
        void close();
    }

    private static final AtomicInteger SEQ = new AtomicInteger();

    /** The server for the current test (started). */
    protected abstract ServerHandle server();

    /** A separate server with authentication enabled, for one user; closed by the caller. */
    protected abstract ServerHandle startServerWithAuth(String username, String password);

    protected TestCatalog catalog;
    protected RegistryStatus status;
    /** Every event the current watcher sent, in order (they also go to the catalog). */
    protected RecordingSink events;

    private final List<AutoCloseable> cleanup = Collections.synchronizedList(new ArrayList<>());
    /** A suffix that makes this test's names unique on a shared server. */
    protected String id;

    @BeforeEach
    void setUpScenario() {
        catalog = new TestCatalog();
        id = "t" + SEQ.incrementAndGet() + "-" + Long.toString(System.nanoTime() % 100_000, 36);
    }

    @AfterEach
    void tearDownScenario() throws Exception {
        List<AutoCloseable> all = new ArrayList<>(cleanup);
        Collections.reverse(all);
        cleanup.clear();
        for (AutoCloseable c : all) c.close();
        catalog.close();
    }

    // ------------------------------------------------------------------ helpers

    /** Closes {@code c} after the test, after everything registered later (so servers outlive their clients). */
    protected void closeAfterTest(AutoCloseable c) {
        cleanup.add(c);
    }

    protected NacosWatcher watchAt(String address, String... fields) {
        RegistryConfig config = NacosTestSupport.config("nacos-" + id, address, fields);
        WatcherContext forCatalog = catalog.context(config);
        RecordingSink recorder = new RecordingSink();
        events = recorder;
        WatcherContext context = new WatcherContext(
                config,
                e -> {
                    recorder.accept(e);
                    forCatalog.events().accept(e);
                },
                forCatalog.status());
        status = context.status();
        NacosWatcher watcher = new NacosWatcher(config, context);
        closeAfterTest(watcher);
        watcher.start();
        return watcher;
    }

    protected NacosWatcher watch(String... fields) {
        return watchAt(server().address(), fields);
    }

    protected NamingService registrant(String namespace) throws Exception {
        return registrant(server().address(), namespace, null, null);
    }

    protected NamingService registrant(String address, String namespace, String user, String pass) throws Exception {
        NamingService n = NacosTestSupport.registrant(address, namespace, user, pass);
        closeAfterTest(() -> NacosTestSupport.shutDown(n));
        return n;
    }

    /** An application in the public namespace that registers one instance of {@code service}. */
    protected NamingService app(String service, Instance instance) throws Exception {
        NamingService n = registrant("public");
        n.registerInstance(service, instance);
        return n;
    }

    protected static String host(String service, String group, String namespace) {
        return (service + "." + group + "." + namespace + ".nacos")
                .toLowerCase()
                .replace('_', '-');
    }

    protected static List<String> addresses(MeshService s) {
        return s.endpoints().stream().map(Endpoint::address).sorted().toList();
    }

    protected static Map<String, Integer> weights(MeshService s) {
        return s.endpoints().stream().collect(Collectors.toMap(Endpoint::address, Endpoint::weight));
    }

    private static Endpoint endpoint(MeshService s, String address) {
        return s.endpoints().stream()
                .filter(e -> e.address().equals(address))
                .findFirst()
                .orElseThrow();
    }

    // ------------------------------------------------------------------ scenarios

    @Test
    void namespacesAndGroups_onlyTheWatchedOnesAppear() throws Exception {
        String dev = "dev-" + id;
        String other = "other-" + id;
        server().createNamespace(dev);
        server().createNamespace(other);
        registrant("public").registerInstance("orders-" + id, "DEFAULT_GROUP", springCloudInstance("10.1.0.1", 8080));
        registrant(dev).registerInstance("pay-" + id, "TRADE_GROUP", springCloudInstance("10.1.0.2", 8081));
        registrant(dev).registerInstance("hidden-" + id, "OTHER_GROUP", springCloudInstance("10.1.0.3", 8082));
        registrant(other).registerInstance("far-" + id, "TRADE_GROUP", springCloudInstance("10.1.0.4", 8083));

        watch(
                "nacosNamespaceId: [public, " + dev + "]",
                "nacosGroups: [DEFAULT_GROUP, TRADE_GROUP]",
                "nacosRefreshInterval: 200ms");

        MeshService orders = catalog.awaitService(host("orders-" + id, "DEFAULT_GROUP", "public"));
        MeshService pay = catalog.awaitService(host("pay-" + id, "TRADE_GROUP", dev));
        assertThat(addresses(orders)).containsExactly("10.1.0.1");
        assertThat(pay.endpoints()).singleElement().satisfies(e -> {
            assertThat(e.address()).isEqualTo("10.1.0.2");
            assertThat(e.port("http")).isEqualTo(8081);
        });
        assertThat(pay.ports()).containsExactly(new ServicePort("http", 80, Protocol.HTTP));
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.hasSynced());
        assertThat(catalog.snapshot().services().keySet())
                .noneMatch(h -> h.startsWith("hidden-" + id) || h.startsWith("far-" + id));
    }

    @Test
    void allNamespacesAndAllGroups_includeNamespacesCreatedLater() throws Exception {
        String first = "ns1-" + id;
        server().createNamespace(first);
        registrant(first).registerInstance("a-" + id, "G1", springCloudInstance("10.2.0.1", 8080));
        registrant("public").registerInstance("b-" + id, "G2", springCloudInstance("10.2.0.2", 8080));

        watch("nacosNamespaceId: \"*\"", "nacosGroups: [\"*\"]", "nacosRefreshInterval: 200ms");

        catalog.awaitService(host("a-" + id, "G1", first));
        catalog.awaitService(host("b-" + id, "G2", "public"));

        String later = "ns2-" + id;
        server().createNamespace(later);
        registrant(later).registerInstance("c-" + id, "G3", springCloudInstance("10.2.0.3", 8080));
        MeshService c = catalog.awaitService(host("c-" + id, "G3", later));
        assertThat(addresses(c)).containsExactly("10.2.0.3");
    }

    @Test
    void allowlistAndDenylist_selectTheServices() throws Exception {
        NamingService app = registrant("public");
        app.registerInstance("shop-api-" + id, springCloudInstance("10.3.0.1", 8080));
        registrant("public").registerInstance("shop-admin-" + id, springCloudInstance("10.3.0.2", 8080));
        registrant("public").registerInstance("billing-" + id, springCloudInstance("10.3.0.3", 8080));

        watch("serviceAllowlist: [\"shop-*\"]", "serviceDenylist: [\"*-admin-*\"]", "nacosRefreshInterval: 200ms");

        catalog.awaitService(host("shop-api-" + id, "DEFAULT_GROUP", "public"));
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.hasSynced());
        assertThat(catalog.snapshot().services().keySet())
                .noneMatch(h -> h.startsWith("shop-admin-" + id) || h.startsWith("billing-" + id));
    }

    @Test
    void newService_isPushedByNacos3_withoutWaitingForTheRefresh() throws Exception {
        assumeTrue(server().pushesNewServices(), "only Nacos 3 pushes new services");
        NamingService app = registrant("public");
        app.registerInstance("first-" + id, springCloudInstance("10.4.0.1", 8080));
        // the refresh is far longer than the wait: only the server's push can bring the new service in time
        assertTheNextNewServiceAppears("10.4.0.2", "nacosRefreshInterval: 10m");
    }

    @Test
    void newService_isFoundByTheRefresh_withoutPushes() throws Exception {
        registrant("public").registerInstance("first-" + id, springCloudInstance("10.5.0.1", 8080));
        assertTheNextNewServiceAppears("10.5.0.2", "nacosRefreshInterval: 300ms", "nacosFuzzyWatch: false");
    }

    /** Watches with {@code fields} until {@code first-<id>} is in, then registers {@code second-<id>} and awaits it. */
    private void assertTheNextNewServiceAppears(String address, String... fields) throws Exception {
        watch(fields);
        catalog.awaitService(host("first-" + id, "DEFAULT_GROUP", "public"));

        registrant("public").registerInstance("second-" + id, springCloudInstance(address, 8080));
        MeshService second = catalog.awaitService(host("second-" + id, "DEFAULT_GROUP", "public"));
        assertThat(addresses(second)).containsExactly(address);
    }

    @Test
    void instancesUpAndDown_followRegistrationsAndConnections() throws Exception {
        String svc = "orders-" + id;
        String h = host(svc, "DEFAULT_GROUP", "public");
        NamingService one = app(svc, springCloudInstance("10.6.0.1", 8080));
        watch("nacosRefreshInterval: 200ms");
        catalog.awaitService(h, s -> addresses(s).equals(List.of("10.6.0.1")));

        NamingService two = app(svc, springCloudInstance("10.6.0.2", 8080));
        catalog.awaitService(h, s -> addresses(s).equals(List.of("10.6.0.1", "10.6.0.2")));

        // an ephemeral instance dies with its application's connection
        two.shutDown();
        catalog.awaitService(h, s -> addresses(s).equals(List.of("10.6.0.1")));

        // the service is still listed with no instance: its host stays (cluster and ServiceEntry too), empty
        one.deregisterInstance(svc, "10.6.0.1", 8080);
        catalog.awaitService(h, s -> s.endpoints().isEmpty());
    }

    @Test
    void disabledInstance_getsNoTraffic() throws Exception {
        String svc = "orders-" + id;
        String h = host(svc, "DEFAULT_GROUP", "public");
        NamingService one = app(svc, springCloudInstance("10.7.0.1", 8080));
        NamingService two = registrant("public");
        Instance second = springCloudInstance("10.7.0.2", 8080);
        two.registerInstance(svc, second);
        watch("nacosRefreshInterval: 200ms");
        catalog.awaitService(h, s -> s.routableEndpoints().size() == 2);

        second.setEnabled(false);
        two.registerInstance(svc, second);

        MeshService s = catalog.awaitService(h, x -> x.routableEndpoints().size() == 1);
        assertThat(s.routableEndpoints()).extracting(Endpoint::address).containsExactly("10.7.0.1");
    }

    @Test
    void unhealthyInstance_isKeptAndMarkedUnhealthy() throws Exception {
        String svc = "orders-" + id;
        String h = host(svc, "DEFAULT_GROUP", "public");
        registrant("public").registerInstance(svc, springCloudInstance("10.8.0.1", 8080));
        Instance sick = springCloudInstance("10.8.0.2", 8080);
        sick.setHealthy(false);
        registrant("public").registerInstance(svc, sick);
        watch("nacosRefreshInterval: 200ms");

        MeshService s = catalog.awaitService(h, x -> x.endpoints().size() == 2);
        assertThat(endpoint(s, "10.8.0.1").health()).isEqualTo(Health.HEALTHY);
        assertThat(endpoint(s, "10.8.0.2").health()).isEqualTo(Health.UNHEALTHY);
    }

    @Test
    void weights_keepTheirProportions_includingFractions() throws Exception {
        String svc = "orders-" + id;
        String h = host(svc, "DEFAULT_GROUP", "public");
        NamingService one = app(svc, springCloudInstance("10.9.0.1", 8080, 1.0, Map.of()));
        NamingService two = app(svc, springCloudInstance("10.9.0.2", 8080, 0.5, Map.of()));
        watch("nacosRefreshInterval: 200ms");

        catalog.awaitService(h, s -> weights(s).equals(Map.of("10.9.0.1", 100, "10.9.0.2", 50)));

        two.registerInstance(svc, springCloudInstance("10.9.0.2", 8080, 2.5, Map.of()));
        catalog.awaitService(h, s -> weights(s).equals(Map.of("10.9.0.1", 100, "10.9.0.2", 250)));

        two.registerInstance(svc, springCloudInstance("10.9.0.2", 8080, 0.001, Map.of()));
        catalog.awaitService(h, s -> weights(s).equals(Map.of("10.9.0.1", 100, "10.9.0.2", 1)));

        two.registerInstance(svc, springCloudInstance("10.9.0.2", 8080, 0.0, Map.of()));
        MeshService s = catalog.awaitService(h, x -> weights(x).get("10.9.0.2") == 0);
        assertThat(s.routableEndpoints()).extracting(Endpoint::address).containsExactly("10.9.0.1");
    }

    @Test
    void persistentInstance_isWatchedLikeAnEphemeralOne() throws Exception {
        String svc = "legacy-" + id;
        String h = host(svc, "DEFAULT_GROUP", "public");
        NamingService admin = registrant("public");
        Instance persistent = springCloudInstance("10.10.0.1", 9090);
        persistent.setEphemeral(false);
        admin.registerInstance(svc, persistent);
        watch("nacosRefreshInterval: 200ms");

        MeshService s = catalog.awaitService(h);
        assertThat(s.endpoints())
                .singleElement()
                .satisfies(e -> assertThat(e.port("http")).isEqualTo(9090));

        admin.deregisterInstance(svc, persistent);
        catalog.awaitService(h, x -> x.endpoints().isEmpty());
    }

    @Test
    void sameDubboInterfaceInTwoNamespacesOrTwoGroups_isOneHostPerEnvironment_theHomeOneKeepsItsHost()
            throws Exception {
        String iface = "org.env" + id.replace("-", "") + ".Greeter";
        String dev = "dev-" + id;
        server().createNamespace(dev);
        String base = "?interface=" + iface + "&version=1.0.0&application=greeter-app&side=provider";
        String name = "providers:" + iface + ":1.0.0:";
        registrant("public")
                .registerInstance(
                        name, "DEFAULT_GROUP", dubboInterfaceInstance("dubbo://10.19.0.1:20880/" + iface + base));
        registrant(dev)
                .registerInstance(
                        name, "DEFAULT_GROUP", dubboInterfaceInstance("dubbo://10.19.0.2:20880/" + iface + base));
        registrant("public")
                .registerInstance(
                        name, "GRAY_GROUP", dubboInterfaceInstance("dubbo://10.19.0.3:20880/" + iface + base));

        watch(
                "nacosNamespaceId: [public, " + dev + "]",
                "nacosGroups: [DEFAULT_GROUP, GRAY_GROUP]",
                "nacosRefreshInterval: 200ms");

        String home = iface.toLowerCase() + ".v-1-0-0.dubbo";
        assertThat(addresses(catalog.awaitService(home))).containsExactly("10.19.0.1");
        assertThat(addresses(catalog.awaitService(iface.toLowerCase() + ".v-1-0-0.ns-" + dev + ".dubbo")))
                .containsExactly("10.19.0.2");
        assertThat(addresses(catalog.awaitService(iface.toLowerCase() + ".v-1-0-0.group-gray-group.dubbo")))
                .containsExactly("10.19.0.3");
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.hasSynced());
        assertThat(addresses(catalog.service(home))).containsExactly("10.19.0.1");
    }

    @Test
    void dubboNamesWithoutAVersionSlot_areReadByEachInstancesOwnVersionAndGroup() throws Exception {
        String iface = "org.legacy" + id.replace("-", "") + ".Greeter";
        // Dubbo 2.7.2 and earlier left empty parts out: providers:<iface>:<x> where x is a version or a group
        Instance grouped = dubboInterfaceInstance("dubbo://10.20.0.1:20880/" + iface + "?interface=" + iface
                + "&group=blue&application=legacy&side=provider");
        registrant("public").registerInstance("providers:" + iface + ":blue", "DEFAULT_GROUP", grouped);
        Instance versioned = new Instance();
        versioned.setIp("10.20.0.2");
        versioned.setPort(20880);
        // 2.7.0-2.7.2 providers carry version and weight as default.* parameters
        versioned.setMetadata(Map.of(
                "interface", iface + "V",
                "default.version", "2.0.0",
                "default.weight", "20",
                "application", "legacy",
                "side", "provider",
                "protocol", "dubbo",
                "category", "providers"));
        registrant("public").registerInstance("providers:" + iface + "V:2.0.0", "DEFAULT_GROUP", versioned);

        watch("nacosRefreshInterval: 200ms");

        MeshService blue = catalog.awaitService(iface.toLowerCase() + ".g-blue.dubbo");
        assertThat(addresses(blue)).containsExactly("10.20.0.1");
        assertThat(blue.labels()).containsEntry("dubbo.group", "blue").doesNotContainKey("dubbo.version");
        MeshService v2 = catalog.awaitService(iface.toLowerCase() + "v.v-2-0-0.dubbo");
        assertThat(v2.endpoints())
                .singleElement()
                .satisfies(e -> assertThat(e.weight()).isEqualTo(20));
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.hasSynced());
        assertThat(catalog.snapshot().services().keySet()).doesNotContain(iface.toLowerCase() + ".v-blue.dubbo");
    }

    @Test
    void dubboOverrideRules_inTheConfigCenter_disableAndReweighProviders_asDubbosConsumerApplies() throws Exception {
        String iface = "org.gov" + id.replace("-", "") + ".Greeter";
        NamingService app = registrant("public");
        String base = "?interface=" + iface + "&version=1.0.0&application=greeter-app&side=provider";
        List<Instance> providers = new ArrayList<>();
        for (String ip : List.of("10.21.0.1", "10.21.0.2", "10.21.0.3")) {
            providers.add(dubboInterfaceInstance("dubbo://" + ip + ":20880/" + iface + base));
        }
        app.batchRegisterInstance("providers:" + iface + ":1.0.0:", "DEFAULT_GROUP", providers);
        watch("nacosRefreshInterval: 200ms");
        String host = iface.toLowerCase() + ".v-1-0-0.dubbo";
        catalog.awaitService(host, s -> s.routableEndpoints().size() == 3);

        com.alibaba.nacos.api.config.ConfigService config = NacosTestSupport.configClient(server().address(), "public");
        closeAfterTest(config::shutDown);
        String dataId = iface + ":1.0.0:.configurators";
        String rule = """
                configVersion: v2.7
                scope: service
                key: %s:1.0.0
                enabled: true
                configs:
                - side: consumer
                  addresses: [0.0.0.0]
                  providerAddresses: ["10.21.0.2:20880"]
                  parameters:
                    disabled: true
                - side: consumer
                  addresses: [0.0.0.0]
                  providerAddresses: ["10.21.0.3"]
                  parameters:
                    weight: 250
                """.formatted(iface);
        assertThat(config.publishConfig(dataId, "dubbo", rule)).isTrue();

        MeshService governed =
                catalog.awaitService(host, s -> s.routableEndpoints().size() == 2);
        assertThat(governed.routableEndpoints())
                .extracting(e -> e.address() + "=" + e.weight())
                .containsExactly("10.21.0.1=100", "10.21.0.3=250");

        assertThat(config.removeConfig(dataId, "dubbo")).isTrue();
        catalog.awaitService(
                host,
                s -> s.routableEndpoints().size() == 3 && s.endpoints().stream().allMatch(e -> e.weight() == 100));
    }

    @Test
    void instanceRegisteredUnderAHostName_getsTrafficAtItsAddress() throws Exception {
        String svc = "named-" + id;
        NamingService app = registrant("public");
        app.batchRegisterInstance(
                svc,
                "DEFAULT_GROUP",
                List.of(springCloudInstance("localhost", 8080), springCloudInstance("10.22.0.1", 8080)));
        watch("nacosRefreshInterval: 200ms");

        MeshService s = catalog.awaitService(
                host(svc, "DEFAULT_GROUP", "public"), x -> x.endpoints().size() == 2);
        assertThat(addresses(s)).containsExactly("10.22.0.1", "127.0.0.1");
        assertThat(s.routableEndpoints()).hasSize(2);
    }

    @Test
    void dubboInterface_getsTheSameHostAsInZookeeper_andConsumersAreIgnored() throws Exception {
        String iface = "org.demo" + id.replace("-", "") + ".Greeter";
        String provider = "dubbo://10.11.0.1:20880/" + iface + "?interface=" + iface
                + "&version=1.0.0&group=blue&application=greeter-app&side=provider&weight=50&methods=hello,bye"
                + "&release=3.3.6";
        NamingService app = registrant("public");
        app.registerInstance(dubboServiceName(provider), "DEFAULT_GROUP", dubboInterfaceInstance(provider));
        String consumer = "consumer://10.11.0.9/" + iface + "?interface=" + iface
                + "&version=1.0.0&group=blue&category=consumers&side=consumer";
        registrant("public")
                .registerInstance(
                        "consumers:" + iface + ":1.0.0:blue", "DEFAULT_GROUP", dubboInterfaceInstance(consumer));

        watch("nacosRefreshInterval: 200ms");

        String expectedHost = DubboNaming.interfaceHost(
                DubboNaming.interfaceTemplate(null), "nacos-" + id, iface, "1.0.0", "blue", "greeter-app");
        MeshService s = catalog.awaitService(expectedHost);
        assertThat(expectedHost).isEqualTo(iface.toLowerCase() + ".v-1-0-0.g-blue.dubbo");
        assertThat(s.ports()).containsExactly(new ServicePort("dubbo", 20880, Protocol.DUBBO));
        assertThat(s.endpoints()).singleElement().satisfies(e -> {
            assertThat(e.address()).isEqualTo("10.11.0.1");
            assertThat(e.port("dubbo")).isEqualTo(20880);
            assertThat(e.weight()).isEqualTo(50);
            assertThat(e.labels()).containsEntry("application", "greeter-app").doesNotContainKey("methods");
        });
        assertThat(s.labels()).containsEntry("dubbo.interface", iface).containsEntry("dubbo.version", "1.0.0");
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.hasSynced());
        assertThat(catalog.snapshot().services().values())
                .flatExtracting(MeshService::endpoints)
                .extracting(Endpoint::address)
                .doesNotContain("10.11.0.9");
    }

    @Test
    void dubboApplication_getsOnePortPerProtocol() throws Exception {
        String app = "shop-" + id;
        String endpoints = "[{\"port\":20880,\"protocol\":\"dubbo\"},{\"port\":50051,\"protocol\":\"tri\"}]";
        registrant("public").registerInstance(app, dubboApplicationInstance("10.12.0.1", 20880, endpoints, "r1"));
        registrant("public").registerInstance(app, dubboApplicationInstance("10.12.0.2", 20880, endpoints, "r1"));

        watch("nacosRefreshInterval: 200ms");

        MeshService s = catalog.awaitService(app + ".dubbo", x -> x.endpoints().size() == 2);
        assertThat(s.ports())
                .containsExactly(
                        new ServicePort("dubbo", 20880, Protocol.DUBBO),
                        new ServicePort("tri", 50051, Protocol.TRIPLE));
        assertThat(s.endpoints()).allSatisfy(e -> {
            assertThat(e.ports()).containsEntry("dubbo", 20880).containsEntry("tri", 50051);
            assertThat(e.labels()).doesNotContainKey("dubbo.endpoints").doesNotContainKey("dubbo.metadata.revision");
        });
    }

    @Test
    void emptyService_underKeepPolicy_keepsItsLastEndpoints() throws Exception {
        String application = "kept-" + id;
        String endpoints = "[{\"port\":20880,\"protocol\":\"dubbo\"}]";
        NamingService provider = app(application, dubboApplicationInstance("10.16.0.1", 20880, endpoints, "r1"));
        watch("nacosRefreshInterval: 200ms", "emptyServicePolicy: keep", "emptyServiceGrace: 10m");
        catalog.awaitService(application + ".dubbo");

        provider.deregisterInstance(application, "10.16.0.1", 20880);

        // the watcher says the service has no instances...
        events.awaitEvent(e -> e instanceof ServiceUpsert u
                && u.key().name().equals(application)
                && u.endpoints().isEmpty());
        // ...and the catalog keeps serving the last endpoints for the grace period
        assertThat(addresses(catalog.service(application + ".dubbo"))).containsExactly("10.16.0.1");
    }

    @Test
    void malformedInstance_isSkippedAndReported_othersStay() throws Exception {
        String app = "broken-" + id;
        registrant("public")
                .registerInstance(
                        app,
                        dubboApplicationInstance(
                                "10.13.0.1", 20880, "[{\"port\":20880,\"protocol\":\"dubbo\"}]", "r1"));
        registrant("public").registerInstance(app, dubboApplicationInstance("10.13.0.2", 20880, "not json", "r1"));

        watch("nacosRefreshInterval: 200ms");

        MeshService s = catalog.awaitService(app + ".dubbo");
        assertThat(addresses(s)).containsExactly("10.13.0.1");
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.skippedCount() > 0);
    }

    @Test
    void serverRestart_keepsTheLastState_thenReconnectsAndResyncs() throws Exception {
        String stays = "stays-" + id;
        String leaves = "leaves-" + id;
        registrant("public").registerInstance(stays, springCloudInstance("10.14.0.1", 8080));
        NamingService leaving = app(leaves, springCloudInstance("10.14.0.2", 8080));
        NamingService probe = registrant("public");
        // a warm-up long enough for the staying application to register again, short enough for a test: what left
        // while the server was down goes once it is over (had neither come back by then, the deletion guard would
        // rightly hold both: every endpoint of the registry at once)
        watch("nacosRefreshInterval: 200ms", "warmUp: 10s");
        catalog.awaitService(host(stays, "DEFAULT_GROUP", "public"));
        catalog.awaitService(host(leaves, "DEFAULT_GROUP", "public"));

        server().stop();
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
        long syncsBefore = status.syncCount();
        assertThat(catalog.snapshot().services().keySet())
                .contains(host(stays, "DEFAULT_GROUP", "public"), host(leaves, "DEFAULT_GROUP", "public"));

        // while the server is down, one application goes away for good
        leaving.shutDown();
        server().start();

        await().atMost(TestCatalog.TIMEOUT.multipliedBy(2))
                .until(() -> status.state() == RegistryStatus.State.UP && status.syncCount() > syncsBefore);
        await().atMost(TestCatalog.TIMEOUT.multipliedBy(2))
                .ignoreExceptions()
                .until(() -> probe.getAllInstances(stays, false).size() == 1);
        await().atMost(TestCatalog.TIMEOUT.multipliedBy(2))
                .until(() -> catalog.snapshot().service(host(leaves, "DEFAULT_GROUP", "public")) == null);
        assertThat(status.guard()).isNull();
        MeshService s = catalog.awaitService(host(stays, "DEFAULT_GROUP", "public"));
        assertThat(addresses(s)).containsExactly("10.14.0.1");
    }

    /**
     * A restart as users meet it: the server comes back without its ephemeral instances, and every application's
     * nacos-client registers its instance again by itself (its redo task) while the watcher's nacos-client is pushed
     * the partial lists. With the warm-up (long enough for the redo, short enough for a test), no instance ever
     * leaves what is served, and once it is over the registry's full read changes nothing.
     */
    @Test
    void serverRestart_applicationsRegisteringAgainByThemselves_nothingLeavesTheCatalog() throws Exception {
        String service = "steady-" + id;
        String host = host(service, "DEFAULT_GROUP", "public");
        for (int i = 1; i <= 3; i++) app(service, springCloudInstance("10.16.0." + i, 8080));
        NamingService probe = registrant("public");
        watch("nacosRefreshInterval: 200ms", "warmUp: 15s");
        catalog.awaitService(host, s -> s.endpoints().size() == 3);
        await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);
        int mark = events.events().size();
        long syncs = status.syncCount();

        server().stop();
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
        server().start();
        await().atMost(TestCatalog.TIMEOUT.multipliedBy(2))
                .ignoreExceptions()
                .until(() -> probe.getAllInstances(service, false).size() == 3);
        // the warm-up ends with a full read
        await().atMost(TestCatalog.TIMEOUT.multipliedBy(2))
                .until(() -> status.warmingUntil() == null && status.syncCount() > syncs);

        assertThat(dev.meshbridge.core.testing.Flaps.since(events.events(), mark))
                .as("what left the catalog meanwhile")
                .isEmpty();
        assertThat(addresses(catalog.awaitService(host)))
                .containsExactlyInAnyOrder("10.16.0.1", "10.16.0.2", "10.16.0.3");
    }

    @Test
    void wrongCredentials_failClearly_andRightOnesWork() throws Exception {
        ServerHandle secured = startServerWithAuth("nacos", "s3cret-" + id);
        closeAfterTest(secured);
        registrant(secured.address(), "public", "nacos", "s3cret-" + id)
                .registerInstance("secured-" + id, springCloudInstance("10.15.0.1", 8080));

        NacosWatcher refused = watchAt(
                secured.address(), "nacosUsername: nacos", "nacosPassword: wrong", "nacosRefreshInterval: 200ms");
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
        // Nacos 2 refuses the login with 403, Nacos 3 with HTTP 500: the same words either way
        assertThat(status.lastError())
                .contains("authentication failed")
                .contains("user 'nacos'")
                .contains("check nacosUsername and nacosPassword")
                .doesNotContain("wrong")
                .doesNotContain(": null");
        assertThat(catalog.snapshot().services()).isEmpty();
        refused.close();

        watchAt(
                secured.address(),
                "nacosUsername: nacos",
                "nacosPassword: s3cret-" + id,
                "nacosRefreshInterval: 200ms");
        catalog.awaitService(host("secured-" + id, "DEFAULT_GROUP", "public"));
    }
}
