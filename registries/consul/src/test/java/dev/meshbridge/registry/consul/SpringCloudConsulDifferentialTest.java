package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.ecwid.consul.v1.ConsulClient;
import com.ecwid.consul.v1.agent.model.NewService;
import dev.meshbridge.core.model.Endpoint;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.commons.util.InetUtils;
import org.springframework.cloud.commons.util.InetUtilsProperties;
import org.springframework.cloud.consul.discovery.ConsulDiscoveryClient;
import org.springframework.cloud.consul.discovery.ConsulDiscoveryProperties;

/**
 * The differential suite of Spring Cloud Consul, against the protocol-level Consul test server: seeded rounds
 * register (with Spring Cloud Consul's own Consul client, as its {@code ConsulServiceRegistry} does: a TTL check, meta
 * {@code secure} and {@code zone}, an IP or a host name as {@code prefer-ip-address} decides), pass, warn and fail the
 * checks, put instances in maintenance and deregister them. After each round, for every service:
 *
 * <ol>
 *   <li>the instances Spring's own {@link ConsulDiscoveryClient#getInstances} returns with {@code query-passing=true}
 *       (the setting that keeps a Spring consumer off failing instances), at the host and port it gives and with
 *       {@code isSecure()}, must be exactly the endpoints the bridge serves as routable (the bridge set to {@code
 *       warningHealth: unhealthy}, which is what {@code passing} means in Consul);
 *   <li>the instances it returns with Spring's default {@code query-passing=false} (every instance, whatever its
 *       checks) must be exactly the endpoints the bridge serves at all (with their health, for the mesh to keep
 *       traffic off the failing ones).
 * </ol>
 *
 * A host name counts as the address it resolves to (one table for both sides).
 */
class SpringCloudConsulDifferentialTest {

    private static final List<String> SERVICES = List.of("orders", "stock");
    private static final List<Integer> PORTS = List.of(8080, 8081, 9000);
    private static final Map<String, String> NAMES = names();

    private static ConsulTestServer server;
    private static ConsulClient consul;
    private static ConsulDiscoveryClient passing;
    private static ConsulDiscoveryClient everything;

    /** The registrations of the rounds, by service id. */
    private final Map<String, NewService> registered = new LinkedHashMap<>();

    private static Map<String, String> names() {
        Map<String, String> m = new TreeMap<>();
        for (int i = 1; i <= 4; i++) m.put("co-node-" + i + ".diff.example", "127.6.9." + i);
        return m;
    }

    @BeforeAll
    static void start() throws Exception {
        server = ConsulTestServer.builder().start();
        consul = new ConsulClient("127.0.0.1", server.port());
        ConsulDiscoveryProperties onlyPassing = new ConsulDiscoveryProperties(new InetUtils(new InetUtilsProperties()));
        onlyPassing.setQueryPassing(true);
        passing = new ConsulDiscoveryClient(consul, onlyPassing);
        everything = new ConsulDiscoveryClient(
                consul, new ConsulDiscoveryProperties(new InetUtils(new InetUtilsProperties())));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void everyRound_theBridgeServesWhatSpringsDiscoveryClientReturns() throws Exception {
        Differential.Rounds rounds = new Differential.Rounds("spring-cloud-consul", 150, Duration.ofSeconds(30));
        Random random = rounds.random();
        try (Differential.Bridge bridge = new Differential.Bridge(
                "type: consul\nname: c1\naddresses: [\"" + server.address() + "\"]\nwarningHealth: unhealthy",
                SpringCloudConsulDifferentialTest::lookup)) {
            bridge.awaitSynced();
            rounds.run(round -> {
                int ops = 1 + random.nextInt(3);
                for (int i = 0; i < ops; i++) change(random);
                List<String> problems = new ArrayList<>(Differential.disagreements(
                        truth(passing),
                        bridge::snapshot,
                        Duration.ofMillis(600),
                        (service, e, portName, port) -> new Target(
                                e.address(),
                                port,
                                e.weight(),
                                details(portName.equals("https"), e.labels().get("zone")))));
                // every endpoint whatever its health, against Spring's default listing
                for (String p : Differential.disagreements(
                        truth(everything),
                        bridge::snapshot,
                        Duration.ofMillis(600),
                        (service, e, portName, port) -> new Target(
                                e.address(),
                                port,
                                Endpoint.DEFAULT_WEIGHT,
                                details(portName.equals("https"), e.labels().get("zone"))),
                        false)) {
                    problems.add("listed (query-passing=false): " + p);
                }
                return problems;
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

    private void change(Random random) {
        int dice = random.nextInt(100);
        if (dice < 35 || registered.isEmpty()) {
            register(random, null);
            return;
        }
        String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
        if (dice < 50) {
            consul.agentServiceDeregister(id);
            registered.remove(id);
        } else if (dice < 65) {
            register(random, registered.get(id));
        } else if (dice < 90) {
            String check = "service:" + id;
            switch (random.nextInt(3)) {
                case 0 -> consul.agentCheckPass(check);
                case 1 -> consul.agentCheckWarn(check);
                default -> consul.agentCheckFail(check);
            }
        } else {
            consul.agentServiceSetMaintenance(id, random.nextBoolean(), "diff");
        }
    }

    /** Registers a new instance, or {@code same} again (Spring re-registers at start) with new meta and check. */
    private void register(Random random, NewService same) {
        NewService s = new NewService();
        if (same != null) {
            s.setId(same.getId());
            s.setName(same.getName());
            s.setAddress(same.getAddress());
            s.setPort(same.getPort());
        } else {
            String name = Differential.pick(random, SERVICES);
            String address;
            int port;
            int tries = 0;
            do {
                address = random.nextInt(3) == 0
                        ? Differential.pick(random, new ArrayList<>(NAMES.keySet()))
                        : "127.6." + random.nextInt(2) + "." + (1 + random.nextInt(6));
                port = Differential.pick(random, PORTS);
            } while (taken(name, address, port) && ++tries < 500);
            if (taken(name, address, port))
                return; // every address this service can draw is taken: this round registers nothing
            s.setId(name + "-" + address.replace('.', '-') + "-" + port);
            s.setName(name);
            s.setAddress(address);
            s.setPort(port);
        }
        Map<String, String> meta = new HashMap<>();
        // Spring Cloud Consul's registration meta: secure (server.ssl.enabled), zone (instance-zone), group
        meta.put("secure", Boolean.toString(random.nextInt(3) == 0));
        if (random.nextBoolean()) meta.put("zone", Differential.pick(random, List.of("zone-a", "zone-b")));
        s.setMeta(meta);
        s.setTags(List.of());
        NewService.Check check = new NewService.Check();
        check.setTtl("30s");
        check.setStatus(Differential.pick(random, List.of("passing", "passing", "warning", "critical")));
        s.setCheck(check);
        consul.agentServiceRegister(s);
        registered.put(s.getId(), s);
    }

    /** One instance per resolved address and port in a service (the bridge's duplicate rule merges a socket). */
    private boolean taken(String name, String address, int port) {
        String resolved = NAMES.getOrDefault(address, address);
        for (NewService s : registered.values()) {
            if (s.getName().equals(name)
                    && NAMES.getOrDefault(s.getAddress(), s.getAddress()).equals(resolved)
                    && s.getPort() == port) return true;
        }
        return false;
    }

    // ------------------------------------------------------------------ the consumer's truth

    private static Map<Identity, SortedSet<Target>> truth(ConsulDiscoveryClient client) {
        Map<Identity, SortedSet<Target>> truth = new LinkedHashMap<>();
        for (String service : SERVICES) {
            SortedSet<Target> targets = new TreeSet<>();
            for (ServiceInstance i : client.getInstances(service)) {
                targets.add(new Target(
                        NAMES.getOrDefault(i.getHost(), i.getHost()),
                        i.getPort(),
                        Endpoint.DEFAULT_WEIGHT,
                        details(i.isSecure(), i.getMetadata().get("zone"))));
            }
            truth.put(identity(service), targets);
        }
        return truth;
    }

    /** A Consul service of the local datacenter: the watcher's shard of its name. */
    static Identity identity(String service) {
        return new Identity(
                server.localDatacenter() + "/" + service,
                (ServiceKey k) -> k.name().equals(service) && k.namespace().equals(server.localDatacenter()));
    }
}
