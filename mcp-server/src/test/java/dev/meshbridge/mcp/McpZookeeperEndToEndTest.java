package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.IstiodMcpClient.serviceEntry;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.IstiodMcpClient.Config;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import dev.meshbridge.registry.zookeeper.DubboRegistryWriter;
import dev.meshbridge.registry.zookeeper.ZkServer;
import dev.meshbridge.registry.zookeeper.demo.Greeter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

/**
 * End to end: a real ZooKeeper in this JVM; a real Dubbo 3 provider application (application-level registration,
 * dubbo and tri protocols), Dubbo interface-level providers written by Dubbo's own {@code ZookeeperRegistry}, and
 * Spring Cloud instances written with curator x-discovery; the real ZooKeeper watcher; a real aggregator; the MCP
 * server; and a client that behaves as istiod does. What istiod would hold is asserted.
 */
class McpZookeeperEndToEndTest {

    static final String SE = McpServerIstiodTest.SE;
    static final String NS = McpOptions.DEFAULT_NAMESPACE;
    static final String ORDERS_IFACE = "org.demo.OrderService";
    static final String ORDERS_IFACE_HOST = NS + "/org.demo.orderservice.v-1-0-0.dubbo";
    static final String GREETER_APP_HOST = NS + "/greeter-app.dubbo";
    static final String STOCK_HOST = NS + "/stock.services.zookeeper";

    private ZkServer zk;
    private CuratorFramework client;
    private ServiceDiscovery<ZookeeperInstance> spring;
    private DubboRegistryWriter dubbo;
    private FrameworkModel greeterFramework;
    private DubboBootstrap greeterApp;
    private final TestCatalog catalog = new TestCatalog();
    private RegistryWatcher watcher;
    private McpServer server;
    private IstiodMcpClient istiod;
    private int tri;

    @BeforeEach
    void setUp() throws Exception {
        zk = new ZkServer();
        client = zk.client();
        spring = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
                .client(client)
                .basePath("/services")
                .serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class))
                .build();
        spring.start();
        dubbo = new DubboRegistryWriter(zk.address());
        greeterFramework = new FrameworkModel();
        ApplicationConfig app = new ApplicationConfig("greeter-app");
        app.setQosEnable(false);
        app.setRegisterMode("instance");
        org.apache.dubbo.config.RegistryConfig registry =
                new org.apache.dubbo.config.RegistryConfig("zookeeper://" + zk.address());
        registry.setParameters(new java.util.HashMap<>(Map.of("file.cache", "false")));
        ServiceConfig<Greeter> greeter = new ServiceConfig<>();
        greeter.setInterface(Greeter.class);
        greeter.setRef(name -> "hello " + name);
        greeter.setVersion("1.0.0");
        tri = freePort();
        greeterApp = DubboBootstrap.newInstance(greeterFramework)
                .application(app)
                .registry(registry)
                .protocols(List.of(new ProtocolConfig("dubbo", freePort()), new ProtocolConfig("tri", tri)))
                .service(greeter)
                .start();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (istiod != null) istiod.close();
        if (server != null) server.close();
        if (watcher != null) watcher.close();
        catalog.close();
        greeterApp.stop();
        greeterFramework.destroy();
        dubbo.close();
        spring.close();
        client.close();
        zk.close();
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static String ordersProvider(String address, String extra) {
        return "dubbo://" + address + ":20880/" + ORDERS_IFACE + "?anyhost=true&application=orders-app&dubbo=2.0.2"
                + "&interface=" + ORDERS_IFACE + "&methods=place,cancel&release=3.3.6&side=provider&version=1.0.0"
                + extra;
    }

    static ServiceInstance<ZookeeperInstance> stock(String address, String status) throws Exception {
        String id = UUID.randomUUID().toString();
        return ServiceInstance.<ZookeeperInstance>builder()
                .id(id)
                .name("stock")
                .address(address)
                .port(8080)
                .payload(new ZookeeperInstance(id, "stock", Map.of("instance_status", status, "zone", "eu-1")))
                .uriSpec(new UriSpec("{scheme}://{address}:{port}"))
                .build();
    }

    private void startBridge() throws Exception {
        ConfigNode root = ConfigNode.parse(
                "bridge.yaml",
                "registries:\n  - type: zookeeper\n    name: zk1\n    addresses: [\"" + zk.address() + "\"]\n");
        RegistryConfig config =
                RegistriesConfig.parse(root, RegistriesConfig.loadProviders()).get(0);
        root.finish();
        WatcherContext context = catalog.context(config);
        watcher = RegistriesConfig.loadProviders().get("zookeeper").create(config, context);
        server = new McpServer(
                        McpOptions.builder().bindAddress("127.0.0.1").port(0).build(), new SimpleMeterRegistry())
                .start();
        catalog.aggregator().subscribe(server).join();
        watcher.start();
        await().atMost(TestCatalog.TIMEOUT).until(() -> context.status().hasSynced());
        catalog.aggregator().flushNow().thenRun(server::markCatalogReady).join();
        istiod = new IstiodMcpClient(server.port(), IstiodMcpClient.PILOT_TYPES_1_24).start();
        istiod.awaitSynced();
    }

    private static List<String> addresses(Config c) {
        return serviceEntry(c).getEndpointsList().stream()
                .map(WorkloadEntry::getAddress)
                .toList();
    }

    @Test
    void realRegistrations_becomeServiceEntries_andFollowTheRegistry() throws Exception {
        dubbo.register(ordersProvider("10.0.0.11", ""));
        dubbo.register(ordersProvider("10.0.0.12", "&weight=50"));
        ServiceInstance<ZookeeperInstance> stockA = stock("10.1.0.1", "UP");
        spring.registerService(stockA);
        spring.registerService(stock("10.1.0.2", "UP"));

        startBridge();

        Map<String, Config> entries = istiod.awaitConfigs(
                SE,
                c -> c.containsKey(ORDERS_IFACE_HOST) && c.containsKey(GREETER_APP_HOST) && c.containsKey(STOCK_HOST));
        assertThat(istiod.decodeErrors()).isZero();

        ServiceEntry orders = serviceEntry(entries.get(ORDERS_IFACE_HOST));
        assertThat(orders.getPortsList()).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("dubbo");
            assertThat(p.getNumber()).isEqualTo(20880);
            assertThat(p.getProtocol()).isEqualTo("TCP");
        });
        assertThat(orders.getEndpointsList())
                .extracting(WorkloadEntry::getAddress, WorkloadEntry::getWeight)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("10.0.0.11", 100),
                        org.assertj.core.groups.Tuple.tuple("10.0.0.12", 50));

        ServiceEntry greeter = serviceEntry(entries.get(GREETER_APP_HOST));
        assertThat(greeter.getPortsList())
                .extracting(p -> p.getName() + ":" + p.getNumber() + ":" + p.getProtocol())
                .containsExactly("dubbo:20880:TCP", "tri:50051:GRPC");
        assertThat(greeter.getEndpointsList()).singleElement().satisfies(e -> {
            assertThat(e.getAddress()).isEqualTo(System.getProperty("DUBBO_IP_TO_REGISTRY"));
            assertThat(e.getPortsMap()).containsEntry("tri", tri).containsKey("dubbo");
        });

        ServiceEntry stock = serviceEntry(entries.get(STOCK_HOST));
        assertThat(stock.getPortsList())
                .singleElement()
                .satisfies(p -> assertThat(p.getProtocol()).isEqualTo("HTTP"));
        assertThat(stock.getEndpointsList())
                .extracting(WorkloadEntry::getAddress)
                .containsExactly("10.1.0.1", "10.1.0.2");
        assertThat(stock.getEndpoints(0).getLabelsMap()).containsEntry("zone", "eu-1");

        // a provider registers: only its ServiceEntry gets a new version
        Map<String, String> before = entries.values().stream()
                .collect(Collectors.toMap(Config::name, c -> c.metadata().getVersion()));
        dubbo.register(ordersProvider("10.0.0.13", ""));
        Map<String, Config> after =
                istiod.awaitConfigs(SE, c -> addresses(c.get(ORDERS_IFACE_HOST)).size() == 3);
        assertThat(after.entrySet().stream()
                        .filter(e -> !e.getValue().metadata().getVersion().equals(before.get(e.getKey())))
                        .map(Map.Entry::getKey))
                .containsExactly(ORDERS_IFACE_HOST);

        // a provider is disabled by Dubbo's override (enabled=false in its URL): it gets no traffic
        dubbo.unregister(ordersProvider("10.0.0.12", "&weight=50"));
        dubbo.register(ordersProvider("10.0.0.12", "&weight=50&enabled=false"));
        istiod.awaitConfigs(SE, c -> addresses(c.get(ORDERS_IFACE_HOST)).equals(List.of("10.0.0.11", "10.0.0.13")));

        // a Spring Cloud instance goes out of service; its last instance leaves: the ServiceEntry stays with no
        // endpoints while the service's znode exists (no churn for routes naming it); the znode goes: so does the entry
        java.util.Map<String, String> outOfService =
                new java.util.HashMap<>(stockA.getPayload().getMetadata());
        outOfService.put("instance_status", "OUT_OF_SERVICE");
        stockA.getPayload().setMetadata(outOfService);
        spring.updateService(stockA);
        istiod.awaitConfigs(SE, c -> addresses(c.get(STOCK_HOST)).equals(List.of("10.1.0.2")));
        for (ServiceInstance<ZookeeperInstance> i : spring.queryForInstances("stock")) spring.unregisterService(i);
        istiod.awaitConfigs(
                SE,
                c -> c.containsKey(STOCK_HOST) && addresses(c.get(STOCK_HOST)).isEmpty());
        client.delete().deletingChildrenIfNeeded().forPath("/services/stock");
        istiod.awaitConfigs(SE, c -> !c.containsKey(STOCK_HOST) && c.containsKey(ORDERS_IFACE_HOST));

        await().untilAsserted(() -> assertThat(
                        ((McpServer.DebugView) server.debugSource().debug(Map.of())).clients())
                .singleElement()
                .satisfies(c ->
                        assertThat(c.types().values()).allMatch(t -> t.status().equals("SYNCED"))));
    }
}
