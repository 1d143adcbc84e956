package dev.meshbridge.core.watch;

import dev.meshbridge.core.config.HostNamePolicy;
import dev.meshbridge.core.config.RemovalPolicy;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.IpAddresses;
import dev.meshbridge.core.spi.EventSink;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every change a watcher makes leaves it: the one component between a watcher's own view of its registry and
 * the aggregator, and the one place where the bridge decides when something that left a registry leaves the catalog.
 * Used on the watcher's owner thread only.
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>the watcher hands in the <em>full</em> current endpoint list of a service ({@link #upsert}; an empty list
 *       means the registry still knows the service but it has no instance), or that the registry no longer has it
 *       ({@link #remove}), as often as it likes; only what differs from what was last sent leaves (the last-sent
 *       diff), so a resync after a reconnect sends only real changes;
 *   <li>an IPv6 literal loses its brackets; an endpoint whose address is a host name is resolved here, per the
 *       registry's {@link HostNamePolicy}: sent with its address once the name resolves, left out and reported per
 *       instance while it does not (or always, with {@code skip}); when a name's address changes, every service using
 *       it is sent again;
 *   <li>two endpoints that resolve to the same address and ports are one, by the {@link Duplicates} rule;
 *   <li>additions and changes leave at once; an endpoint that left is still sent for the re-registration window
 *       ({@link RemovalPolicy#reregistrationWindow()}) and never leaves when it comes back within it; a service the
 *       registry no longer has leaves the same way, as a {@link ServiceRemoval}; a service left with no instance is
 *       sent with no endpoints (its host, cluster and ServiceEntry stay while the registry knows the service);
 *   <li>after {@link #warmUp} (a reconnect, a server restart) no removal leaves for the warm-up period; then the
 *       watcher's full read ({@link #onFullRead}) runs, and once it ends with {@link #synced()} the removals that are
 *       still real leave (subject to 6);
 *   <li>removals that would take away more than the guard's share of the registry's endpoints, or of one service's,
 *       within the guard's window are held (the deletion guard): the last state stays, {@link RegistryStatus#guard}
 *       shows what is held, and they leave when the registry has been stable for the guard's {@code
 *       releaseWhenStableFor} or on {@link #release()}; endpoints that come back leave the held set;
 *   <li>{@link #synced()} sends {@link RegistrySynced} with every service currently sent (held ones included);
 *   <li>nothing is sent once the watcher is closed.
 * </ol>
 */
public final class ShardPublisher {

    private static final Logger log = LoggerFactory.getLogger(ShardPublisher.class);
    private static final int MAX_RECENT = 100_000;

    private enum Phase {
        NORMAL,
        WARMING,
        RECONCILING
    }

    /** An endpoint that left the registry and is still sent, since when. */
    private record Departure(Endpoint endpoint, long since) {}

    /** Endpoints removed at one time, for the guard's window. */
    private record Removed(long at, ServiceKey key, int endpoints) {}

    private final String registry;
    private final EventSink sink;
    private final RegistryStatus status;
    private final HostNamePolicy policy;
    private final HostResolver resolver;
    private final BooleanSupplier open;
    private final SerialExecutor loop;
    private final long windowNanos;
    private final Duration warmUpPeriod;
    private final RemovalPolicy.Guard guardPolicy;

    private final Map<ServiceKey, ServiceUpsert> given = new HashMap<>();
    private final Map<ServiceKey, ServiceUpsert> targets = new HashMap<>();
    private final Map<ServiceKey, ServiceUpsert> sent = new HashMap<>();
    private final Map<ServiceKey, Map<String, Departure>> departed = new HashMap<>();
    private final Map<ServiceKey, Long> gone = new HashMap<>();
    private final Map<String, Set<ServiceKey>> byName = new HashMap<>();
    private final Map<ServiceKey, Set<String>> namesOf = new HashMap<>();
    private final ArrayDeque<Removed> recent = new ArrayDeque<>();
    private long sentEndpoints;
    /** Endpoints sent that the registry has now: {@link #sentEndpoints} less those held; what the limit counts. */
    private long liveEndpoints;
    /** Per service, how many of the endpoints sent are held (left the registry, still served); only non-zero. */
    private final Map<ServiceKey, Integer> heldSent = new HashMap<>();

    private Phase phase = Phase.NORMAL;
    private Ticker.Cancellable warmTimer = Ticker.Cancellable.NONE;
    private String warmReason;
    private Runnable fullRead;
    private Ticker.Cancellable settleTimer = Ticker.Cancellable.NONE;
    private long settleDue = Long.MAX_VALUE;
    private boolean settleQueued;
    private long lastChange;

    private boolean registryTripped;
    private final Set<ServiceKey> trippedServices = new HashSet<>();
    private Instant trippedAt;
    private long trippedNanos;
    private String releaseReason;
    private int lastSettleRemoved;
    private int lastSettleServices;
    private final dev.meshbridge.core.config.RegistryLimits limits;
    /** Services left out by {@code maxServices} or {@code maxInstances}, tried again when room is made. */
    private final Set<ServiceKey> refused = new java.util.LinkedHashSet<>();

    /**
     * @param resolver resolves host names (null with {@link HostNamePolicy.Mode#SKIP})
     * @param open false once the watcher is closing: nothing more is sent
     * @param loop the watcher's owner thread, where delayed decisions run
     * @param removals the registry's removal rules
     * @param warmUp the warm-up in force (the configured one, else the registry type's default)
     */
    public ShardPublisher(
            String registry,
            EventSink sink,
            RegistryStatus status,
            HostNamePolicy policy,
            HostResolver resolver,
            BooleanSupplier open,
            SerialExecutor loop,
            RemovalPolicy removals,
            Duration warmUp,
            dev.meshbridge.core.config.RegistryLimits limits) {
        this.limits = java.util.Objects.requireNonNull(limits, "limits");
        this.registry = registry;
        this.sink = sink;
        this.status = status;
        this.policy = policy;
        this.resolver = resolver;
        this.open = open;
        this.loop = loop;
        this.windowNanos = removals.reregistrationWindow().toNanos();
        this.warmUpPeriod = warmUp;
        this.guardPolicy = removals.guard();
        this.lastChange = loop.nanoTime();
    }

    // ------------------------------------------------------------------ what the watcher hands in

    /** The full current endpoint list of one service (empty: no instance now); sent when it differs. */
    public void upsert(ServiceUpsert u) {
        ServiceUpsert before = given.put(u.key(), u);
        if (!u.equals(before)) lastChange = loop.nanoTime();
        publish(u.key());
    }

    /**
     * The registry still has the service, with no instance now: it is sent with no endpoints under its last host and
     * ports (after the re-registration window), so its cluster and ServiceEntry stay.
     *
     * @return false when the service was never handed in (nothing to keep)
     */
    public boolean empty(ServiceKey key) {
        ServiceUpsert last = given.get(key);
        if (last == null) return false;
        upsert(new ServiceUpsert(key, last.host(), last.ports(), List.of(), last.labels()));
        return true;
    }

    /** Services left out by a limit get another try once room was made. */
    private void retryRefused() {
        if (refused.isEmpty()) return;
        for (ServiceKey k : List.copyOf(refused)) {
            if (sent.size() >= limits.maxServices()) return;
            refused.remove(k);
            if (given.containsKey(k)) publish(k);
        }
    }

    /** The registry no longer has the service (or it is no longer watched). */
    public void remove(ServiceKey key) {
        if (given.remove(key) != null) lastChange = loop.nanoTime();
        refused.remove(key);
        index(key, Set.of());
        publish(key);
    }

    /**
     * A full sync is complete: tells the aggregator every service this registry has now. When it is the full read
     * that ends a warm-up, the removals held meanwhile are decided first.
     */
    public void synced() {
        if (phase == Phase.RECONCILING) endWarmUp();
        emit(new RegistrySynced(registry, Set.copyOf(sent.keySet())));
    }

    /**
     * The watcher reconnected, or found that its server restarted: from now on and for the warm-up period no removal
     * leaves; then the full read runs. Does nothing with a zero warm-up, or before anything was sent.
     *
     * @param why what happened, for the log (e.g. {@code reconnected}, {@code server restarted})
     */
    public void warmUp(String why) {
        if (warmUpPeriod.isZero() || (sent.isEmpty() && phase == Phase.NORMAL)) return;
        boolean already = phase == Phase.WARMING && warmTimer != Ticker.Cancellable.NONE;
        phase = Phase.WARMING;
        warmReason = why;
        warmTimer.cancel();
        warmTimer = loop.schedule(warmUpPeriod, this::warmUpOver);
        status.warmingUntil(loop.ticker().clock().instant().plus(warmUpPeriod));
        if (!already) {
            log.info(
                    "registry={} {}: removals are held for {} s while clients re-register; additions and changes"
                            + " apply at once",
                    registry,
                    why,
                    warmUpPeriod.toSeconds());
        }
    }

    /**
     * The registry cannot be reached: no removal leaves until it is back and its warm-up is over (what a reconnecting
     * client delivers before the watcher notices the outage is over is not the whole truth yet). Does nothing with a
     * zero warm-up.
     */
    public void outage() {
        if (warmUpPeriod.isZero() || phase == Phase.WARMING || sent.isEmpty()) return;
        phase = Phase.WARMING;
        warmReason = "an outage";
        warmTimer.cancel();
        warmTimer = Ticker.Cancellable.NONE;
    }

    /** How the watcher reads its registry in full at the end of a warm-up; it must end with {@link #synced()}. */
    public void onFullRead(Runnable read) {
        this.fullRead = read;
    }

    /** An operator lets the deletion guard's held removals go (on the owner thread). */
    public void release() {
        if (!guarded()) return;
        releaseReason = "released by an operator";
        settle(true);
    }

    // ------------------------------------------------------------------ views

    /** The services sent and not removed since. */
    public Set<ServiceKey> services() {
        return Set.copyOf(sent.keySet());
    }

    /** What was last sent for a service, or null. */
    public ServiceUpsert lastSent(ServiceKey key) {
        return sent.get(key);
    }

    /** What the watcher last handed in for a service (before host names were resolved), or null. */
    public ServiceUpsert lastGiven(ServiceKey key) {
        return given.get(key);
    }

    /** True while removals are held after a reconnect. */
    public boolean warmingUp() {
        return phase != Phase.NORMAL;
    }

    /** Endpoints that left the registry and are still sent (re-registration window, warm-up or guard). */
    public int heldEndpoints() {
        int n = 0;
        for (Map<String, Departure> d : departed.values()) n += d.size();
        return n;
    }

    /** Called (on the owner thread) when a host name's address changed: its services are sent again. */
    public void hostNameChanged(String name) {
        Set<ServiceKey> keys = byName.get(name);
        if (keys == null) return;
        for (ServiceKey k : new TreeSet<>(keys)) {
            if (given.containsKey(k)) publish(k);
        }
    }

    /** Counts for debugging: services given, sent, held endpoints and host names in use. */
    public Map<String, Integer> counts() {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("given", given.size());
        m.put("sent", sent.size());
        m.put("heldEndpoints", heldEndpoints());
        m.put("goneServicesHeld", gone.size());
        m.put("hostNames", byName.size());
        return m;
    }

    // ------------------------------------------------------------------ deciding what leaves

    private void publish(ServiceKey key) {
        ServiceUpsert g = given.get(key);
        ServiceUpsert target = g == null ? null : bounded(resolved(g));
        if (target == null) targets.remove(key);
        else targets.put(key, target);
        ServiceUpsert prev = sent.get(key);
        if (prev == null) {
            departed.remove(key);
            gone.remove(key);
            // a service never sent (or already removed) is sent once it has an endpoint
            if (target != null && !target.endpoints().isEmpty()) send(key, target, 0);
            return;
        }
        long now = loop.nanoTime();
        Set<String> present = new HashSet<>();
        if (target != null) {
            for (Endpoint e : target.endpoints()) present.add(Duplicates.identity(e));
        }
        Map<String, Departure> dep = departed.get(key);
        if (dep != null) dep.keySet().removeIf(present::contains);
        for (Endpoint e : prev.endpoints()) {
            String id = Duplicates.identity(e);
            if (present.contains(id)) continue;
            if (dep == null) {
                dep = new LinkedHashMap<>();
                departed.put(key, dep);
            }
            dep.putIfAbsent(id, new Departure(e, now));
        }
        if (dep != null && dep.isEmpty()) departed.remove(key);
        if (target == null) gone.putIfAbsent(key, now);
        else gone.remove(key);
        compose(key);
        if (departed.containsKey(key) || gone.containsKey(key)) requestSettle(now + windowNanos);
        if (guarded()) showGuard();
    }

    /** Sends the service as it is served now: the registry's endpoints plus those still held. */
    private void compose(ServiceKey key) {
        ServiceUpsert target = targets.get(key);
        ServiceUpsert prev = sent.get(key);
        Map<String, Departure> dep = departed.getOrDefault(key, Map.of());
        if (target == null && dep.isEmpty() && !gone.containsKey(key)) {
            if (prev != null) {
                sent.remove(key);
                sentEndpoints -= prev.endpoints().size();
                liveEndpoints -= prev.endpoints().size() - heldSent.getOrDefault(key, 0);
                heldSent.remove(key);
                emit(new ServiceRemoval(key));
                retryRefused();
            }
            return;
        }
        ServiceUpsert shape = target != null ? target : prev;
        if (dep.isEmpty()) {
            send(key, target != null ? target : withEndpoints(prev, List.of(), prev.ports()), 0);
            return;
        }
        List<ServicePort> ports = new ArrayList<>(shape.ports());
        Set<String> names = new HashSet<>();
        for (ServicePort p : ports) names.add(p.name());
        List<Endpoint> endpoints = new ArrayList<>(target == null ? List.of() : target.endpoints());
        for (Departure d : dep.values()) {
            boolean usable = true;
            for (String portName : d.endpoint().ports().keySet()) {
                if (names.contains(portName)) continue;
                ServicePort old = prev == null ? null : port(prev, portName);
                if (old == null) {
                    usable = false;
                    break;
                }
                ports.add(old);
                names.add(portName);
            }
            if (usable) endpoints.add(d.endpoint());
        }
        int held = endpoints.size() - (target == null ? 0 : target.endpoints().size());
        endpoints.sort(Comparator.naturalOrder());
        send(key, withEndpoints(shape, endpoints, ports), held);
    }

    private static ServicePort port(ServiceUpsert u, String name) {
        for (ServicePort p : u.ports()) {
            if (p.name().equals(name)) return p;
        }
        return null;
    }

    private static ServiceUpsert withEndpoints(ServiceUpsert u, List<Endpoint> endpoints, List<ServicePort> ports) {
        return new ServiceUpsert(u.key(), u.host(), ports, endpoints, u.labels());
    }

    /**
     * Sends the service unless a limit refuses it.
     *
     * @param held how many of its endpoints left the registry and are still served (re-registration window, warm-up,
     *     deletion guard). They do not count toward {@code maxInstances}: an instance that moves to a new port or
     *     address is in the registry once, so a registry at its limit can still move it; what is held is bounded by
     *     what was accepted before, so the service never serves more than twice the limit for a window's length.
     */
    private void send(ServiceKey key, ServiceUpsert u, int held) {
        ServiceUpsert previous = sent.get(key);
        if (u.equals(previous)) return;
        if (previous == null && sent.size() >= limits.maxServices()) {
            refused.add(key);
            status.skipped(
                    key.toString(),
                    "the registry serves maxServices=" + limits.maxServices()
                            + " services already (registries[].limits.maxServices); left out until one goes");
            return;
        }
        int previousSize = previous == null ? 0 : previous.endpoints().size();
        long live = liveEndpoints
                - (previousSize - heldSent.getOrDefault(key, 0))
                + (u.endpoints().size() - held);
        if (live > limits.maxInstances()) {
            refused.add(key);
            status.skipped(
                    key.toString(),
                    "this change would bring the registry past maxInstances=" + limits.maxInstances()
                            + " instances (registries[].limits.maxInstances); left out, the service keeps what it"
                            + " had");
            return;
        }
        refused.remove(key);
        sent.put(key, u);
        sentEndpoints += u.endpoints().size() - previousSize;
        liveEndpoints = live;
        if (held > 0) heldSent.put(key, held);
        else heldSent.remove(key);
        emit(u);
    }

    /** Makes sure {@link #settle} runs at {@code due} (ticker time), after the current task at the earliest. */
    private void requestSettle(long due) {
        if (phase != Phase.NORMAL) return; // the end of the warm-up decides
        long now = loop.nanoTime();
        if (due - now <= 0) {
            if (!settleQueued) {
                settleQueued = true;
                loop.execute(() -> {
                    settleQueued = false;
                    settle(false);
                });
            }
            return;
        }
        if (due >= settleDue) return;
        settleTimer.cancel();
        settleDue = due;
        settleTimer = loop.schedule(Duration.ofNanos(due - now), () -> {
            settleDue = Long.MAX_VALUE;
            settleTimer = Ticker.Cancellable.NONE;
            settle(false);
        });
    }

    /**
     * Decides the removals that are due: past their re-registration window, not in a warm-up. The deletion guard
     * holds them when they are too many, unless {@code release} (an operator, or a stable registry) lets them go.
     */
    private void settle(boolean release) {
        if (!open.getAsBoolean() || phase != Phase.NORMAL) return;
        long now = loop.nanoTime();
        long nextDue = Long.MAX_VALUE;
        Map<ServiceKey, Integer> dueByKey = new LinkedHashMap<>();
        int due = 0;
        for (Map.Entry<ServiceKey, Map<String, Departure>> e : departed.entrySet()) {
            int n = 0;
            for (Departure d : e.getValue().values()) {
                long at = d.since() + windowNanos;
                if (at - now <= 0) n++;
                else nextDue = Math.min(nextDue, at);
            }
            if (n > 0) {
                dueByKey.put(e.getKey(), n);
                due += n;
            }
        }
        for (Map.Entry<ServiceKey, Long> e : gone.entrySet()) {
            long at = e.getValue() + windowNanos;
            if (at - now <= 0) dueByKey.putIfAbsent(e.getKey(), 0);
            else nextDue = Math.min(nextDue, at);
        }
        pruneRecent(now);
        boolean stable = guardPolicy.releaseWhenStableFor().isPositive()
                && now - stableSince() >= guardPolicy.releaseWhenStableFor().toNanos();
        if (guarded() && !release && stable) {
            release = true;
            releaseReason = "the registry has been stable for "
                    + guardPolicy.releaseWhenStableFor().toSeconds() + " s";
        }
        Set<ServiceKey> held = new HashSet<>();
        if (!release && guardPolicy.enabled() && !dueByKey.isEmpty()) {
            long recentAll = 0;
            Map<ServiceKey, Long> recentBy = new HashMap<>();
            for (Removed r : recent) {
                recentAll += r.endpoints();
                recentBy.merge(r.key(), (long) r.endpoints(), Long::sum);
            }
            long base = sentEndpoints + recentAll;
            if (registryTripped
                    || (due > 0
                            && base >= guardPolicy.minEndpoints()
                            && due + recentAll > guardPolicy.share() * base)) {
                registryTripped = true;
                held.addAll(dueByKey.keySet());
            } else {
                for (Map.Entry<ServiceKey, Integer> e : dueByKey.entrySet()) {
                    ServiceKey k = e.getKey();
                    ServiceUpsert s = sent.get(k);
                    long r = recentBy.getOrDefault(k, 0L);
                    long serviceBase = (s == null ? 0 : s.endpoints().size()) + r;
                    if (trippedServices.contains(k)
                            || (e.getValue() > 0
                                    && serviceBase >= guardPolicy.minServiceEndpoints()
                                    && e.getValue() + r > guardPolicy.serviceShare() * serviceBase)) {
                        held.add(k);
                        trippedServices.add(k);
                    }
                }
            }
        }
        int removedEndpoints = 0;
        int removedServices = 0;
        for (ServiceKey k : dueByKey.keySet()) {
            if (held.contains(k)) continue;
            Map<String, Departure> dep = departed.get(k);
            int n = 0;
            if (dep != null) {
                for (Iterator<Departure> it = dep.values().iterator(); it.hasNext(); ) {
                    if (it.next().since() + windowNanos - now <= 0) {
                        it.remove();
                        n++;
                    }
                }
                if (dep.isEmpty()) departed.remove(k);
            }
            Long goneSince = gone.get(k);
            if (goneSince != null && goneSince + windowNanos - now <= 0 && !departed.containsKey(k)) {
                gone.remove(k);
                removedServices++;
            }
            if (n > 0) {
                removedEndpoints += n;
                recent.add(new Removed(now, k, n));
            }
            compose(k);
        }
        while (recent.size() > MAX_RECENT) recent.poll();
        if (release) {
            recent.clear();
            registryTripped = false;
            trippedServices.clear();
        }
        trippedServices.retainAll(held);
        if (held.isEmpty()) registryTripped = false;
        showGuard();
        lastSettleRemoved = removedEndpoints;
        lastSettleServices = removedServices;
        if (guarded() && guardPolicy.releaseWhenStableFor().isPositive()) {
            nextDue = Math.min(
                    nextDue, stableSince() + guardPolicy.releaseWhenStableFor().toNanos());
        }
        if (nextDue != Long.MAX_VALUE) requestSettle(Math.max(nextDue, now + 1));
    }

    /** The guard counts stability from the last change in the registry, and at the earliest from its trip. */
    private long stableSince() {
        return guarded() && trippedNanos - lastChange > 0 ? trippedNanos : lastChange;
    }

    private void pruneRecent(long now) {
        long oldest = now - guardPolicy.window().toNanos();
        while (!recent.isEmpty() && recent.peek().at() - oldest < 0) recent.poll();
    }

    /** True while the deletion guard holds removals. */
    private boolean guarded() {
        return registryTripped || !trippedServices.isEmpty();
    }

    /** Shows what the guard holds on the status (or that it holds nothing any more). */
    private void showGuard() {
        if (!guarded()) {
            if (status.guard() != null) {
                status.guard(null, releaseReason != null ? releaseReason : "the endpoints came back");
            }
            trippedAt = null;
            releaseReason = null;
            return;
        }
        List<RegistryStatus.HeldService> services = new ArrayList<>();
        long heldTotal = 0;
        Set<ServiceKey> keys = new TreeSet<>();
        if (registryTripped) {
            keys.addAll(departed.keySet());
            keys.addAll(gone.keySet());
        } else {
            keys.addAll(trippedServices);
        }
        for (ServiceKey k : keys) {
            Map<String, Departure> dep = departed.getOrDefault(k, Map.of());
            boolean isGone = gone.containsKey(k);
            if (dep.isEmpty() && !isGone) continue;
            ServiceUpsert s = sent.get(k);
            heldTotal += dep.size();
            services.add(new RegistryStatus.HeldService(
                    k.toString(),
                    s == null ? "" : s.host(),
                    dep.size(),
                    s == null ? 0 : s.endpoints().size(),
                    isGone));
        }
        if (services.isEmpty()) {
            registryTripped = false;
            trippedServices.clear();
            showGuard();
            return;
        }
        services.sort(Comparator.comparingInt(RegistryStatus.HeldService::vanishing)
                .reversed()
                .thenComparing(RegistryStatus.HeldService::service));
        if (trippedAt == null) {
            trippedAt = loop.ticker().clock().instant();
            trippedNanos = loop.nanoTime();
        }
        String release = "POST /admin/registries/" + registry + "/release"
                + (guardPolicy.releaseWhenStableFor().isPositive()
                        ? ", or by itself once the registry has been stable for "
                                + guardPolicy.releaseWhenStableFor().toSeconds() + " s"
                        : " (deletionGuard.releaseWhenStableFor is 0s: only by hand)");
        int shown = Math.min(services.size(), 20);
        status.guard(
                new RegistryStatus.Guard(
                        trippedAt,
                        registryTripped ? "registry" : "service",
                        heldTotal,
                        sentEndpoints,
                        services.subList(0, shown),
                        services.size() - shown,
                        release),
                null);
    }

    // ------------------------------------------------------------------ warm-up

    private void warmUpOver() {
        if (phase != Phase.WARMING) return;
        warmTimer = Ticker.Cancellable.NONE;
        if (fullRead == null) {
            endWarmUp();
            return;
        }
        phase = Phase.RECONCILING;
        log.info("registry={} warm-up over: reading the registry in full before removing anything", registry);
        fullRead.run();
        // a full read that never ends (the registry went away again) is tried again after another period
        warmTimer = loop.schedule(warmUpPeriod, () -> {
            if (phase == Phase.RECONCILING && fullRead != null) fullRead.run();
        });
    }

    private void endWarmUp() {
        phase = Phase.NORMAL;
        warmTimer.cancel();
        warmTimer = Ticker.Cancellable.NONE;
        status.warmingUntil(null);
        int heldBefore = heldEndpoints();
        int goneBefore = gone.size();
        lastSettleRemoved = 0;
        lastSettleServices = 0;
        settle(false);
        log.info(
                "registry={} warm-up after {} over: {} endpoints and {} services that did not come back were removed"
                        + "{}",
                registry,
                warmReason,
                lastSettleRemoved,
                lastSettleServices,
                heldBefore + goneBefore > lastSettleRemoved + lastSettleServices
                        ? "; " + heldEndpoints() + " endpoints still held (re-registration window or deletion guard)"
                        : "");
    }

    // ------------------------------------------------------------------ host names

    /**
     * The upsert without the instances no client can use (an address that is not unicast: unspecified, broadcast,
     * multicast) and with at most {@code maxLabelsPerInstance} labels per instance; each left out thing is reported.
     */
    private ServiceUpsert bounded(ServiceUpsert u) {
        List<Endpoint> out = null;
        for (int i = 0; i < u.endpoints().size(); i++) {
            Endpoint e = u.endpoints().get(i);
            Endpoint kept = e;
            String notUnicast = notUnicast(e.address());
            if (notUnicast != null) {
                status.skipped(
                        u.key() + " instance " + e.address() + ":" + e.ports().values(),
                        "address " + e.address() + " is " + notUnicast + ", not an instance's address");
                kept = null;
            } else if (e.labels().size() > limits.maxLabelsPerInstance()) {
                java.util.TreeMap<String, String> labels = new java.util.TreeMap<>();
                List<dev.meshbridge.core.naming.Labels.Dropped> dropped = new ArrayList<>();
                for (Map.Entry<String, String> l : new java.util.TreeMap<>(e.labels()).entrySet()) {
                    if (labels.size() < limits.maxLabelsPerInstance()) {
                        labels.put(l.getKey(), l.getValue());
                    } else if (dropped.size() < 16) {
                        dropped.add(new dev.meshbridge.core.naming.Labels.Dropped(
                                l.getKey(),
                                "",
                                "more than maxLabelsPerInstance=" + limits.maxLabelsPerInstance()
                                        + " labels (registries[].limits.maxLabelsPerInstance)"));
                    }
                }
                status.droppedLabels(
                        u.key() + " instance " + e.address(),
                        dropped,
                        e.labels().size() - limits.maxLabelsPerInstance());
                kept = new Endpoint(e.address(), e.ports(), e.weight(), e.enabled(), e.health(), labels, e.locality());
            }
            if (kept != e && out == null) out = new ArrayList<>(u.endpoints().subList(0, i));
            if (out != null && kept != null) out.add(kept);
        }
        return out == null ? u : new ServiceUpsert(u.key(), u.host(), u.ports(), out, u.labels());
    }

    /** Why an IP literal is not a unicast address, or null when it is one. */
    static String notUnicast(String address) {
        if (!IpAddresses.isLiteral(address)) return null;
        java.net.InetAddress a;
        try {
            a = java.net.InetAddress.getByName(address); // a literal: no lookup
        } catch (java.net.UnknownHostException e) {
            return null;
        }
        if (a.isAnyLocalAddress()) return "the unspecified address";
        if (a.isMulticastAddress()) return "a multicast address";
        byte[] b = a.getAddress();
        if (b.length == 4 && (b[0] & 0xff) >= 240) {
            return (b[0] & b[1] & b[2] & b[3]) == (byte) 0xff
                    ? "the broadcast address"
                    : "a reserved (class E) address";
        }
        if (b.length == 4 && b[0] == 0) return "in 0.0.0.0/8 (this network)";
        return null;
    }

    /** The upsert with host names replaced by addresses; instances that cannot be addressed are left out. */
    private ServiceUpsert resolved(ServiceUpsert u) {
        boolean plain = true;
        for (Endpoint e : u.endpoints()) {
            if (!e.isIpv4() && !e.address().equals(IpAddresses.literal(e.address()))) {
                plain = false;
                break;
            }
        }
        if (plain) {
            index(u.key(), Set.of());
            return u;
        }
        Set<String> used = new HashSet<>();
        List<Duplicates.Candidate> out = new ArrayList<>(u.endpoints().size());
        for (Endpoint e : u.endpoints()) {
            String address = e.address();
            String literal = IpAddresses.literal(address);
            if (literal != null) {
                out.add(new Duplicates.Candidate(literal.equals(address) ? e : withAddress(e, literal), 0, address));
                continue;
            }
            String item = u.key() + " instance " + address + ":" + e.ports().values();
            if (policy.mode() == HostNamePolicy.Mode.SKIP || resolver == null) {
                status.skipped(item, "address '" + address + "' is a host name, not an IP (nonIpAddress: skip)");
                continue;
            }
            used.add(address);
            switch (resolver.resolve(address)) {
                case HostResolver.Resolved r ->
                    out.add(new Duplicates.Candidate(withAddress(e, r.address()), 0, address));
                case HostResolver.Pending p -> {
                    // sent as soon as the first lookup answers (hostNameChanged)
                }
                case HostResolver.Failed f ->
                    status.skipped(
                            item,
                            "host name '" + address + "' does not resolve (" + f.reason()
                                    + "); the instance gets traffic once it does (nonIpAddress: resolve)");
            }
        }
        index(u.key(), used);
        Duplicates.Result picked = Duplicates.pick(out);
        if (!picked.dropped().isEmpty() && log.isDebugEnabled()) {
            log.debug(
                    "registry={} service={} same address twice after resolving: {}",
                    registry,
                    u.key(),
                    picked.dropped());
        }
        return new ServiceUpsert(u.key(), u.host(), u.ports(), picked.endpoints(), u.labels());
    }

    private static Endpoint withAddress(Endpoint e, String address) {
        return new Endpoint(address, e.ports(), e.weight(), e.enabled(), e.health(), e.labels(), e.locality());
    }

    private void index(ServiceKey key, Set<String> names) {
        Set<String> before = names.isEmpty() ? namesOf.remove(key) : namesOf.put(key, names);
        if (before != null) {
            for (String n : before) {
                if (names.contains(n)) continue;
                Set<ServiceKey> keys = byName.get(n);
                if (keys != null && keys.remove(key) && keys.isEmpty()) byName.remove(n);
            }
        }
        for (String n : names) byName.computeIfAbsent(n, x -> new HashSet<>()).add(key);
    }

    private void emit(RegistryEvent event) {
        if (!open.getAsBoolean()) return;
        if (log.isDebugEnabled()) log.debug("registry={} event {}", registry, event);
        sink.accept(event);
    }
}
