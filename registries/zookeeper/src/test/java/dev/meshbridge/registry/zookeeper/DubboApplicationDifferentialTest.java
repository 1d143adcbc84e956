package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.testing.Differential;
import dev.meshbridge.core.testing.Differential.Identity;
import dev.meshbridge.core.testing.Differential.Target;
import dev.meshbridge.registry.zookeeper.demo.Greeter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.metadata.report.MetadataReport;
import org.apache.dubbo.metadata.report.MetadataReportFactory;
import org.apache.dubbo.registry.client.DefaultServiceInstance;
import org.apache.dubbo.registry.client.ServiceDiscoveryFactory;
import org.apache.dubbo.registry.client.metadata.ServiceInstanceMetadataUtils;
import org.apache.dubbo.registry.zookeeper.ZookeeperInstance;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The differential suite of Dubbo 3 application-level discovery: seeded rounds register, change and remove application
 * instances in ZooKeeper as Dubbo 3's {@code ZookeeperServiceDiscovery} writes them (curator x-discovery with Dubbo's
 * {@link ZookeeperInstance} payload, {@code dubbo.endpoints} with {@code dubbo} and {@code tri} ports, {@code
 * dubbo.metadata.revision}), next to a real Dubbo 3 provider registering with {@code register-mode=instance}, and
 * rewrite the interface-to-application mapping ({@code /dubbo/mapping/<interface>}, one or two applications). After
 * each round, Dubbo's own consumer side says what it would call: its {@code ZookeeperServiceDiscovery.getInstances}
 * for each application, each instance at the port {@link ServiceInstanceMetadataUtils#getEndpoint} gives per protocol,
 * and for an interface the instances of the applications its own metadata report's {@code getServiceAppMapping}
 * names. That must be exactly what the bridge serves as routable, per application host and per mapped interface host.
 */
class DubboApplicationDifferentialTest {

    private static final List<String> APPS = List.of("shop", "ledger", "audit");
    private static final List<String> INTERFACES = List.of("org.diff.Cart", "org.diff.Books");
    private static final String REAL_APP = "diff-real-app";
    private static final String REAL_IFACE = Greeter.class.getName();

    private static ZkServer zk;
    private static CuratorFramework raw;
    private static ServiceDiscovery<ZookeeperInstance> registrar;
    private static final FrameworkModel framework = new FrameworkModel();
    private static org.apache.dubbo.registry.client.ServiceDiscovery discovery;
    private static MetadataReport metadataReport;
    private static URL registryUrl;
    private static DubboProvider real;

    private final Map<String, ServiceInstance<ZookeeperInstance>> registered = new LinkedHashMap<>();
    /** How many distinct addresses {@link #register} draws from (2 x 6 hosts, 3 ports): a full set registers no more. */
    private static final int ADDRESSES = 2 * 6 * 3;

    private final Map<String, List<String>> mappings = new TreeMap<>();
    private int revisions;

    @BeforeAll
    static void start() throws Exception {
        zk = new ZkServer();
        raw = zk.client();
        registrar = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
                .client(raw)
                .basePath("/services")
                .serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class))
                .build();
        registrar.start();
        ApplicationModel app = framework.newApplication();
        app.getApplicationConfigManager().setApplication(new ApplicationConfig("diff-consumer"));
        registryUrl = URL.valueOf("zookeeper://" + zk.address() + "/org.apache.dubbo.registry.RegistryService"
                        + "?file.cache=false&application=diff-consumer")
                .setScopeModel(app);
        discovery = app.getExtensionLoader(ServiceDiscoveryFactory.class)
                .getExtension("zookeeper")
                .getServiceDiscovery(registryUrl);
        metadataReport = app.getExtensionLoader(MetadataReportFactory.class)
                .getExtension("zookeeper")
                .getMetadataReport(URL.valueOf("zookeeper://" + zk.address() + "/"
                                + "org.apache.dubbo.metadata.report.MetadataReport?file.cache=false")
                        .setScopeModel(app));
        real = new DubboProvider(
                        zk.address(),
                        REAL_APP,
                        "instance",
                        List.of(new DubboProvider.Export<>(Greeter.class, n -> "hi " + n, "")))
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (real != null) real.close();
        if (discovery != null) discovery.destroy();
        framework.destroy();
        registrar.close();
        raw.close();
        zk.close();
    }

    @Test
    void applicationLevel_everyRound_theBridgeServesWhatDubbosServiceDiscoveryGives() throws Exception {
        Differential.Rounds rounds = new Differential.Rounds("dubbo-application-level", 120, Duration.ofSeconds(30));
        Random random = rounds.random();
        try (Differential.Bridge bridge = new Differential.Bridge("type: zookeeper\nname: zk\naddresses: [\""
                + zk.address() + "\"]\nzkServicesPath: [/dubbo, /services]\nreregistrationWindow: 50ms")) {
            bridge.awaitSynced();
            rounds.run(round -> {
                int ops = 1 + random.nextInt(3);
                for (int i = 0; i < ops; i++) change(random);
                return Differential.disagreements(
                        truth(),
                        bridge::snapshot,
                        Duration.ofMillis(600),
                        (service, e, portName, port) ->
                                new Target(e.address(), port, e.weight(), new TreeMap<>(Map.of("protocol", portName))));
            });
        }
        assertThat(rounds.ran()).isPositive();
    }

    // ------------------------------------------------------------------ the rounds' changes

    private void change(Random random) throws Exception {
        int dice = random.nextInt(100);
        if (registered.isEmpty() || (dice < 35 && registered.size() < ADDRESSES)) {
            register(random, null);
        } else if (dice < 55) {
            String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
            registrar.unregisterService(registered.remove(id));
        } else if (dice < 75) {
            // a provider restarted with other protocols or ports: a new revision under the same id
            String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
            register(random, registered.get(id));
        } else {
            String iface = Differential.pick(random, INTERFACES);
            List<String> apps = new ArrayList<>(List.of(Differential.pick(random, APPS)));
            if (random.nextInt(3) == 0) {
                String second = Differential.pick(random, APPS);
                if (!apps.contains(second)) apps.add(second);
            }
            String path = "/dubbo/mapping/" + iface;
            byte[] data = String.join(",", apps).getBytes(StandardCharsets.UTF_8);
            if (raw.checkExists().forPath(path) == null)
                raw.create().creatingParentsIfNeeded().forPath(path, data);
            else raw.setData().forPath(path, data);
            mappings.put(iface, apps);
        }
    }

    /** An application instance as Dubbo 3's ZookeeperServiceDiscovery registers it. */
    private void register(Random random, ServiceInstance<ZookeeperInstance> same) throws Exception {
        String app;
        String host;
        int base;
        if (same != null) {
            app = same.getName();
            host = same.getAddress();
            base = same.getPort();
        } else {
            do {
                app = Differential.pick(random, APPS);
                host = "127.7." + random.nextInt(2) + "." + (1 + random.nextInt(6));
                base = 20880 + random.nextInt(3);
            } while (registered.containsKey(host + ":" + base) && registered.get(host + ":" + base) != null);
        }
        String id = host + ":" + base;
        List<String> endpoints = new ArrayList<>();
        switch (random.nextInt(3)) {
            case 0 -> endpoints.add("{\"port\":" + base + ",\"protocol\":\"dubbo\"}");
            case 1 -> endpoints.add("{\"port\":" + (base + 30_000) + ",\"protocol\":\"tri\"}");
            default -> {
                endpoints.add("{\"port\":" + base + ",\"protocol\":\"dubbo\"}");
                endpoints.add("{\"port\":" + (base + 30_000) + ",\"protocol\":\"tri\"}");
            }
        }
        Map<String, String> metadata = new TreeMap<>();
        metadata.put("dubbo.endpoints", "[" + String.join(",", endpoints) + "]");
        metadata.put("dubbo.metadata.revision", "rev" + revisions++);
        metadata.put("dubbo.metadata.storage-type", "local");
        ServiceInstance<ZookeeperInstance> instance = ServiceInstance.<ZookeeperInstance>builder()
                .id(id)
                .name(app)
                .address(host)
                .port(base)
                .payload(new ZookeeperInstance(id, app, metadata))
                .build();
        if (same != null) registrar.updateService(instance);
        else registrar.registerService(instance);
        registered.put(id, instance);
    }

    // ------------------------------------------------------------------ the consumer's truth

    /** Dubbo's consumer side: its service discovery's instances per application, their endpoint per protocol. */
    private static SortedSet<Target> callable(String app) {
        SortedSet<Target> out = new TreeSet<>();
        for (org.apache.dubbo.registry.client.ServiceInstance i : discovery.getInstances(app)) {
            for (String protocol : List.of("dubbo", "tri")) {
                DefaultServiceInstance.Endpoint e = ServiceInstanceMetadataUtils.getEndpoint(i, protocol);
                if (e == null) continue;
                out.add(new Target(
                        i.getHost(),
                        e.getPort(),
                        dev.meshbridge.core.model.Endpoint.DEFAULT_WEIGHT,
                        new TreeMap<>(Map.of("protocol", protocol))));
            }
        }
        return out;
    }

    private Map<Identity, SortedSet<Target>> truth() {
        Map<Identity, SortedSet<Target>> truth = new LinkedHashMap<>();
        for (String app : APPS) truth.put(application(app), callable(app));
        truth.put(application(REAL_APP), callable(REAL_APP));
        for (String iface : INTERFACES) {
            Set<String> apps = metadataReport.getServiceAppMapping(iface, registryUrl);
            SortedSet<Target> targets = new TreeSet<>();
            for (String app : apps) targets.addAll(callable(app));
            truth.put(mapped(iface), targets);
        }
        SortedSet<Target> realMapped = new TreeSet<>();
        for (String app : metadataReport.getServiceAppMapping(REAL_IFACE, registryUrl))
            realMapped.addAll(callable(app));
        truth.put(mapped(REAL_IFACE), realMapped);
        return truth;
    }

    /** A Dubbo 3 application under {@code /services}. */
    static Identity application(String app) {
        return new Identity(
                "application " + app,
                (ServiceKey k) ->
                        k.name().equals(app) && k.namespace().equals(ZookeeperCatalog.DUBBO_APP_NS + "/services"));
    }

    /** An interface known only through {@code /dubbo/mapping}. */
    static Identity mapped(String iface) {
        return new Identity(
                "mapped interface " + iface,
                (ServiceKey k) ->
                        k.name().equals(iface) && k.namespace().equals(ZookeeperCatalog.DUBBO_MAPPING_NS + "/dubbo"));
    }
}
