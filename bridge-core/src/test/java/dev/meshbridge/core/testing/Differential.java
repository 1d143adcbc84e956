package dev.meshbridge.core.testing;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.Ticker;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The kit of the differential suites: a framework's own consumer says which instances it would call, the bridge says
 * which endpoints it serves as routable, and the two sets must be equal for every service identity, round after
 * seeded round.
 *
 * <p>The bridge is driven only through its public surface: a {@code registries[]} entry as a user writes it in
 * {@code bridge.yaml}, the type's {@link RegistryWatcherProvider} found by {@link java.util.ServiceLoader}, a real
 * aggregator, and its snapshots. A service is found by its identity ({@link ServiceKey} fields), never by a host name,
 * so the comparison holds whatever the host templates make of it; when several identities share one host, the host's
 * endpoints are what each of them gets, and that is what is compared.
 *
 * <p>Seeds: {@code -Dmeshbridge.diff.seed=N} fixes a suite's seed (printed with every failure), {@code
 * -Dmeshbridge.diff.rounds=N} its number of rounds.
 */
public final class Differential {

    /** How long the bridge may take to agree with a consumer that already has the round's state. */
    public static final Duration AGREE = Duration.ofSeconds(30);

    /**
     * Added to a suite's {@code settle} before an unchanged, disagreeing catalog counts as final: the watcher's delay
     * between a registry change and its event is a few hundred milliseconds on an idle machine and seconds on a 2-core
     * machine at a load average of 15, where the consumer in the same JVM may have caught up first. Only a round that
     * disagrees waits for it.
     */
    static final Duration LOADED_MACHINE = Duration.ofSeconds(5);

    private Differential() {}

    /**
     * One instance a client would call: where, and how much traffic it gets relative to the others of its service.
     *
     * @param address IP address or host name the client connects to
     * @param port the port it connects to
     * @param weight its weight in the bridge's terms (relative; a registry without weights gives every instance
     *     {@link Endpoint#DEFAULT_WEIGHT})
     * @param details what else the suite compares for this registry (protocol, secure port, status, metadata...)
     */
    public record Target(String address, int port, int weight, SortedMap<String, String> details)
            implements Comparable<Target> {

        public Target {
            details = new TreeMap<>(details);
        }

        public Target(String address, int port, int weight) {
            this(address, port, weight, new TreeMap<>());
        }

        @Override
        public int compareTo(Target o) {
            int c = address.compareTo(o.address);
            if (c == 0) c = Integer.compare(port, o.port);
            if (c == 0) c = Integer.compare(weight, o.weight);
            if (c == 0) c = details.toString().compareTo(o.details.toString());
            return c;
        }

        @Override
        public String toString() {
            return address + ":" + port + (weight == Endpoint.DEFAULT_WEIGHT ? "" : " w=" + weight)
                    + (details.isEmpty() ? "" : " " + details);
        }
    }

    /**
     * A service identity: how to tell its shard among the bridge's sources, and a readable name for messages.
     *
     * @param name e.g. {@code /gray org.demo.Greeter:1.0.0 group=blue}
     * @param matches true for the {@link ServiceKey} of this identity
     */
    public record Identity(String name, Predicate<ServiceKey> matches) {
        @Override
        public String toString() {
            return name;
        }
    }

    // ------------------------------------------------------------------ the bridge side

    /**
     * A watcher built by its type's provider from one {@code registries[]} entry, sending into a real aggregator.
     *
     * <p>Removals apply at once ({@code reregistrationWindow: 0s}, no warm-up, no deletion guard) unless the entry
     * sets the removal rules itself: a suite compares what the registry's own consumer calls with what the bridge
     * serves after each round, and its seeded rounds remove several instances at once on purpose, which the guard
     * of a registry this small would rightly hold. When removals apply is what the restart suites and {@code
     * RemovalRulesTest} test.
     */
    public static final class Bridge implements AutoCloseable {

        private final TestCatalog catalog = new TestCatalog();
        private final RegistryConfig config;
        private final RegistryStatus status;
        private final RegistryWatcher watcher;

        /**
         * @param entry one {@code registries[]} entry in YAML, without the leading dash, e.g. {@code "type:
         *     zookeeper\nname: zk\naddresses: [\"127.0.0.1:2181\"]"}
         */
        public Bridge(String entry) {
            this(entry, HostResolver.Lookup.SYSTEM);
        }

        /**
         * @param lookup how the watcher resolves the host names instances are registered under (a table in suites
         *     that register names; clients would resolve them the same way)
         */
        public Bridge(String entry, HostResolver.Lookup lookup) {
            Map<String, RegistryWatcherProvider> providers = RegistriesConfig.loadProviders();
            String full = entry.strip();
            if (!full.contains("reregistrationWindow:")) full += "\nreregistrationWindow: 0s";
            if (!full.contains("warmUp:")) full += "\nwarmUp: 0s";
            if (!full.contains("deletionGuard:")) full += "\ndeletionGuard: {enabled: false}";
            String indented = "  - " + full.replace("\n", "\n    ") + "\n";
            try {
                ConfigNode root = ConfigNode.parse("bridge.yaml", "registries:\n" + indented);
                List<RegistryConfig> list = RegistriesConfig.parse(root, providers);
                root.finish();
                config = list.get(0);
            } catch (ConfigException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            WatcherContext plain = catalog.context(config);
            WatcherContext context = new WatcherContext(
                    config, plain.events(), plain.status(), new WatcherRuntime(Ticker.system(), lookup));
            status = context.status();
            watcher = providers.get(config.type()).create(config, context);
            watcher.start();
        }

        public RegistryConfig config() {
            return config;
        }

        public RegistryStatus status() {
            return status;
        }

        public MeshSnapshot snapshot() {
            return catalog.snapshot();
        }

        public void awaitSynced() {
            org.awaitility.Awaitility.await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);
        }

        @Override
        public void close() {
            watcher.close();
            catalog.close();
        }
    }

    /** The services of a snapshot that carry a shard of {@code identity} (usually one; more is itself a finding). */
    public static List<MeshService> servicesOf(MeshSnapshot snapshot, Identity identity) {
        List<MeshService> out = new ArrayList<>();
        for (MeshService s : snapshot.services().values()) {
            if (s.sources().stream().anyMatch(identity.matches())) out.add(s);
        }
        return out;
    }

    /**
     * What the bridge serves as routable for an identity: the endpoints that are enabled, healthy and have a weight,
     * of every service that carries the identity's shard, each port of an endpoint as one target.
     *
     * @param view turns one endpoint and one of its (port name, port) entries into a target, or null to leave the port
     *     out (a port the suite does not compare)
     */
    public static SortedSet<Target> routable(MeshSnapshot snapshot, Identity identity, EndpointView view) {
        return served(snapshot, identity, view, true);
    }

    /**
     * What the bridge serves for an identity: with {@code routableOnly} as {@link #routable}, else every endpoint it
     * sends, whatever its health, weight or enabled flag (what a client that lists instances would see).
     */
    public static SortedSet<Target> served(
            MeshSnapshot snapshot, Identity identity, EndpointView view, boolean routableOnly) {
        SortedSet<Target> out = new TreeSet<>();
        for (MeshService s : servicesOf(snapshot, identity)) {
            for (Endpoint e : s.endpoints()) {
                if (routableOnly && (!e.routable() || !e.health().healthy())) continue;
                for (Map.Entry<String, Integer> p : e.ports().entrySet()) {
                    Target t = view.target(s, e, p.getKey(), p.getValue());
                    if (t != null) out.add(t);
                }
            }
        }
        return out;
    }

    /** Turns a served endpoint port into the target a suite compares. */
    @FunctionalInterface
    public interface EndpointView {
        Target target(MeshService service, Endpoint endpoint, String portName, int port);
    }

    /** A short description of where the bridge put an identity (hosts and their sources), for failure messages. */
    public static String whereServed(MeshSnapshot snapshot, Identity identity) {
        List<MeshService> services = servicesOf(snapshot, identity);
        if (services.isEmpty()) return "no host";
        StringBuilder sb = new StringBuilder();
        for (MeshService s : services) {
            if (!sb.isEmpty()) sb.append("; ");
            sb.append("host ").append(s.host()).append(" sources ").append(s.sources());
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ comparing

    /**
     * Waits until the bridge serves, for every identity, exactly what the consumer would call; returns the
     * disagreements left (empty when they agree). It gives up after {@link #AGREE}, or earlier once the bridge's
     * catalog has not changed for {@code settle} (plus {@link #LOADED_MACHINE}) while it disagrees (the watcher has
     * taken in what it will take in).
     *
     * @param truth the consumer's targets per identity (every identity of the round, empty sets included)
     * @param bridge the bridge's snapshots
     * @param settle how long an unchanged, disagreeing catalog counts as final: longer than the watcher's own delay
     *     between a registry change and its event (a poll interval, a push delay)
     * @param view how served endpoints become targets
     */
    public static List<String> disagreements(
            Map<Identity, ? extends Collection<Target>> truth,
            Supplier<MeshSnapshot> bridge,
            Duration settle,
            EndpointView view) {
        return disagreements(truth, bridge, settle, view, true);
    }

    /**
     * As {@link #disagreements(Map, Supplier, Duration, EndpointView)}; with {@code routableOnly} false the consumer's
     * targets are compared with every endpoint the bridge sends (a consumer that lists instances whatever their health).
     */
    public static List<String> disagreements(
            Map<Identity, ? extends Collection<Target>> truth,
            Supplier<MeshSnapshot> bridge,
            Duration settle,
            EndpointView view,
            boolean routableOnly) {
        List<List<String>> last = new ArrayList<>(List.of(List.of("never compared")));
        String[] version = {""};
        long[] changedAt = {System.nanoTime()};
        try {
            org.awaitility.Awaitility.await()
                    .atMost(AGREE)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(25))
                    .until(() -> {
                        MeshSnapshot snapshot = bridge.get();
                        if (!snapshot.version().equals(version[0])) {
                            version[0] = snapshot.version();
                            changedAt[0] = System.nanoTime();
                        }
                        last.set(0, compare(truth, snapshot, view, routableOnly));
                        return last.get(0).isEmpty()
                                || System.nanoTime() - changedAt[0]
                                        > settle.plus(LOADED_MACHINE).toNanos();
                    });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // the disagreements of the last comparison are the answer
        }
        return last.get(0);
    }

    /** The disagreements between the consumer's targets and one snapshot, one line per identity. */
    public static List<String> compare(
            Map<Identity, ? extends Collection<Target>> truth, MeshSnapshot snapshot, EndpointView view) {
        return compare(truth, snapshot, view, true);
    }

    /** As {@link #compare(Map, MeshSnapshot, EndpointView)}, against every endpoint sent unless {@code routableOnly}. */
    public static List<String> compare(
            Map<Identity, ? extends Collection<Target>> truth,
            MeshSnapshot snapshot,
            EndpointView view,
            boolean routableOnly) {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<Identity, ? extends Collection<Target>> t : truth.entrySet()) {
            SortedSet<Target> consumer = new TreeSet<>(t.getValue());
            SortedSet<Target> served = served(snapshot, t.getKey(), view, routableOnly);
            if (consumer.equals(served)) continue;
            SortedSet<Target> onlyConsumer = new TreeSet<>(consumer);
            onlyConsumer.removeAll(served);
            SortedSet<Target> onlyBridge = new TreeSet<>(served);
            onlyBridge.removeAll(consumer);
            problems.add(t.getKey() + ": consumer calls " + consumer + ", bridge serves " + served
                    + (onlyConsumer.isEmpty() ? "" : "; missing from the bridge " + onlyConsumer)
                    + (onlyBridge.isEmpty() ? "" : "; only in the bridge " + onlyBridge)
                    + " (" + whereServed(snapshot, t.getKey()) + ")");
        }
        return problems;
    }

    // ------------------------------------------------------------------ seeded rounds

    /**
     * Runs seeded rounds of a suite and fails at the end with every round that disagreed (the seed and the rerun
     * flag in the message): one defect does not hide the next.
     */
    public static final class Rounds {

        private final String suite;
        private final long seed;
        private final int rounds;
        private final Duration budget;
        private final Map<String, List<String>> failures = new LinkedHashMap<>();
        private int ran;

        /**
         * @param suite the suite's name in messages
         * @param defaultRounds rounds unless {@code -Dmeshbridge.diff.rounds} says otherwise
         * @param budget the suite stops starting rounds after this long (the rounds done are reported)
         */
        public Rounds(String suite, int defaultRounds, Duration budget) {
            this.suite = suite;
            Long fixed = Long.getLong("meshbridge.diff.seed");
            this.seed = fixed != null ? fixed : new Random().nextLong();
            this.rounds = Integer.getInteger("meshbridge.diff.rounds", defaultRounds);
            this.budget = budget;
        }

        public long seed() {
            return seed;
        }

        /** A random source for the whole suite (rounds draw from it in order, so a seed replays every round). */
        public Random random() {
            return new Random(seed);
        }

        /**
         * Runs {@code body} for round 0, 1, ... until the rounds or the budget are used up.
         *
         * @param body returns the round's disagreements (empty when the consumer and the bridge agree)
         */
        public void run(RoundBody body) throws Exception {
            long end = System.nanoTime() + budget.toNanos();
            for (int r = 0; r < rounds && System.nanoTime() < end; r++) {
                long started = System.nanoTime();
                List<String> problems = body.round(r);
                ran++;
                org.slf4j.LoggerFactory.getLogger(Differential.class)
                        .debug(
                                "suite={} round={} ms={} disagreements={}",
                                suite,
                                r,
                                (System.nanoTime() - started) / 1_000_000,
                                problems.size());
                if (!problems.isEmpty()) failures.put("round " + r, problems);
            }
            org.slf4j.LoggerFactory.getLogger(Differential.class)
                    .info("suite={} seed={} rounds={} disagreeingRounds={}", suite, seed, ran, failures.size());
            if (!failures.isEmpty()) throw new AssertionError(report());
        }

        /** True when at least one round ran (a suite that ran none proves nothing). */
        public int ran() {
            return ran;
        }

        private String report() {
            StringBuilder sb = new StringBuilder()
                    .append(suite)
                    .append(": the bridge disagrees with the framework's own consumer in ")
                    .append(failures.size())
                    .append(" of ")
                    .append(ran)
                    .append(" rounds; seed=")
                    .append(seed)
                    .append(" (rerun with -Dmeshbridge.diff.seed=")
                    .append(seed)
                    .append(")");
            // each distinct disagreement once, with the round it first showed in (a defect persists across rounds)
            Map<String, String> firstSeen = new LinkedHashMap<>();
            failures.forEach((round, problems) -> {
                for (String p : problems) firstSeen.putIfAbsent(p, round);
            });
            int shown = 0;
            for (Map.Entry<String, String> f : firstSeen.entrySet()) {
                if (shown++ == 80) {
                    sb.append("\n  ... ").append(firstSeen.size() - 80).append(" more");
                    break;
                }
                sb.append("\n  from ").append(f.getValue()).append(": ").append(f.getKey());
            }
            return sb.toString();
        }
    }

    /** One round: make changes, let the consumer catch up, compare. */
    @FunctionalInterface
    public interface RoundBody {
        List<String> round(int round) throws Exception;
    }

    /** Waits (bounded) until the consumer has seen the round's changes; false when it did not in time. */
    public static boolean awaitConsumer(BooleanSupplier caughtUp, Duration timeout) {
        try {
            org.awaitility.Awaitility.await()
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(20))
                    .until(caughtUp::getAsBoolean);
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
        }
    }

    /** Picks one element at random. */
    public static <T> T pick(Random random, List<T> from) {
        return from.get(random.nextInt(from.size()));
    }

    /** Maps a collection of targets by a key, for suites that compare per identity. */
    public static <K> Map<K, SortedSet<Target>> group(Collection<Target> targets, Function<Target, K> key) {
        Map<K, SortedSet<Target>> out = new LinkedHashMap<>();
        for (Target t : targets)
            out.computeIfAbsent(key.apply(t), k -> new TreeSet<>()).add(t);
        return out;
    }
}
