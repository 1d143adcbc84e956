package dev.meshbridge.registry.nacos;

import static org.assertj.core.api.Assertions.assertThat;

import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.pojo.Instance;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.testing.Differential;
import dev.meshbridge.core.testing.Differential.Identity;
import dev.meshbridge.core.testing.Differential.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The differential suite of Nacos: seeded rounds register, change and deregister instances with real nacos-clients
 * (one gRPC connection per application, as Spring Cloud Alibaba and Dubbo register) in two namespaces and two groups,
 * against the protocol-level test server; the same service name lives in several namespaces and groups, and a Dubbo
 * provider name ({@code providers:<interface>:<version>:}) lives in both namespaces (two environments). After each
 * round, for every (namespace, group, service), the instances nacos-client's own {@code
 * NamingService.selectInstances(service, group, healthy=true)} returns, with their weights (Nacos weight {@code w} is
 * {@code round(w * 100)} in the bridge's terms), must be exactly the endpoints the bridge serves as routable.
 */
class NacosDifferentialTest {

    private static final List<String> NAMESPACES = List.of("public", "dev");
    private static final List<String> GROUPS = List.of("DEFAULT_GROUP", "TRADE");
    private static final List<String> SERVICES = List.of("orders", "providers:org.diff.Greeter:1.0.0:");
    private static final List<Double> WEIGHTS = List.of(1.0, 1.0, 0.5, 2.0, 0.0, 3.25);
    private static final int APPS_PER_NAMESPACE = 4;

    private NacosTestServer server;
    /** Registering applications per namespace: one connection each, one instance per service and connection. */
    private final Map<String, List<NamingService>> apps = new HashMap<>();
    /** The consumer per namespace whose selectInstances is the truth. */
    private final Map<String, NamingService> consumers = new HashMap<>();

    /** One registration: which application registered what, where. */
    private record Slot(String namespace, int app, String group, String service) {}

    private final Map<Slot, Instance> registered = new LinkedHashMap<>();

    @BeforeEach
    void start() throws Exception {
        server = NacosTestServer.builder().pushDelay(Duration.ofMillis(50)).start();
        for (String ns : NAMESPACES) {
            server.createNamespace(ns);
            List<NamingService> list = new ArrayList<>();
            for (int i = 0; i < APPS_PER_NAMESPACE; i++)
                list.add(NacosTestSupport.registrant(server.address(), ns, null, null));
            apps.put(ns, list);
            consumers.put(ns, NacosTestSupport.registrant(server.address(), ns, null, null));
        }
    }

    @AfterEach
    void stop() {
        apps.values().forEach(l -> l.forEach(NacosTestSupport::shutDown));
        consumers.values().forEach(NacosTestSupport::shutDown);
        server.close();
    }

    @Test
    void namespacesAndGroups_everyRound_theBridgeServesWhatSelectInstancesReturns() throws Exception {
        Differential.Rounds rounds = new Differential.Rounds("nacos", 150, Duration.ofSeconds(40));
        Random random = rounds.random();
        try (Differential.Bridge bridge = new Differential.Bridge("type: nacos\nname: nacos\naddresses: [\""
                + server.address() + "\"]\nnacosNamespaceId: [public, dev]\nnacosGroups: [DEFAULT_GROUP, TRADE]\n"
                + "nacosRefreshInterval: 200ms")) {
            rounds.run(round -> {
                int ops = 1 + random.nextInt(4);
                for (int i = 0; i < ops; i++) change(random);
                if (!Differential.awaitConsumer(() -> lag() == null, Duration.ofSeconds(30)))
                    return List.of("nacos-client did not catch up: " + lag());
                return Differential.disagreements(
                        truth(),
                        bridge::snapshot,
                        Duration.ofMillis(1500),
                        (service, e, portName, port) -> new Target(e.address(), port, e.weight()));
            });
        }
        assertThat(rounds.ran()).isPositive();
    }

    private void change(Random random) throws Exception {
        String ns = Differential.pick(random, NAMESPACES);
        Slot slot = new Slot(
                ns,
                random.nextInt(APPS_PER_NAMESPACE),
                Differential.pick(random, GROUPS),
                Differential.pick(random, SERVICES));
        NamingService app = apps.get(ns).get(slot.app());
        if (registered.containsKey(slot) && random.nextInt(3) == 0) {
            Instance old = registered.remove(slot);
            app.deregisterInstance(slot.service(), slot.group(), old);
            return;
        }
        Instance i = new Instance();
        // each application has its own address; the port says the service
        i.setIp("127.2." + NAMESPACES.indexOf(ns) + "." + (1 + slot.app()));
        i.setPort(8000 + random.nextInt(3));
        i.setWeight(Differential.pick(random, WEIGHTS));
        i.setHealthy(random.nextInt(6) != 0);
        i.setEnabled(random.nextInt(8) != 0);
        i.setEphemeral(true);
        i.setClusterName("DEFAULT");
        Map<String, String> metadata = new HashMap<>();
        metadata.put("preserved.register.source", "SPRING_CLOUD");
        if (slot.service().startsWith("providers:")) {
            metadata.put("interface", "org.diff.Greeter");
            metadata.put("version", "1.0.0");
            metadata.put("protocol", "dubbo");
            metadata.put("side", "provider");
            metadata.put("category", "providers");
            metadata.put("path", "org.diff.Greeter");
        }
        i.setMetadata(metadata);
        app.registerInstance(slot.service(), slot.group(), i);
        registered.put(slot, i);
    }

    /** Null once each consumer's cache holds what is registered (enabled instances, as the server pushes), else why. */
    private String lag() {
        try {
            for (String ns : NAMESPACES) {
                for (String group : GROUPS) {
                    for (String service : SERVICES) {
                        SortedSet<String> expected = new TreeSet<>();
                        registered.forEach((slot, i) -> {
                            if (slot.namespace().equals(ns)
                                    && slot.group().equals(group)
                                    && slot.service().equals(service)
                                    && i.isEnabled()) expected.add(describe(i));
                        });
                        SortedSet<String> seen = new TreeSet<>();
                        for (Instance i : consumers.get(ns).getAllInstances(service, group)) seen.add(describe(i));
                        if (!expected.equals(seen))
                            return ns + "/" + group + "/" + service + ": registered " + expected + ", seen " + seen;
                    }
                }
            }
            return null;
        } catch (Exception e) {
            return e.toString();
        }
    }

    private static String describe(Instance i) {
        return i.getIp() + ":" + i.getPort() + " w=" + i.getWeight() + " healthy=" + i.isHealthy();
    }

    private Map<Identity, SortedSet<Target>> truth() throws Exception {
        Map<Identity, SortedSet<Target>> truth = new LinkedHashMap<>();
        for (String ns : NAMESPACES) {
            for (String group : GROUPS) {
                for (String service : SERVICES) {
                    SortedSet<Target> targets = new TreeSet<>();
                    for (Instance i : consumers.get(ns).selectInstances(service, group, true)) {
                        targets.add(new Target(i.getIp(), i.getPort(), (int) Math.round(i.getWeight() * 100)));
                    }
                    truth.put(identity(ns, group, service), targets);
                }
            }
        }
        return truth;
    }

    /** A Nacos service identity: the watcher's shard of (namespace, group, service name). */
    static Identity identity(String namespace, String group, String service) {
        return new Identity(
                namespace + "/" + group + "/" + service,
                (ServiceKey k) -> k.namespace().equals(namespace)
                        && k.group().equals(group)
                        && k.name().equals(service));
    }
}
