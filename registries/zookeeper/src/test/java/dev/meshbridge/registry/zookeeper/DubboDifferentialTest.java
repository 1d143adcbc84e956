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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.curator.framework.CuratorFramework;
import org.apache.dubbo.common.URL;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The differential suite of Dubbo interface-level discovery: seeded rounds register, change and remove providers in
 * two ZooKeeper roots ({@code /dubbo} and {@code /gray}) through Dubbo's own registry (the znodes a provider writes),
 * in the URL shapes Dubbo 2.6, 2.7 and 3.x write ({@code default.version}, {@code default.group}, {@code
 * default.weight} as 2.6 writes them, {@code disabled}/{@code enabled} in every combination, a {@code +} in a
 * version), add and remove Dubbo 2.6 {@code
 * override://} URLs and Dubbo 2.7+ YAML configurators in the config center; a real Dubbo 3 provider takes part too.
 * After each round, for every service identity (root, interface, version, group), the providers Dubbo's own consumer
 * would call ({@link DubboConsumerOracle}: its registry's NotifyListener, URL matching and configurators) must be
 * exactly the endpoints the bridge serves as routable, with the same ports, protocols and weights.
 */
class DubboDifferentialTest {

    private static final List<String> ROOTS = List.of("/dubbo", "/gray");
    private static final String GREETER = "org.diff.Greeter";
    private static final String ORDERS = "org.diff.Orders";
    private static final String LEDGER = "org.diff.Ledger";
    private static final String REAL = Greeter.class.getName();
    /** Interfaces per root: the Greeter lives in both (the same service in two environments). */
    private static final Map<String, List<String>> INTERFACES =
            Map.of("/dubbo", List.of(GREETER, ORDERS), "/gray", List.of(GREETER, LEDGER));

    private static final List<String> VERSIONS = List.of("", "1.0.0", "2.0.0+b7");
    private static final List<String> GROUPS = List.of("", "blue");
    private static final List<String> PROTOCOLS = List.of("dubbo", "tri");
    private static final List<Integer> PORTS = List.of(20880, 20881, 50051);
    /** Fewer than the (host, port) slots of any one root and interface (18 hosts x 3 ports), so a new one is free. */
    private static final int MAX_PROVIDERS = 48;

    private static ZkServer zk;
    private static CuratorFramework raw;
    private static final Map<String, DubboRegistryWriter> writers = new HashMap<>();
    private static final Map<String, DubboConsumerOracle> consumers = new HashMap<>();
    private static DubboProvider real;

    /** One registered provider URL. */
    private record Provider(String root, String iface, String host, int port, String url) {}

    private final Map<String, Provider> providers = new LinkedHashMap<>();
    private final Map<String, Set<String>> overrides = new HashMap<>();
    private final Map<String, String> rules = new TreeMap<>();
    /** The znode Dubbo's registry wrote for each URL registered through it, by root and URL. */
    private final Map<String, String> znodes = new HashMap<>();

    private int revisions;

    @BeforeAll
    static void start() throws Exception {
        zk = new ZkServer();
        raw = zk.client();
        for (String root : ROOTS) {
            writers.put(root, new DubboRegistryWriter(zk.address(), root));
            DubboConsumerOracle c = new DubboConsumerOracle(zk.address(), root);
            consumers.put(root, c);
            for (String iface : INTERFACES.get(root)) {
                for (String version : VERSIONS) {
                    for (String group : GROUPS) c.subscribe(iface, version, group);
                }
            }
        }
        consumers.get("/dubbo").subscribe(REAL, "", "");
        real = new DubboProvider(
                        zk.address(),
                        "diff-real",
                        "interface",
                        List.of(new DubboProvider.Export<>(Greeter.class, n -> "hi " + n, "")))
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (real != null) real.close();
        for (DubboConsumerOracle c : consumers.values()) c.close();
        for (DubboRegistryWriter w : writers.values()) w.close();
        raw.close();
        zk.close();
    }

    @Test
    void interfaceLevel_everyRound_theBridgeServesWhatDubbosConsumerCalls() throws Exception {
        Differential.Rounds rounds = new Differential.Rounds("dubbo-interface-level", 200, Duration.ofSeconds(40));
        Random random = rounds.random();
        try (Differential.Bridge bridge = new Differential.Bridge(
                "type: zookeeper\nname: zk\naddresses: [\"" + zk.address() + "\"]\nzkServicesPath: [/dubbo, /gray]")) {
            bridge.awaitSynced();
            rounds.run(round -> {
                int ops = 1 + random.nextInt(4);
                for (int i = 0; i < ops; i++) change(random);
                String[] lastLag = {null};
                if (!Differential.awaitConsumer(() -> (lastLag[0] = lag()) == null, Duration.ofSeconds(30)))
                    return List.of("Dubbo's consumer did not catch up: " + lastLag[0]);
                return Differential.disagreements(
                        truth(),
                        bridge::snapshot,
                        Duration.ofMillis(500),
                        (service, e, portName, port) ->
                                new Target(e.address(), port, e.weight(), new TreeMap<>(Map.of("protocol", portName))));
            });
        }
        assertThat(rounds.ran()).isPositive();
    }

    // ------------------------------------------------------------------ the rounds' changes

    private void change(Random random) throws Exception {
        int dice = random.nextInt(100);
        if ((dice < 40 && providers.size() < MAX_PROVIDERS) || providers.isEmpty()) register(random, null);
        else if (dice < 60) unregister(Differential.pick(random, new ArrayList<>(providers.values())));
        else if (dice < 75) {
            Provider p = Differential.pick(random, new ArrayList<>(providers.values()));
            unregister(p);
            register(random, p);
        } else if (dice < 88) override26(random);
        else rule(random);
    }

    /** Registers a new provider, or (with {@code same}) the same address and interface with new parameters. */
    private void register(Random random, Provider same) throws Exception {
        String root = same != null ? same.root() : Differential.pick(random, ROOTS);
        String iface = same != null ? same.iface() : Differential.pick(random, INTERFACES.get(root));
        String host;
        int port;
        if (same != null) {
            host = same.host();
            port = same.port();
        } else {
            int tries = 0;
            do {
                host = "127.1." + random.nextInt(3) + "." + (1 + random.nextInt(6));
                port = Differential.pick(random, PORTS);
            } while (taken(root, iface, host, port) && ++tries < 500);
            if (taken(root, iface, host, port))
                return; // every address this service can draw is taken: this round registers nothing
        }
        String protocol = Differential.pick(random, PROTOCOLS);
        StringBuilder url = new StringBuilder(protocol + "://" + host + ":" + port + "/" + iface + "?anyhost=true"
                + "&application=diff-app&dubbo=2.0.2&interface=" + iface + "&methods=a,b&pid=7&side=provider"
                + "&timestamp=1700000000000&revision=r" + revisions++);
        // one in five providers is a Dubbo 2.6 one: default.version, default.group, default.weight, written as 2.6
        // writes its znode (Dubbo 3's registry would rename the keys)
        boolean dubbo26 = random.nextInt(5) == 0;
        String version = Differential.pick(random, VERSIONS);
        String group = Differential.pick(random, GROUPS);
        if (!version.isEmpty())
            url.append(dubbo26 ? "&default.version=" : "&version=").append(version);
        if (!group.isEmpty())
            url.append(dubbo26 ? "&default.group=" : "&group=").append(group);
        switch (random.nextInt(8)) {
            case 0 -> url.append(dubbo26 ? "&default.weight=" : "&weight=").append(50);
            case 1 -> url.append("&weight=200");
            case 2 -> url.append("&weight=0");
            default -> {}
        }
        switch (random.nextInt(10)) {
            case 0 -> url.append("&disabled=true");
            case 1 -> url.append("&enabled=false");
            case 2 -> url.append("&disabled=false&enabled=false");
            case 3 -> url.append("&disabled=false");
            default -> {}
        }
        String s = url.toString();
        if (dubbo26) {
            String znode = root + "/" + iface + "/providers/" + URL.encode(s);
            raw.create()
                    .creatingParentsIfNeeded()
                    .withMode(CreateMode.EPHEMERAL)
                    .forPath(znode);
            znodes.put(root + " " + s, znode);
        } else registerWithDubbo(root, iface, "providers", s);
        providers.put(root + " " + s, new Provider(root, iface, host, port, s));
    }

    private boolean taken(String root, String iface, String host, int port) {
        for (Provider p : providers.values()) {
            if (p.root().equals(root) && p.iface().equals(iface) && p.host().equals(host) && p.port() == port)
                return true;
        }
        return false;
    }

    private void unregister(Provider p) throws Exception {
        unregisterWithDubbo(p.root(), p.url());
        providers.remove(p.root() + " " + p.url());
    }

    /**
     * Registers through Dubbo's own registry and remembers the znode it wrote (found by the URL's unique revision).
     */
    private void registerWithDubbo(String root, String iface, String category, String url) throws Exception {
        writers.get(root).register(url);
        String revision = URL.valueOf(url).getParameter("revision");
        String dir = root + "/" + iface + "/" + category;
        for (String child : raw.getChildren().forPath(dir)) {
            if (revision.equals(URL.valueOf(URL.decode(child)).getParameter("revision"))) {
                znodes.put(root + " " + url, dir + "/" + child);
                return;
            }
        }
        throw new IllegalStateException("Dubbo's registry wrote no znode for " + url);
    }

    /**
     * Unregisters through Dubbo's registry, then deletes the znode that was written if it is still there (and so
     * removes a 2.6 znode written directly): Dubbo 3's {@code URL.toFullString} (the znode name) can order the
     * parameters of the same URL differently at unregistration than it did at registration (seen here), and its
     * registry then deletes a name that does not exist and leaves the provider in place until the session ends.
     */
    private void unregisterWithDubbo(String root, String url) throws Exception {
        String znode = znodes.remove(root + " " + url);
        if (!url.contains("default.")) writers.get(root).unregister(url);
        if (znode != null && raw.checkExists().forPath(znode) != null)
            raw.delete().forPath(znode);
    }

    /** Adds a Dubbo 2.6 {@code override://} of one provider (disable or weight) or removes one. */
    private void override26(Random random) throws Exception {
        List<String> existing = new ArrayList<>();
        overrides.forEach((root, set) -> set.forEach(o -> existing.add(root + " " + o)));
        if (!existing.isEmpty() && random.nextInt(3) == 0) {
            String pick = Differential.pick(random, existing);
            String root = pick.substring(0, pick.indexOf(' '));
            String url = pick.substring(pick.indexOf(' ') + 1);
            unregisterWithDubbo(root, url);
            overrides.get(root).remove(url);
            return;
        }
        if (providers.isEmpty()) return;
        Provider p = Differential.pick(random, new ArrayList<>(providers.values()));
        URL provider = URL.valueOf(p.url());
        StringBuilder o = new StringBuilder("override://" + p.host() + ":" + p.port() + "/" + p.iface()
                + "?category=configurators&dynamic=false&enabled=true&revision=o" + revisions++);
        String version = provider.getVersion();
        String group = provider.getGroup();
        if (version != null && !version.isEmpty()) o.append("&version=").append(version);
        if (group != null && !group.isEmpty()) o.append("&group=").append(group);
        o.append(random.nextBoolean() ? "&disabled=true" : "&weight=" + (1 + random.nextInt(300)));
        String url = o.toString();
        // one override per provider address, replaced as dubbo-admin does: two that disagree on one address tie in
        // Dubbo's order (address, then priority) and are applied in ZooKeeper's child order, which is arbitrary (it
        // differs between the servers of an ensemble), so no consumer's answer is the truth there
        String prefix = "override://" + p.host() + ":" + p.port() + "/" + p.iface() + "?";
        for (String old : new ArrayList<>(overrides.getOrDefault(p.root(), Set.of()))) {
            if (old.startsWith(prefix)) {
                unregisterWithDubbo(p.root(), old);
                overrides.get(p.root()).remove(old);
            }
        }
        registerWithDubbo(p.root(), p.iface(), "configurators", url);
        overrides.computeIfAbsent(p.root(), r -> new LinkedHashSet<>()).add(url);
    }

    /**
     * Writes a Dubbo 2.7+ configurator (YAML, config center {@code /dubbo/config/dubbo/<key>}) for one service of
     * {@code /dubbo}, as dubbo-admin does: disable one provider, or give it a weight; or deletes one.
     */
    private void rule(Random random) throws Exception {
        if (!rules.isEmpty() && random.nextInt(3) == 0) {
            String key = Differential.pick(random, new ArrayList<>(rules.keySet()));
            raw.delete().forPath("/dubbo/config/dubbo/" + key);
            rules.remove(key);
            return;
        }
        List<Provider> candidates = providers.values().stream()
                .filter(p -> p.root().equals("/dubbo") && p.iface().equals(ORDERS))
                .toList();
        if (candidates.isEmpty()) return;
        Provider p = Differential.pick(random, candidates);
        URL provider = URL.valueOf(p.url());
        String version = provider.getVersion() == null ? "" : provider.getVersion();
        String group = provider.getGroup() == null ? "" : provider.getGroup();
        String key = DubboConsumerOracle.ruleKey(p.iface(), version, group);
        String serviceKey = (group.isEmpty() ? "" : group + "/") + p.iface() + (version.isEmpty() ? "" : ":" + version);
        String parameter = random.nextBoolean() ? "disabled: true" : "weight: " + (1 + random.nextInt(300));
        String yaml = """
                configVersion: v2.7
                scope: service
                key: %s
                enabled: true
                configs:
                  - side: consumer
                    addresses: ["0.0.0.0"]
                    providerAddresses: ["%s:%d"]
                    parameters:
                      %s
                """.formatted(serviceKey, p.host(), p.port(), parameter);
        String path = "/dubbo/config/dubbo/" + key;
        byte[] data = yaml.getBytes(StandardCharsets.UTF_8);
        if (raw.checkExists().forPath(path) == null)
            raw.create().creatingParentsIfNeeded().forPath(path, data);
        else raw.setData().forPath(path, data);
        rules.put(key, yaml);
    }

    // ------------------------------------------------------------------ the consumer's truth

    /**
     * Null once every consumer has been notified of exactly the providers and overrides that Dubbo's registry gives
     * it (each registration carries a unique {@code revision}), else what one of them lacks.
     */
    private String lag() {
        for (String root : ROOTS) {
            DubboConsumerOracle c = consumers.get(root);
            for (String iface : INTERFACES.get(root)) {
                for (String version : VERSIONS) {
                    for (String group : GROUPS) {
                        Set<String> expected = new TreeSet<>();
                        for (Provider p : providers.values()) {
                            if (p.root().equals(root)
                                    && p.iface().equals(iface)
                                    && c.matches(iface, version, group, p.url()))
                                expected.add(URL.valueOf(p.url()).getParameter("revision"));
                        }
                        for (String o : overrides.getOrDefault(root, Set.of())) {
                            if (c.matches(iface, version, group, o))
                                expected.add(URL.valueOf(o).getParameter("revision"));
                        }
                        Set<String> seen = new TreeSet<>();
                        List<String> unexpected = new ArrayList<>();
                        for (URL u : c.providers(iface, version, group)) {
                            seen.add(u.getParameter("revision"));
                            if (!expected.contains(u.getParameter("revision"))) unexpected.add(u.toFullString());
                        }
                        for (URL u : c.overrides(iface, version, group)) seen.add(u.getParameter("revision"));
                        if (!expected.equals(seen)) {
                            return identity(root, iface, version, group) + ": registered revisions " + expected
                                    + ", notified " + seen + ", in ZooKeeper " + znodeRevisions(root, iface)
                                    + (unexpected.isEmpty() ? "" : ", notified and not expected " + unexpected);
                        }
                    }
                }
            }
        }
        int real = consumers.get("/dubbo").providers(REAL, "", "").size();
        return real == 2 ? null : "the real provider's 2 URLs: notified " + real;
    }

    /** The revisions of the provider and override znodes of one interface, for messages. */
    private static Set<String> znodeRevisions(String root, String iface) {
        Set<String> out = new TreeSet<>();
        for (String category : List.of("providers", "configurators")) {
            try {
                for (String child : raw.getChildren().forPath(root + "/" + iface + "/" + category))
                    out.add(URL.valueOf(URL.decode(child)).getParameter("revision"));
            } catch (Exception e) {
                out.add(category + ": " + e.getClass().getSimpleName());
            }
        }
        return out;
    }

    /** For every identity of every root, the providers Dubbo's consumer would call. */
    private Map<Identity, SortedSet<Target>> truth() {
        Map<Identity, SortedSet<Target>> truth = new LinkedHashMap<>();
        for (String root : ROOTS) {
            DubboConsumerOracle c = consumers.get(root);
            for (String iface : INTERFACES.get(root)) {
                for (String version : VERSIONS) {
                    for (String group : GROUPS) {
                        String rule = root.equals("/dubbo")
                                ? rules.get(DubboConsumerOracle.ruleKey(iface, version, group))
                                : null;
                        truth.put(identity(root, iface, version, group), c.callable(iface, version, group, rule));
                    }
                }
            }
        }
        truth.put(identity("/dubbo", REAL, "", ""), consumers.get("/dubbo").callable(REAL, "", "", null));
        return truth;
    }

    /** A Dubbo interface-level service identity: the watcher's shard of (root, interface, version, group). */
    static Identity identity(String root, String iface, String version, String group) {
        String name = root + " " + iface + (version.isEmpty() ? "" : ":" + version)
                + (group.isEmpty() ? "" : " group=" + group);
        return new Identity(
                name,
                (ServiceKey k) -> k.name().equals(iface)
                        && k.version().equals(version)
                        && k.group().equals(group)
                        && k.namespace().equals(ZookeeperCatalog.DUBBO_NS + root));
    }
}
