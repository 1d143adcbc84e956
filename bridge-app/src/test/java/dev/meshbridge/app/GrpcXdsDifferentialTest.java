package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.pojo.Instance;
import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.appinfo.EurekaInstanceConfig;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import com.netflix.appinfo.MyDataCenterInstanceConfig;
import com.netflix.appinfo.providers.EurekaConfigBasedInstanceInfoProvider;
import com.netflix.discovery.DefaultEurekaClientConfig;
import com.netflix.discovery.DiscoveryClient;
import com.netflix.discovery.shared.transport.jersey3.Jersey3TransportClientFactories;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.testing.Differential;
import dev.meshbridge.registry.consul.ConsulTestServer;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import dev.meshbridge.registry.nacos.NacosTestServer;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.model.agent.ImmutableRegCheck;
import org.kiwiproject.consul.model.agent.ImmutableRegistration;
import org.kiwiproject.consul.model.health.ServiceHealth;
import org.kiwiproject.consul.option.Options;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.netflix.eureka.EurekaDiscoveryClient;

/**
 * What grpc-java's own xDS client calls through the bridge, against what the registry's own consumer would call, one
 * registry at a time: real gRPC backends on 127.0.0.1 register with the registry's own client in seeded random states
 * (healthy or not, enabled or not, weight 0, in maintenance, gone), the framework's consumer says which of them it
 * would call, and over a few rounds the set of backends answering grpc-java's calls to {@code xds:///<host>} must be
 * exactly that set. ZooKeeper (Dubbo and Spring Cloud) is covered the same way by {@link ProxylessZookeeperScenarios};
 * the registry modules' differential suites compare many more rounds at the catalog.
 */
class GrpcXdsDifferentialTest {

    private static final int BACKENDS = 5;
    private static final int ROUNDS = 3;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final List<IdentityBackend> backends = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private Bridge bridge;
    private GrpcJavaClient client;

    @AfterEach
    void stopAll() throws Exception {
        if (client != null) client.close();
        if (bridge != null) bridge.close();
        for (AutoCloseable c : closeables.reversed()) c.close();
        for (IdentityBackend b : backends) b.close();
    }

    /** Nacos: nacos-client's {@code selectInstances(service, healthy=true)} is the consumer. */
    @Test
    void nacos_grpcJavaCallsWhatSelectInstancesReturns() throws Exception {
        NacosTestServer nacos = NacosTestServer.builder().start();
        closeables.add(nacos::close);
        NamingService registrant = naming(nacos.address());
        NamingService consumer = naming(nacos.address());
        closeables.add(registrant::shutDown);
        closeables.add(consumer::shutDown);
        startBackends();
        Differential.Rounds rounds = new Differential.Rounds("xds-nacos", ROUNDS, Duration.ofSeconds(60));
        Random random = rounds.random();
        rounds.run(round -> {
            List<Instance> instances = new ArrayList<>();
            for (int i = 0; i < BACKENDS; i++) {
                boolean first = i == 0; // one backend always callable: a service with none gets no calls to compare
                if (!first && random.nextInt(5) == 0) continue;
                Instance in = new Instance();
                in.setIp("127.0.0.1");
                in.setPort(backends.get(i).port());
                in.setHealthy(first || random.nextInt(4) != 0);
                in.setEnabled(first || random.nextInt(5) != 0);
                in.setWeight(first ? 1.0 : List.of(1.0, 2.0, 0.5, 0.0).get(random.nextInt(4)));
                in.setEphemeral(true);
                in.setClusterName("DEFAULT");
                in.setMetadata(Map.of("preserved.register.source", "SPRING_CLOUD"));
                instances.add(in);
            }
            registrant.batchRegisterInstance("orders", "DEFAULT_GROUP", instances);
            // the consumer has caught up once its cache holds exactly what was registered (enabled, as pushed)
            Set<String> registeredNow = new TreeSet<>();
            for (Instance in : instances) if (in.isEnabled()) registeredNow.add(describe(in));
            await().atMost(WAIT).until(() -> {
                Set<String> cached = new TreeSet<>();
                for (Instance in : consumer.getAllInstances("orders", "DEFAULT_GROUP")) cached.add(describe(in));
                return cached.equals(registeredNow);
            });
            Set<String> truth = new TreeSet<>();
            for (Instance in : consumer.selectInstances("orders", "DEFAULT_GROUP", true))
                truth.add(backendAt(in.getPort()));
            if (bridge == null) startBridge("""
                        type: nacos
                        name: nacos
                        addresses: ["%s"]
                        nacosRefreshInterval: 200ms
                        """.formatted(nacos.address()));
            return compare(k -> k.registryType().equals("nacos") && k.name().equals("orders"), truth);
        });
    }

    /** Consul: its health API with {@code passing} (Spring Cloud Consul's {@code query-passing}) is the consumer. */
    @Test
    void consul_grpcJavaCallsWhatThePassingQueryReturns() throws Exception {
        ConsulTestServer server = ConsulTestServer.builder().start();
        closeables.add(server::close);
        Consul consul = Consul.builder().withUrl("http://" + server.address()).build();
        closeables.add(consul::destroy);
        startBackends();
        Differential.Rounds rounds = new Differential.Rounds("xds-consul", ROUNDS, Duration.ofSeconds(60));
        Set<String> registered = new TreeSet<>();
        Random random = rounds.random();
        rounds.run(round -> {
            for (int i = 0; i < BACKENDS; i++) {
                boolean first = i == 0;
                String id = "orders-" + i;
                if (!first && random.nextInt(5) == 0) {
                    if (registered.remove(id)) consul.agentClient().deregister(id);
                    continue;
                }
                registered.add(id);
                consul.agentClient()
                        .register(ImmutableRegistration.builder()
                                .id(id)
                                .name("orders")
                                .address("127.0.0.1")
                                .port(backends.get(i).port())
                                .check(ImmutableRegCheck.builder()
                                        .ttl("60s")
                                        .status(first || random.nextInt(4) != 0 ? "passing" : "critical")
                                        .build())
                                .build());
                consul.agentClient().toggleMaintenanceMode(id, !first && random.nextInt(6) == 0, "diff");
            }
            Set<String> truth = new TreeSet<>();
            for (ServiceHealth h : consul.healthClient()
                    .getHealthyServiceInstances("orders", Options.BLANK_QUERY_OPTIONS)
                    .getResponse()) truth.add(backendAt(h.getService().getPort()));
            if (bridge == null) startBridge("""
                        type: consul
                        name: c1
                        addresses: ["%s"]
                        """.formatted(server.address()));
            return compare(k -> k.registryType().equals("consul") && k.name().equals("orders"), truth);
        });
    }

    /**
     * Eureka: Spring Cloud Netflix's {@code EurekaDiscoveryClient} on a real Netflix {@code DiscoveryClient} that has
     * fetched the in-process server's registry is the consumer (only {@code UP} instances, the secure port when on).
     */
    @Test
    void eureka_grpcJavaCallsWhatSpringsDiscoveryClientReturns() throws Exception {
        EmbeddedEurekaServer server = EmbeddedEurekaServer.start();
        closeables.add(server::close);
        EurekaRegistrar registrar = new EurekaRegistrar(server.serviceUrl());
        closeables.add(registrar::close);
        EurekaInstanceConfig instanceConfig = new MyDataCenterInstanceConfig();
        DefaultEurekaClientConfig clientConfig = new DefaultEurekaClientConfig() {
            @Override
            public boolean shouldRegisterWithEureka() {
                return false;
            }

            @Override
            public List<String> getEurekaServerServiceUrls(String myZone) {
                return List.of(server.serviceUrl());
            }
        };
        DiscoveryClient netflix = new DiscoveryClient(
                new ApplicationInfoManager(
                        instanceConfig, new EurekaConfigBasedInstanceInfoProvider(instanceConfig).get()),
                clientConfig,
                Jersey3TransportClientFactories.getInstance());
        closeables.add(netflix::shutdown);
        EurekaDiscoveryClient spring = new EurekaDiscoveryClient(netflix, clientConfig);
        Method refresh = DiscoveryClient.class.getDeclaredMethod("refreshRegistry");
        refresh.setAccessible(true);
        startBackends();
        List<InstanceStatus> statuses =
                List.of(InstanceStatus.UP, InstanceStatus.UP, InstanceStatus.DOWN, InstanceStatus.OUT_OF_SERVICE);
        Differential.Rounds rounds = new Differential.Rounds("xds-eureka", ROUNDS, Duration.ofSeconds(60));
        Random random = rounds.random();
        Map<Integer, InstanceInfo> registered = new java.util.HashMap<>();
        rounds.run(round -> {
            for (int i = 0; i < BACKENDS; i++) {
                boolean first = i == 0;
                InstanceInfo old = registered.remove(i);
                if (!first && random.nextInt(5) == 0) {
                    if (old != null) registrar.cancel(old);
                    continue;
                }
                InstanceInfo info = EurekaRegistrar.springCloudInstance(
                                "orders", "127.0.0.1", backends.get(i).port())
                        .setInstanceId("backend-" + i)
                        .setStatus(first ? InstanceStatus.UP : statuses.get(random.nextInt(statuses.size())))
                        .build();
                registrar.register(info);
                registered.put(i, info);
            }
            Set<String> truth = new TreeSet<>();
            await().atMost(WAIT).until(() -> {
                refresh.invoke(netflix); // what its 30-second timer does
                com.netflix.discovery.shared.Application app = netflix.getApplication("ORDERS");
                return app != null && app.getInstancesAsIsFromEureka().size() == registered.size();
            });
            for (ServiceInstance in : spring.getInstances("orders")) truth.add(backendAt(in.getPort()));
            if (bridge == null) startBridge("""
                        type: eureka
                        name: eu
                        addresses: ["%s"]
                        fetchInterval: 100ms
                        """.formatted(server.serviceUrl()));
            return compare(k -> k.registryType().equals("eureka") && k.name().equals("ORDERS"), truth);
        });
    }

    // ------------------------------------------------------------------ shared

    private static String describe(Instance in) {
        return in.getPort() + " healthy=" + in.isHealthy() + " weight=" + in.getWeight();
    }

    private static NamingService naming(String address) throws Exception {
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, address);
        p.setProperty(PropertyKeyConst.NAMING_LOAD_CACHE_AT_START, "false");
        p.setProperty(
                "JM.SNAPSHOT.PATH",
                Path.of("target", "nacos-clients").toAbsolutePath().toString());
        p.setProperty(PropertyKeyConst.ENABLE_CLIENT_METRICS, "false");
        return NamingFactory.createNamingService(p);
    }

    private void startBackends() throws Exception {
        for (int i = 0; i < BACKENDS; i++) backends.add(new IdentityBackend("backend-" + i));
    }

    private String backendAt(int port) {
        for (IdentityBackend b : backends) if (b.port() == port) return b.name();
        return "unknown port " + port;
    }

    private void startBridge(String registry) throws Exception {
        Path file = dir.resolve("bridge.yaml");
        Files.writeString(file, """
                admin: {enabled: false}
                mcp: {enabled: false}
                xds: {bindAddress: 127.0.0.1, port: 0}
                reload: {interval: 1h}
                registries:
                  - %s
                """.formatted(registry.strip().replace("\n", "\n    ")));
        bridge = Bridge.start(
                BridgeConfig.load(file, ProxylessZookeeperScenarios.PROVIDERS),
                file,
                ProxylessZookeeperScenarios.PROVIDERS);
        client = new GrpcJavaClient(bridge.xdsPort());
    }

    /**
     * Waits until grpc-java's calls to the service's host are answered by exactly the consumer's backends; the
     * disagreement left when they never are.
     */
    private List<String> compare(Predicate<ServiceKey> identity, Set<String> truth) {
        String[] last = {"never compared"};
        try {
            await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
                String host = null;
                for (MeshService s : bridge.aggregator().current().services().values()) {
                    if (s.sources().stream().anyMatch(identity)) host = s.host();
                }
                if (host == null) {
                    last[0] = "the bridge has no host for the service";
                    return false;
                }
                ProxylessClient.Calls calls = client.call(host, 6 * BACKENDS);
                Set<String> answered = new TreeSet<>(calls.answeredBy().keySet());
                last[0] = "consumer calls " + truth + ", grpc-java's calls to xds:///" + host + " answered by "
                        + answered + (calls.failures().isEmpty() ? "" : ", failures " + calls.failures());
                return answered.equals(truth) && calls.failures().isEmpty();
            });
            assertThat(bridge.meters().find("meshbridge.xds.nacks").counters())
                    .allSatisfy(n -> assertThat(n.count()).isZero());
            return List.of();
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return List.of(last[0]);
        }
    }
}
