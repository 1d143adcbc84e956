package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.testing.ManualTicker;
import dev.meshbridge.core.testing.TableLookup;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.Ticker;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

/**
 * Spring Cloud ZooKeeper services: instances registered with curator x-discovery exactly as Spring Cloud does (its
 * payload type, {@code instance_status} metadata, UUID ids), read by the watcher into a real aggregator.
 */
class SpringCloudTest {

    private static ZkServer zk;
    private static CuratorFramework client;
    private static ServiceDiscovery<ZookeeperInstance> spring;
    private static ServiceDiscovery<org.apache.dubbo.registry.zookeeper.ZookeeperInstance> dubboApps;

    @BeforeAll
    static void start() throws Exception {
        zk = new ZkServer();
        client = zk.client();
        spring = discovery(ZookeeperInstance.class, "/services");
        dubboApps = discovery(org.apache.dubbo.registry.zookeeper.ZookeeperInstance.class, "/services");
    }

    private static <T> ServiceDiscovery<T> discovery(Class<T> payload, String basePath) throws Exception {
        return discovery(payload, basePath, true);
    }

    /**
     * @param compatible curator's default (and Spring Cloud's) serialization, which leaves out {@code enabled}; false
     *     writes it
     */
    private static <T> ServiceDiscovery<T> discovery(Class<T> payload, String basePath, boolean compatible)
            throws Exception {
        ServiceDiscovery<T> d = ServiceDiscoveryBuilder.builder(payload)
                .client(client)
                .basePath(basePath)
                .serializer(new JsonInstanceSerializer<>(payload, compatible))
                .build();
        d.start();
        return d;
    }

    @AfterAll
    static void stop() throws Exception {
        spring.close();
        dubboApps.close();
        client.close();
        zk.close();
    }

    static ServiceInstance<ZookeeperInstance> springInstance(
            String name, String address, Integer port, Integer sslPort, Map<String, String> metadata) throws Exception {
        String id = UUID.randomUUID().toString();
        var builder = ServiceInstance.<ZookeeperInstance>builder()
                .id(id)
                .name(name)
                .address(address)
                .port(port)
                .payload(new ZookeeperInstance(id, name, metadata))
                .uriSpec(new UriSpec("{scheme}://{address}:{port}"));
        if (sslPort != null) builder.sslPort(sslPort);
        return builder.build();
    }

    @Test
    void instances_appearUnderTheServiceHost_withPortsAndMetadataLabels() throws Exception {
        spring.registerService(
                springInstance("orders", "10.1.0.1", 8080, null, Map.of("instance_status", "UP", "zone", "eu-1")));
        spring.registerService(springInstance("orders", "10.1.0.2", 8081, 8443, Map.of("instance_status", "UP")));

        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/services]")) {
            MeshService orders = h.awaitService(
                    "orders.services.zookeeper", s -> s.endpoints().size() == 2);
            assertThat(orders.ports())
                    .containsExactly(
                            new ServicePort("http", 80, Protocol.HTTP), new ServicePort("https", 443, Protocol.HTTPS));
            assertThat(orders.endpoints()).extracting(Endpoint::address).containsExactly("10.1.0.1", "10.1.0.2");
            Endpoint a = orders.endpoints().get(0);
            assertThat(a.ports()).isEqualTo(Map.of("http", 8080));
            assertThat(a.labels()).containsEntry("zone", "eu-1").containsEntry("instance_status", "UP");
            assertThat(a.health()).isEqualTo(Health.HEALTHY);
            assertThat(a.weight()).isEqualTo(Endpoint.DEFAULT_WEIGHT);
            // an instance with an sslPort is called there only (Spring's ZookeeperServiceInstance.getPort())
            assertThat(orders.endpoints().get(1).ports()).isEqualTo(Map.of("https", 8443));
            assertThat(orders.sources()).singleElement().satisfies(k -> {
                assertThat(k.namespace()).isEqualTo("spring-cloud:/services");
                assertThat(k.name()).isEqualTo("orders");
            });
            assertThat(h.status.skippedCount()).isZero();
        }
    }

    @Test
    void outOfServiceDrains_disabledGetsNoTraffic_andUnregisterRemoves() throws Exception {
        ServiceInstance<ZookeeperInstance> a =
                springInstance("stock", "10.1.1.1", 8080, null, Map.of("instance_status", "UP"));
        ServiceInstance<ZookeeperInstance> b =
                springInstance("stock", "10.1.1.2", 8080, null, Map.of("instance_status", "UP"));
        spring.registerService(a);
        spring.registerService(b);
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/services]")) {
            String host = "stock.services.zookeeper";
            h.awaitService(host, s -> s.endpoints().size() == 2);

            a.getPayload().setMetadata(Map.of("instance_status", "OUT_OF_SERVICE"));
            spring.updateService(a);
            MeshService draining =
                    h.awaitService(host, s -> s.endpoints().stream().anyMatch(e -> e.health() == Health.DRAINING));
            assertThat(draining.endpoints())
                    .filteredOn(e -> e.health() == Health.DRAINING)
                    .extracting(Endpoint::address)
                    .containsExactly("10.1.1.1");

            spring.unregisterService(b);
            h.awaitService(host, s -> s.endpoints().size() == 1);
            try (ServiceDiscovery<ZookeeperInstance> withEnabled =
                    discovery(ZookeeperInstance.class, "/services", false)) {
                ServiceInstance<ZookeeperInstance> disabled = ServiceInstance.<ZookeeperInstance>builder()
                        .name("stock")
                        .address("10.1.1.2")
                        .port(8080)
                        .payload(b.getPayload())
                        .enabled(false)
                        .build();
                withEnabled.registerService(disabled);
                MeshService s = h.awaitService(host, x -> x.endpoints().size() == 2);
                assertThat(s.endpoints())
                        .filteredOn(e -> !e.enabled())
                        .extracting(Endpoint::address)
                        .containsExactly("10.1.1.2");
                assertThat(s.routableEndpoints()).extracting(Endpoint::address).containsExactly("10.1.1.1");
                withEnabled.unregisterService(disabled);
            }
            spring.unregisterService(a);
            h.catalog.awaitAbsent(host);
        }
    }

    @Test
    void reRegistration_deleteAndCreateOfTheSameInstance_changesNothing_butUnregisterStillRemoves() throws Exception {
        ServiceInstance<ZookeeperInstance> solo = springInstance("solo", "10.1.4.1", 8080, null, Map.of());
        spring.registerService(solo);
        String path = "/services/solo/" + solo.getId();
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/services]")) {
            h.awaitService("solo.services.zookeeper", s -> true);
            h.awaitSyncs(1);
            int seen = h.events.events().size();
            long created = client.checkExists().forPath(path).getCzxid();

            // what curator x-discovery does for every instance after each reconnect: delete the znode, create it again
            spring.registerService(solo);
            assertThat(client.checkExists().forPath(path).getCzxid()).isNotEqualTo(created);

            await().during(Duration.ofSeconds(1))
                    .atMost(TestCatalog.TIMEOUT)
                    .until(() -> h.events.events().size() == seen);
            assertThat(h.snapshot().service("solo.services.zookeeper")).isNotNull();

            spring.unregisterService(solo);
            h.catalog.awaitAbsent("solo.services.zookeeper");
        }
    }

    @Test
    void unregisteredInstance_staysForTheReregistrationWindow_measuredOnTheInjectedTicker() throws Exception {
        ManualTicker ticker = new ManualTicker();
        ServiceInstance<ZookeeperInstance> a = springInstance("window", "10.1.5.1", 8080, null, Map.of());
        ServiceInstance<ZookeeperInstance> b = springInstance("window", "10.1.5.2", 8080, null, Map.of());
        spring.registerService(a);
        spring.registerService(b);
        try (WatcherHarness h = WatcherHarness.start(
                new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM),
                zk.address(),
                "zkServicesPath: [/services]",
                "reregistrationWindow: 30s")) {
            String host = "window.services.zookeeper";
            h.awaitService(host, s -> s.endpoints().size() == 2);

            spring.unregisterService(b);
            await().atMost(TestCatalog.TIMEOUT).until(() -> ticker.pending() > 0);
            ticker.advance(Duration.ofSeconds(29));
            await().during(Duration.ofMillis(300))
                    .atMost(TestCatalog.TIMEOUT)
                    .until(() -> h.snapshot().service(host).endpoints().size() == 2);

            ticker.advance(Duration.ofSeconds(2));
            MeshService left = h.awaitService(host, s -> s.endpoints().size() == 1);
            assertThat(left.endpoints()).extracting(Endpoint::address).containsExactly("10.1.5.1");
        }
    }

    @Test
    void statusesOtherThanUp_getNoTraffic_asSpringsLoadBalancerKeepsOnlyUpOrNone() throws Exception {
        // ZookeeperServiceInstanceListSupplier keeps an instance whose instance_status is blank or UP (any case)
        spring.registerService(springInstance("status", "10.1.6.1", 8080, null, Map.of("instance_status", "up")));
        spring.registerService(springInstance("status", "10.1.6.2", 8080, null, Map.of()));
        spring.registerService(
                springInstance("status", "10.1.6.3", 8080, null, Map.of("instance_status", "MAINTENANCE")));
        spring.registerService(springInstance("status", "10.1.6.4", 8080, null, Map.of("instance_status", "UNKNOWN")));
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/services]")) {
            MeshService s = h.awaitService(
                    "status.services.zookeeper", x -> x.endpoints().size() == 4);
            assertThat(s.endpoints())
                    .filteredOn(e -> e.health() == Health.HEALTHY)
                    .extracting(Endpoint::address)
                    .containsExactly("10.1.6.1", "10.1.6.2");
            assertThat(s.endpoints())
                    .filteredOn(
                            e -> e.address().equals("10.1.6.3") || e.address().equals("10.1.6.4"))
                    .allSatisfy(e -> assertThat(e.health()).isEqualTo(Health.UNHEALTHY));
        }
    }

    @Test
    void instanceRegisteredUnderAHostName_withoutPreferIpAddress_getsTrafficAtItsAddress() throws Exception {
        TableLookup dns = new TableLookup().put("orders-box.corp", "10.1.7.9");
        spring.registerService(springInstance("named", "orders-box.corp", 8080, null, Map.of()));
        spring.registerService(springInstance("named", "10.1.7.1", 8080, null, Map.of()));
        spring.registerService(springInstance("named", "retired-box.corp", 8080, null, Map.of()));
        try (WatcherHarness h = WatcherHarness.start(
                new WatcherRuntime(Ticker.system(), dns), zk.address(), "zkServicesPath: [/services]")) {
            MeshService s = h.awaitService(
                    "named.services.zookeeper", x -> x.endpoints().size() == 2);
            assertThat(s.endpoints()).extracting(Endpoint::address).containsExactly("10.1.7.1", "10.1.7.9");
            await().atMost(TestCatalog.TIMEOUT).until(() -> h.status.skippedCount() == 1);
        }
    }

    @Test
    void dubboApplicationsAndSpringServices_inOneRoot_areToldApartByContent() throws Exception {
        spring.registerService(springInstance("mixed", "10.1.2.1", 8080, null, Map.of()));
        String id = "10.1.2.2:20880";
        dubboApps.registerService(ServiceInstance.<org.apache.dubbo.registry.zookeeper.ZookeeperInstance>builder()
                .id(id)
                .name("mixed")
                .address("10.1.2.2")
                .port(20880)
                .payload(new org.apache.dubbo.registry.zookeeper.ZookeeperInstance(
                        id,
                        "mixed",
                        Map.of(
                                "dubbo.endpoints",
                                "[{\"port\":20880,\"protocol\":\"dubbo\"},{\"port\":50051,\"protocol\":\"tri\"}]",
                                "dubbo.metadata.revision",
                                "a1b2c3",
                                "dubbo.metadata.storage-type",
                                "local")))
                .build());
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/services]")) {
            MeshService springSide = h.awaitService("mixed.services.zookeeper", s -> true);
            assertThat(springSide.endpoints()).extracting(Endpoint::address).containsExactly("10.1.2.1");

            MeshService dubboSide = h.awaitService("mixed.dubbo", s -> true);
            assertThat(dubboSide.ports())
                    .containsExactly(
                            new ServicePort("dubbo", 20880, Protocol.DUBBO),
                            new ServicePort("tri", 50051, Protocol.TRIPLE));
            assertThat(dubboSide.endpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo("10.1.2.2");
                assertThat(e.ports()).isEqualTo(Map.of("dubbo", 20880, "tri", 50051));
                assertThat(e.labels())
                        .containsEntry("dubbo.metadata.revision", "a1b2c3")
                        .doesNotContainKey("dubbo.endpoints");
            });
            assertThat(h.status.droppedLabelCount()).isZero();
        }
    }

    @Test
    void anotherRoot_namesHostsAfterTheRoot() throws Exception {
        ServiceDiscovery<ZookeeperInstance> custom = discovery(ZookeeperInstance.class, "/custom/apps");
        try {
            custom.registerService(springInstance("ledger", "10.1.3.1", 9090, null, Map.of("protocol", "grpc")));
            try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/custom/apps]")) {
                MeshService ledger = h.awaitService("ledger.custom-apps.zookeeper", s -> true);
                assertThat(ledger.ports()).containsExactly(new ServicePort("grpc", 50051, Protocol.GRPC));
                assertThat(ledger.endpoints())
                        .singleElement()
                        .satisfies(e -> assertThat(e.ports()).isEqualTo(Map.of("grpc", 9090)));
                assertThat(h.snapshot().services().keySet()).noneMatch(host -> host.endsWith(".services.zookeeper"));
            }
        } finally {
            custom.close();
        }
    }
}
