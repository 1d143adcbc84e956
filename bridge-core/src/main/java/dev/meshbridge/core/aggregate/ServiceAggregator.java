package dev.meshbridge.core.aggregate;

import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.spi.EventSink;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.util.CompactSortedSet;
import dev.meshbridge.core.watch.Duplicates;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.pcollections.PSortedMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where registry state merges into the catalog.
 *
 * <p>How it works:
 *
 * <ol>
 *   <li>one serial executor owns all state; {@link #accept} only enqueues, so watchers' callback threads never wait
 *       and the model needs no locks;
 *   <li>state is kept per shard (one service from one registry, {@link ServiceKey}); an upsert replaces its shard's
 *       endpoint list, and an upsert equal to the current shard changes nothing (a resync after a reconnect therefore
 *       publishes only real differences); an upsert with no endpoints keeps the shard's host (the registry still knows
 *       the service, so its cluster and ServiceEntry stay, with no endpoints), a {@link ServiceRemoval} removes the
 *       shard; either way the registry's empty-service policy may keep the last endpoints for a grace period first;
 *   <li>conflict policy: several shards that map to the same host are merged into one service: the union of their
 *       endpoints (an endpoint with the same address and ports in two shards is kept once: the one that may get
 *       traffic, else the lower shard's, as {@link Duplicates} decides within a registry),
 *       ports merged by name (on a disagreement the lower shard's port wins and the conflict is logged);
 *   <li>changes are coalesced on the trailing edge, except the first after a quiet spell: a change that arrives when
 *       none came for at least the quiet period is published at once (behind the events already queued with it, which
 *       join it), on the aggregator thread that applied it, without waiting for a timer; the changes that follow it
 *       within the quiet period are published when no change arrived for the quiet period, or when the oldest
 *       unpublished one reaches the maximum delay, whichever comes first. A burst therefore costs at most one
 *       snapshot more than trailing coalescing alone, and a lone change is served without the quiet period's delay
 *       and without a second wake-up of the aggregator thread;
 *   <li>publishing recomputes only the hosts that changed, on a persistent sorted map shared with the previous
 *       snapshot, so the cost of a change grows with the services it touches, not with the catalog.
 * </ol>
 */
public final class ServiceAggregator implements EventSink, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ServiceAggregator.class);

    /**
     * Coalescing options.
     *
     * @param quietPeriod publish once no event arrived for this long (0 publishes after every event); a change that
     *     comes after at least this long without one is published at once
     * @param maxDelay never hold a change back longer than this
     */
    public record Options(Duration quietPeriod, Duration maxDelay) {
        public static final Options DEFAULTS = new Options(Duration.ofMillis(10), Duration.ofMillis(50));

        public Options {
            Objects.requireNonNull(quietPeriod, "quietPeriod");
            Objects.requireNonNull(maxDelay, "maxDelay");
            if (quietPeriod.isNegative() || maxDelay.isNegative())
                throw new IllegalArgumentException("negative duration");
            if (maxDelay.compareTo(quietPeriod) < 0) maxDelay = quietPeriod;
        }
    }

    /** Services and endpoints currently in the catalog from one registry. */
    public record RegistryCounts(int services, long endpoints) {}

    /**
     * One registry service (shard) of a host served by several, as published.
     *
     * @param source the shard
     * @param endpoints how many endpoints it gives (before the merge keeps an address given twice once)
     */
    public record SourceShard(ServiceKey source, int endpoints) {}

    private record Shard(
            ServiceKey key,
            String host,
            List<ServicePort> ports,
            List<Endpoint> endpoints,
            java.util.SortedMap<String, String> labels,
            ScheduledFuture<?> expiry,
            boolean removeOnExpiry,
            long arrival) {

        /** @param sortedEndpoints the upsert's endpoints, sorted */
        boolean sameContent(ServiceUpsert u, List<Endpoint> sortedEndpoints) {
            return host.equals(u.host())
                    && ports.equals(u.ports())
                    && endpoints.equals(sortedEndpoints)
                    && labels.equals(u.labels());
        }

        /** The same shard (key, host, ports, labels, arrival) with these endpoints and expiry. */
        Shard with(List<Endpoint> endpoints, ScheduledFuture<?> expiry, boolean removeOnExpiry) {
            return new Shard(key, host, ports, endpoints, labels, expiry, removeOnExpiry, arrival);
        }
    }

    private final Options options;
    private final ScheduledThreadPoolExecutor executor;
    private final LongSupplier nanoTime;
    private final AtomicReference<MeshSnapshot> current = new AtomicReference<>(MeshSnapshot.empty());
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong eventsReceived = new AtomicLong();
    private final AtomicLong snapshotsPublished = new AtomicLong();
    private final Map<String, RegistryCounts> countsView = new ConcurrentHashMap<>();
    private final Map<String, List<SourceShard>> sharedView = new ConcurrentHashMap<>();

    // --- state owned by the executor thread ---
    private final Map<ServiceKey, Shard> shards = new HashMap<>();
    /** The shards of each host (one, nearly always; a new set on each change, shared with the merged service). */
    private final Map<String, CompactSortedSet<ServiceKey>> keysByHost = new HashMap<>();

    private final Map<String, EmptyServicePolicy> policies = new HashMap<>();
    private final Map<String, long[]> counts = new HashMap<>();
    /**
     * Hosts changed since the last publish. Replaced rather than cleared after a publish of more than {@link
     * #REUSED_DIRTY_HOSTS} hosts: a hash set keeps the table it grew to, and clearing or iterating it costs its capacity,
     * so after a first sync every single change would pay for the whole catalog.
     */
    private Set<String> dirtyHosts = new HashSet<>();

    private static final int REUSED_DIRTY_HOSTS = 64;
    private final List<SnapshotListener> listeners = new ArrayList<>();
    /** Conflict lines already logged (bounded: past the bound, conflicts are still counted and shown, not logged). */
    private final Set<String> reportedConflicts = new HashSet<>();

    private static final int MAX_REPORTED_CONFLICTS = 10_000;

    /**
     * Shards made so far. Each shard's {@code arrival} is its number, kept while the shard is held: of distinct services
     * that map to one host, the first keeps it (held in the shard, not in a map by key: 50 bytes less per service).
     */
    private long arrivalCount;

    private final Map<String, List<ServiceKey>> refusedView = new ConcurrentHashMap<>();
    private RouteTable routes = RouteTable.empty();
    private boolean routesDirty;
    private long firstDirtyNanos;
    private long lastEventNanos;
    /** Whether any change was made yet (before the first, the aggregator has been quiet for ever). */
    private boolean changedBefore;
    /** A leading-edge publish is queued behind the tasks queued with the change that started it. */
    private boolean leadingQueued;

    private final Runnable leadingPublish = this::publishLeading;
    private ScheduledFuture<?> flushTask;

    public ServiceAggregator(Options options) {
        this(options, System::nanoTime);
    }

    ServiceAggregator(Options options, LongSupplier nanoTime) {
        this.options = Objects.requireNonNull(options);
        this.nanoTime = nanoTime;
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "meshbridge-aggregator");
            t.setDaemon(true);
            return t;
        });
        this.executor.setRemoveOnCancelPolicy(true);
        this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    public Options options() {
        return options;
    }

    /** The latest published snapshot (never null; empty before the first). */
    public MeshSnapshot current() {
        return current.get();
    }

    /**
     * Adds a listener; it first receives the current snapshot, then every later one, on the aggregator thread.
     *
     * @return a future that completes once the listener has received the current snapshot
     */
    public CompletableFuture<Void> subscribe(SnapshotListener listener) {
        return CompletableFuture.runAsync(
                () -> {
                    listeners.add(listener);
                    notifyOne(listener, current.get());
                },
                executor);
    }

    public CompletableFuture<Void> unsubscribe(SnapshotListener listener) {
        return CompletableFuture.runAsync(() -> listeners.remove(listener), executor);
    }

    /** Sets a registry's empty-service policy (before its watcher starts; DELETE when never set). */
    public void configureRegistry(String registry, EmptyServicePolicy policy) {
        run(() -> policies.put(registry, policy));
    }

    /** Removes everything a registry contributed, at once (its entry left the configuration). */
    public void removeRegistry(String registry) {
        run(() -> {
            policies.remove(registry);
            List<ServiceKey> keys = keysOf(registry);
            if (!keys.isEmpty()) {
                for (ServiceKey k : keys) removeShard(k);
                log.info("registry={} removed from the catalog ({} services)", registry, keys.size());
                changed();
            }
            counts.remove(registry);
            countsView.remove(registry);
        });
    }

    /**
     * Replaces the Ingress routes (all sources merged). Coalesced like registry events; a table with the version of the
     * current one changes nothing. Every later snapshot carries the latest table.
     */
    public void setRoutes(RouteTable table) {
        Objects.requireNonNull(table, "table");
        run(() -> {
            if (table.version().equals(routes.version())) return;
            routes = table;
            routesDirty = true;
            changed();
        });
    }

    @Override
    public void accept(RegistryEvent event) {
        eventsReceived.incrementAndGet();
        run(() -> apply(event));
    }

    /** Publishes pending changes now (tests, benchmarks, shutdown); completes with the resulting current snapshot. */
    public CompletableFuture<MeshSnapshot> flushNow() {
        return CompletableFuture.supplyAsync(
                () -> {
                    publish();
                    return current.get();
                },
                executor);
    }

    /** Services and endpoints per registry, as last applied (not waiting for the next publish). */
    public Map<String, RegistryCounts> registryCounts() {
        return Map.copyOf(countsView);
    }

    /**
     * The hosts of the latest snapshot whose endpoints come from more than one registry service (for example the same
     * Dubbo interface in ZooKeeper and in Nacos during a migration, or two namespaces a template names alike), with
     * every shard. Thread-safe.
     */
    public Map<String, List<SourceShard>> sharedHosts() {
        return Map.copyOf(sharedView);
    }

    /**
     * The hosts that distinct services map to (different names, groups or versions, e.g. {@code org.bad.Case} and
     * {@code org.bad.CASE} under a lower-casing host template), with the services refused: the service that came
     * first keeps the host, the others are not served until the conflict is gone. Thread-safe.
     */
    public Map<String, List<ServiceKey>> hostConflicts() {
        return Map.copyOf(refusedView);
    }

    /** How many hosts have services refused for a host conflict. */
    public int hostConflictCount() {
        return refusedView.size();
    }

    /** How many hosts are served by more than one registry service. */
    public int sharedHostCount() {
        return sharedView.size();
    }

    public long eventsReceived() {
        return eventsReceived.get();
    }

    public long snapshotsPublished() {
        return snapshotsPublished.get();
    }

    private void run(Runnable task) {
        if (closed.get()) return;
        try {
            executor.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.error("aggregator task failed; state kept", e);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    // ------------------------------------------------------------------ executor thread only

    private void apply(RegistryEvent event) {
        switch (event) {
            case ServiceUpsert u -> upsert(u);
            case ServiceRemoval r -> leave(r.key(), true);
            case RegistrySynced s -> {
                for (ServiceKey k : keysOf(s.registry())) {
                    if (!s.services().contains(k)) leave(k, true);
                }
            }
        }
    }

    private void upsert(ServiceUpsert u) {
        Shard old = shards.get(u.key());
        if (u.endpoints().isEmpty() && old != null && !old.endpoints().isEmpty()) {
            leave(u.key(), false);
            return;
        }
        List<Endpoint> sortedEndpoints = sorted(u.endpoints());
        if (old != null && old.sameContent(u, sortedEndpoints)) {
            if (old.expiry() != null) {
                old.expiry().cancel(false);
                shards.put(u.key(), old.with(old.endpoints(), null, false));
            }
            return;
        }
        if (old != null) {
            if (old.expiry() != null) old.expiry().cancel(false);
            if (!old.host().equals(u.host())) detachFromHost(old);
        }
        long arrival = old != null ? old.arrival() : ++arrivalCount;
        Shard shard = new Shard(u.key(), u.host(), u.ports(), sortedEndpoints, u.labels(), null, false, arrival);
        shards.put(u.key(), shard);
        keysByHost.merge(u.host(), CompactSortedSet.copyOf(List.of(u.key())), (had, one) -> had.with(u.key()));
        count(
                u.key().registry(),
                old == null ? 1 : 0,
                u.endpoints().size() - (old == null ? 0 : old.endpoints().size()));
        dirtyHosts.add(u.host());
        changed();
    }

    /**
     * The shard has no instances now ({@code gone} false: the registry still knows the service, which keeps its host
     * with no endpoints) or the registry no longer has it ({@code gone}: the shard goes). The registry's empty-service
     * policy decides when: at once, or after keeping the last endpoints for its grace.
     */
    private void leave(ServiceKey key, boolean gone) {
        Shard old = shards.get(key);
        if (old == null) return;
        EmptyServicePolicy policy = policies.getOrDefault(key.registry(), EmptyServicePolicy.DELETE);
        if (policy.mode() == EmptyServicePolicy.Mode.KEEP
                && !policy.grace().isZero()
                && !old.endpoints().isEmpty()) {
            if (old.expiry() != null) {
                if (gone && !old.removeOnExpiry()) shards.put(key, old.with(old.endpoints(), old.expiry(), true));
                return; // already in grace
            }
            ScheduledFuture<?> expiry =
                    executor.schedule(() -> expire(key), policy.grace().toNanos(), TimeUnit.NANOSECONDS);
            shards.put(key, old.with(old.endpoints(), expiry, gone));
            log.info(
                    "service={} has no instances; keeping the last {} endpoints for {}",
                    key,
                    old.endpoints().size(),
                    policy.grace());
            return;
        }
        if (gone) {
            removeShard(key);
        } else {
            emptyShard(old);
        }
        changed();
    }

    /** The shard keeps its host, ports and labels, with no endpoints. */
    private void emptyShard(Shard old) {
        if (old.expiry() != null) old.expiry().cancel(false);
        shards.put(old.key(), old.with(List.of(), null, false));
        count(old.key().registry(), 0, -old.endpoints().size());
        dirtyHosts.add(old.host());
    }

    private void expire(ServiceKey key) {
        Shard s = shards.get(key);
        if (s == null || s.expiry() == null) return;
        if (s.removeOnExpiry()) {
            log.info("service={} grace period over; removing it", key);
            removeShard(key);
        } else {
            log.info("service={} grace period over; it has no endpoints", key);
            emptyShard(s);
        }
        changed();
    }

    /**
     * The keys of a registry's shards. A scan, not an index kept per key (a map node per service, 3% of what a million
     * endpoints retain): it runs on a full sync, whose event already carries every key of the registry, and when a
     * registry leaves the configuration.
     */
    private List<ServiceKey> keysOf(String registry) {
        List<ServiceKey> keys = new ArrayList<>();
        for (ServiceKey k : shards.keySet()) {
            if (k.registry().equals(registry)) keys.add(k);
        }
        return keys;
    }

    private void removeShard(ServiceKey key) {
        Shard old = shards.remove(key);
        if (old == null) return;
        if (old.expiry() != null) old.expiry().cancel(false);
        detachFromHost(old);
        count(key.registry(), -1, -old.endpoints().size());
    }

    private void detachFromHost(Shard shard) {
        CompactSortedSet<ServiceKey> keys = keysByHost.get(shard.host());
        if (keys != null) {
            keys = keys.without(shard.key());
            if (keys.isEmpty()) keysByHost.remove(shard.host());
            else keysByHost.put(shard.host(), keys);
        }
        dirtyHosts.add(shard.host());
    }

    private void count(String registry, int services, long endpoints) {
        long[] c = counts.computeIfAbsent(registry, r -> new long[2]);
        c[0] += services;
        c[1] += endpoints;
        countsView.put(registry, new RegistryCounts((int) c[0], c[1]));
    }

    /**
     * Schedules a publish: at once when no change came for the quiet period (the leading edge), else according to the
     * quiet period and maximum delay (the trailing edge).
     */
    private void changed() {
        long now = nanoTime.getAsLong();
        boolean pending = flushTask != null || leadingQueued;
        boolean quiet =
                !changedBefore || now - lastEventNanos >= options.quietPeriod().toNanos();
        changedBefore = true;
        if (!pending) firstDirtyNanos = now;
        lastEventNanos = now;
        if (options.quietPeriod().isZero()) {
            publish();
            return;
        }
        if (pending) return;
        if (quiet) {
            // behind the events already queued (a watcher's batch), which join this snapshot; the thread is running,
            // so this costs no wake-up, where the quiet-period timer costs one
            leadingQueued = true;
            run(leadingPublish);
            return;
        }
        flushTask = executor.schedule(this::maybePublish, options.quietPeriod().toNanos(), TimeUnit.NANOSECONDS);
    }

    private void publishLeading() {
        if (leadingQueued) publish();
    }

    private void maybePublish() {
        flushTask = null;
        long now = nanoTime.getAsLong();
        long deadline = Math.min(
                lastEventNanos + options.quietPeriod().toNanos(),
                firstDirtyNanos + options.maxDelay().toNanos());
        if (deadline - now > 100_000) {
            flushTask = executor.schedule(this::maybePublish, deadline - now, TimeUnit.NANOSECONDS);
            return;
        }
        publish();
    }

    private void publish() {
        leadingQueued = false;
        if (flushTask != null) {
            flushTask.cancel(false);
            flushTask = null;
        }
        if (dirtyHosts.isEmpty() && !routesDirty) return;
        MeshSnapshot prev = current.get();
        PSortedMap<String, MeshService> map = prev.servicesMap();
        long versionSum = prev.versionSum();
        long endpoints = prev.endpointCount();
        Set<String> changedHosts = new TreeSet<>();
        Set<String> removedHosts = new TreeSet<>();
        for (String host : dirtyHosts) {
            MeshService old = map.get(host);
            SortedSet<ServiceKey> keys = keysByHost.get(host);
            if (keys == null || keys.size() < 2) sharedView.remove(host);
            else sharedView.put(host, shardsOf(keys));
            if (keys == null || keys.isEmpty()) {
                refusedView.remove(host);
                if (old != null) {
                    map = map.minus(host);
                    versionSum -= MeshSnapshot.contribution(old);
                    endpoints -= old.endpoints().size();
                    removedHosts.add(host);
                }
                continue;
            }
            MeshService merged = merge(host, served(host, keys));
            if (old != null && old.version().equals(merged.version()) && old.equals(merged)) continue;
            map = map.plus(host, merged);
            versionSum += MeshSnapshot.contribution(merged);
            endpoints += merged.endpoints().size();
            if (old != null) {
                versionSum -= MeshSnapshot.contribution(old);
                endpoints -= old.endpoints().size();
            }
            changedHosts.add(host);
        }
        if (dirtyHosts.size() > REUSED_DIRTY_HOSTS) dirtyHosts = new HashSet<>();
        else dirtyHosts.clear();
        boolean routesChanged =
                routesDirty && !routes.version().equals(prev.routes().version());
        routesDirty = false;
        if (changedHosts.isEmpty() && removedHosts.isEmpty() && !routesChanged) return;
        MeshSnapshot next = new MeshSnapshot(
                prev.sequence() + 1,
                versionSum,
                map,
                changedHosts,
                removedHosts,
                endpoints,
                routes,
                routesChanged,
                firstDirtyNanos,
                nothingDue());
        current.set(next);
        snapshotsPublished.incrementAndGet();
        if (log.isDebugEnabled()) log.debug("published {} changed={} removed={}", next, changedHosts, removedHosts);
        for (SnapshotListener l : listeners) notifyOne(l, next);
    }

    /**
     * Whether no task of this thread is due (no event waiting, no timer passed): the snapshot being published is then
     * all there is to do, and a listener may apply it here.
     */
    private boolean nothingDue() {
        Runnable head = executor.getQueue().peek();
        return head == null || head instanceof java.util.concurrent.Delayed d && d.getDelay(TimeUnit.NANOSECONDS) > 0;
    }

    private List<SourceShard> shardsOf(SortedSet<ServiceKey> keys) {
        List<SourceShard> out = new ArrayList<>(keys.size());
        for (ServiceKey k : keys)
            out.add(new SourceShard(k, shards.get(k).endpoints().size()));
        return List.copyOf(out);
    }

    private static void notifyOne(SnapshotListener l, MeshSnapshot s) {
        try {
            l.onSnapshot(s);
        } catch (RuntimeException e) {
            log.error("snapshot listener {} failed on {}", l, s, e);
        }
    }

    private MeshService merge(String host, SortedSet<ServiceKey> keys) {
        if (keys.size() == 1) {
            Shard s = shards.get(keys.first());
            return new MeshService(
                    host,
                    sortedPorts(s.ports()),
                    s.endpoints(),
                    s.labels(),
                    keys,
                    ServiceVersions.version(host, sortedPorts(s.ports()), s.endpoints(), s.labels(), keys));
        }
        Map<String, ServicePort> ports = new LinkedHashMap<>();
        Map<Integer, String> numbers = new HashMap<>();
        Map<String, Endpoint> endpoints = new LinkedHashMap<>();
        TreeMap<String, String> labels = new TreeMap<>();
        for (ServiceKey k : keys) {
            Shard s = shards.get(k);
            for (ServicePort p : s.ports()) {
                ServicePort existing = ports.get(p.name());
                String sameNumber = numbers.get(p.number());
                if (existing == null && (sameNumber == null)) {
                    ports.put(p.name(), p);
                    numbers.put(p.number(), p.name());
                } else if ((existing != null && !existing.equals(p)) || (existing == null && sameNumber != null)) {
                    conflict(
                            host,
                            "port " + p + " from " + k + " conflicts with "
                                    + (existing != null ? existing : ports.get(sameNumber)) + "; keeping the latter");
                }
            }
            for (Endpoint e : s.endpoints()) {
                String id = Duplicates.identity(e);
                Endpoint kept = endpoints.putIfAbsent(id, e);
                if (kept != null) {
                    // the duplicate rule every watcher uses: one that may get traffic beats one that may not
                    if (!Duplicates.serving(kept) && Duplicates.serving(e)) endpoints.put(id, e);
                    conflict(host, "endpoint " + id + " is in several registries; keeping it once");
                }
            }
            s.labels().forEach(labels::putIfAbsent);
        }
        if (reportedConflicts.size() < MAX_REPORTED_CONFLICTS && reportedConflicts.add(host + "\nshared")) {
            log.info(
                    "host={} is served by {} registry services {}: their endpoints are merged",
                    host,
                    keys.size(),
                    keys);
        }
        List<ServicePort> portList = sortedPorts(List.copyOf(ports.values()));
        List<Endpoint> endpointList = sorted(List.copyOf(endpoints.values()));
        return new MeshService(
                host,
                portList,
                endpointList,
                labels,
                keys,
                ServiceVersions.version(host, portList, endpointList, labels, keys));
    }

    private void conflict(String host, String message) {
        if (reportedConflicts.size() >= MAX_REPORTED_CONFLICTS) return;
        if (reportedConflicts.add(host + "\n" + message)) log.warn("host={} conflict: {}", host, message);
    }

    /**
     * Where a shard comes from: one registry and namespace. Two shards of one host from different registries or
     * namespaces are one service met twice (a migration, two environments) and merged; two from the same registry and
     * namespace are distinct services that a host template maps alike (for example {@code org.bad.Case} and {@code
     * org.bad.CASE} under a lower-casing template), and must not be merged.
     */
    private static String scope(ServiceKey k) {
        return k.registryType() + '\n' + k.registry() + '\n' + k.namespace();
    }

    /**
     * The shards a host serves: of the shards of one registry and namespace, the one that came first; the others are
     * refused, reported and shown on {@code /debug/catalog}.
     */
    private SortedSet<ServiceKey> served(String host, SortedSet<ServiceKey> keys) {
        if (keys.size() < 2) {
            refusedView.remove(host);
            return keys;
        }
        Map<String, ServiceKey> firstOfScope = new HashMap<>();
        for (ServiceKey k : keys) {
            firstOfScope.merge(scope(k), k, (a, b) -> arrivalOf(a) <= arrivalOf(b) ? a : b);
        }
        if (firstOfScope.size() == keys.size()) {
            refusedView.remove(host);
            return keys;
        }
        TreeSet<ServiceKey> served = new TreeSet<>(firstOfScope.values());
        List<ServiceKey> refused = new ArrayList<>();
        for (ServiceKey k : keys) {
            if (served.contains(k)) continue;
            refused.add(k);
            conflict(
                    host,
                    "service " + k + " is a different service of the same registry as " + firstOfScope.get(scope(k))
                            + ", which has this host already; it is not served (change the host template or the"
                            + " service's name)");
        }
        refusedView.put(host, List.copyOf(refused));
        return served;
    }

    /** When the shard arrived (its number), {@code Long.MAX_VALUE} for one not held. */
    private long arrivalOf(ServiceKey key) {
        Shard s = shards.get(key);
        return s == null ? Long.MAX_VALUE : s.arrival();
    }

    private static List<ServicePort> sortedPorts(List<ServicePort> ports) {
        if (ports.size() < 2) return ports;
        List<ServicePort> copy = new ArrayList<>(ports);
        copy.sort(null);
        return List.copyOf(copy);
    }

    private static List<Endpoint> sorted(List<Endpoint> endpoints) {
        if (endpoints.size() < 2) return endpoints;
        for (int i = 1; i < endpoints.size(); i++) {
            if (endpoints.get(i - 1).compareTo(endpoints.get(i)) > 0) {
                List<Endpoint> copy = new ArrayList<>(endpoints);
                copy.sort(null);
                return List.copyOf(copy);
            }
        }
        return endpoints;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        executor.shutdown();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) executor.shutdownNow();
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
