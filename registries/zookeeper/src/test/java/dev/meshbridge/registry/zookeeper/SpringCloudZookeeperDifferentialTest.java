package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.testing.Differential;
import dev.meshbridge.core.testing.Differential.Identity;
import dev.meshbridge.core.testing.Differential.Target;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
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
import org.springframework.cloud.commons.util.InetUtils;
import org.springframework.cloud.commons.util.InetUtilsProperties;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.zookeeper.discovery.ZookeeperDiscoveryClient;
import org.springframework.cloud.zookeeper.discovery.ZookeeperDiscoveryProperties;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;
import org.springframework.cloud.zookeeper.discovery.ZookeeperServiceInstanceListSupplier;
import org.springframework.cloud.zookeeper.discovery.dependency.ZookeeperDependencies;
import reactor.core.publisher.Flux;

/**
 * The differential suite of Spring Cloud ZooKeeper: seeded rounds register, change (status, ports, metadata) and
 * unregister instances as Spring Cloud ZooKeeper writes them (curator x-discovery, its {@link ZookeeperInstance}
 * payload, {@code instance_status} metadata, a secure port or not, an IP or a host name as {@code prefer-ip-address}
 * decides). After each round, for every service, the instances Spring's own consumer side would call, that is {@link
 * ZookeeperDiscoveryClient#getInstances} filtered by its load balancer's {@link ZookeeperServiceInstanceListSupplier}
 * (only {@code UP} or no status), at the port it uses ({@code getPort()}: the secure port when there is one), must be
 * exactly the endpoints the bridge serves as routable; a host name counts as the address it resolves to (the same
 * table for both sides).
 */
class SpringCloudZookeeperDifferentialTest {

    private static final List<String> SERVICES = List.of("orders", "stock", "pay-api");
    private static final List<String> STATUSES =
            List.of("UP", "UP", "UP", "", "up", "DOWN", "OUT_OF_SERVICE", "STARTING", "UNKNOWN");
    private static final List<Integer> PORTS = List.of(8080, 8081, 9000);
    /** Host names some instances register under (Spring's default without prefer-ip-address), and their addresses. */
    private static final Map<String, String> NAMES = names();

    private static ZkServer zk;
    private static CuratorFramework client;
    private static ServiceDiscovery<ZookeeperInstance> registrar;
    private static ServiceDiscovery<ZookeeperInstance> reader;
    private static ZookeeperDiscoveryClient discovery;
    private static final ZookeeperDependencies dependencies = new ZookeeperDependencies();

    private final Map<String, ServiceInstance<ZookeeperInstance>> registered = new LinkedHashMap<>();

    private static Map<String, String> names() {
        Map<String, String> m = new TreeMap<>();
        for (int i = 1; i <= 6; i++) m.put("zk-node-" + i + ".diff.example", "127.4.9." + i);
        return m;
    }

    @BeforeAll
    static void start() throws Exception {
        zk = new ZkServer();
        client = zk.client();
        registrar = discovery();
        reader = discovery();
        ZookeeperDiscoveryProperties properties =
                new ZookeeperDiscoveryProperties(new InetUtils(new InetUtilsProperties()));
        discovery = new ZookeeperDiscoveryClient(reader, dependencies, properties);
    }

    /** curator x-discovery as Spring Cloud ZooKeeper sets it up: {@code /services}, its JSON serializer. */
    private static ServiceDiscovery<ZookeeperInstance> discovery() throws Exception {
        ServiceDiscovery<ZookeeperInstance> d = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
                .client(client)
                .basePath("/services")
                .serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class))
                .build();
        d.start();
        return d;
    }

    @AfterAll
    static void stop() throws Exception {
        reader.close();
        registrar.close();
        client.close();
        zk.close();
    }

    @Test
    void everyRound_theBridgeServesWhatSpringsLoadBalancerCalls() throws Exception {
        Differential.Rounds rounds = new Differential.Rounds("spring-cloud-zookeeper", 150, Duration.ofSeconds(30));
        Random random = rounds.random();
        try (Differential.Bridge bridge = new Differential.Bridge(
                "type: zookeeper\nname: zk\naddresses: [\"" + zk.address()
                        + "\"]\nzkServicesPath: [/services]\nreregistrationWindow: 50ms",
                SpringCloudZookeeperDifferentialTest::lookup)) {
            bridge.awaitSynced();
            rounds.run(round -> {
                int ops = 1 + random.nextInt(4);
                for (int i = 0; i < ops; i++) change(random);
                return Differential.disagreements(
                        truth(),
                        bridge::snapshot,
                        Duration.ofMillis(600),
                        (service, e, portName, port) -> new Target(
                                e.address(),
                                port,
                                e.weight(),
                                details(portName.equals("https"), e.labels().get("zone"))));
            });
        }
        assertThat(rounds.ran()).isPositive();
    }

    static InetAddress[] lookup(String host) throws UnknownHostException {
        String address = NAMES.get(host);
        if (address == null) throw new UnknownHostException(host);
        return new InetAddress[] {InetAddress.getByName(address)};
    }

    private static SortedMap<String, String> details(boolean secure, String zone) {
        SortedMap<String, String> d = new TreeMap<>();
        d.put("secure", Boolean.toString(secure));
        if (zone != null) d.put("zone", zone);
        return d;
    }

    // ------------------------------------------------------------------ the rounds' changes

    private void change(Random random) throws Exception {
        int dice = random.nextInt(100);
        if (dice < 40 || registered.isEmpty()) {
            register(random);
        } else if (dice < 65) {
            String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
            registrar.unregisterService(registered.remove(id));
        } else {
            // Spring's ZookeeperServiceRegistry.setStatus and a re-registration with new metadata: one updated znode
            String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
            ServiceInstance<ZookeeperInstance> old = registered.get(id);
            ServiceInstance<ZookeeperInstance> updated = instance(
                    random, id, old.getName(), old.getAddress(), old.getPort(), old.getSslPort(), random.nextBoolean());
            registrar.updateService(updated);
            registered.put(id, updated);
        }
    }

    private void register(Random random) throws Exception {
        String name = Differential.pick(random, SERVICES);
        String address;
        int port;
        int tries = 0;
        do {
            address = random.nextInt(3) == 0
                    ? Differential.pick(random, new ArrayList<>(NAMES.keySet()))
                    : "127.4." + random.nextInt(2) + "." + (1 + random.nextInt(6));
            port = Differential.pick(random, PORTS);
        } while (taken(name, address, port) && ++tries < 500);
        if (taken(name, address, port))
            return; // every address this service can draw is taken: this round registers nothing
        Integer sslPort = random.nextInt(3) == 0 ? securePort(port) : null;
        String id = UUID.randomUUID().toString();
        ServiceInstance<ZookeeperInstance> i = instance(random, id, name, address, port, sslPort, true);
        registrar.registerService(i);
        registered.put(id, i);
    }

    /**
     * An instance as Spring Cloud ZooKeeper's {@code ServiceInstanceRegistration} builds it; {@code newPorts} lets an
     * update also change whether it has a secure port.
     */
    private static ServiceInstance<ZookeeperInstance> instance(
            Random random, String id, String name, String address, int port, Integer sslPort, boolean newPorts)
            throws Exception {
        Map<String, String> metadata = new HashMap<>();
        metadata.put("instance_status", Differential.pick(random, STATUSES));
        if (random.nextBoolean()) metadata.put("zone", Differential.pick(random, List.of("zone-a", "zone-b")));
        Integer ssl = newPorts && random.nextInt(4) == 0 ? (sslPort == null ? securePort(port) : null) : sslPort;
        var builder = ServiceInstance.<ZookeeperInstance>builder()
                .id(id)
                .name(name)
                .address(address)
                .port(port)
                .payload(new ZookeeperInstance(id, name, metadata))
                .uriSpec(new UriSpec("{scheme}://{address}:{port}"));
        if (ssl != null) builder.sslPort(ssl);
        return builder.build();
    }

    /** An instance's secure port follows from its port, so two instances of one address never share a socket. */
    private static int securePort(int port) {
        return port + 10_000;
    }

    /**
     * One instance per resolved address and port in a service: two registrations of one socket are one endpoint by the
     * bridge's duplicate rule, while Spring would list both (and call that socket twice as often).
     */
    private boolean taken(String name, String address, int port) {
        String resolved = NAMES.getOrDefault(address, address);
        for (ServiceInstance<ZookeeperInstance> i : registered.values()) {
            if (i.getName().equals(name)
                    && NAMES.getOrDefault(i.getAddress(), i.getAddress()).equals(resolved)
                    && i.getPort() == port) return true;
        }
        return false;
    }

    // ------------------------------------------------------------------ the consumer's truth

    /** For every service, what Spring Cloud's load balancer would call: getInstances, then the UP filter. */
    private Map<Identity, SortedSet<Target>> truth() {
        Map<Identity, SortedSet<Target>> truth = new LinkedHashMap<>();
        for (String service : SERVICES) {
            List<org.springframework.cloud.client.ServiceInstance> listed = discovery.getInstances(service);
            ServiceInstanceListSupplier delegate = new ServiceInstanceListSupplier() {
                @Override
                public String getServiceId() {
                    return service;
                }

                @Override
                public Flux<List<org.springframework.cloud.client.ServiceInstance>> get() {
                    return Flux.just(listed);
                }
            };
            List<org.springframework.cloud.client.ServiceInstance> called = new ZookeeperServiceInstanceListSupplier(
                            delegate, dependencies)
                    .get()
                    .blockFirst();
            SortedSet<Target> targets = new TreeSet<>();
            for (org.springframework.cloud.client.ServiceInstance i : called) {
                targets.add(new Target(
                        NAMES.getOrDefault(i.getHost(), i.getHost()),
                        i.getPort(),
                        dev.meshbridge.core.model.Endpoint.DEFAULT_WEIGHT,
                        details(i.isSecure(), i.getMetadata().get("zone"))));
            }
            truth.put(identity(service), targets);
        }
        return truth;
    }

    /** A Spring Cloud service under {@code /services}: the watcher's shard of that name. */
    static Identity identity(String service) {
        return new Identity(
                "/services " + service,
                (ServiceKey k) ->
                        k.name().equals(service) && k.namespace().equals(ZookeeperCatalog.SPRING_NS + "/services"));
    }
}
