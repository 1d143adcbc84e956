package dev.meshbridge.core.spi;

import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.util.LogText;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Health and counters of one registry watcher, read by {@code /ready}, {@code /healthz} and {@code /metrics}.
 * Thread-safe; watchers call it from any thread.
 *
 * <p>Every item, reason and error text is passed through {@link LogText#safe} (credentials in URLs stripped, control
 * characters escaped) before it is logged or kept for display.
 *
 * <p>Reporting rules:
 *
 * <ol>
 *   <li>{@link #connected()} and {@link #disconnected(String)} follow the connection; a disconnected registry keeps
 *       its last good state in the catalog;
 *   <li>{@link #synced()} after each complete sync (the first one makes the registry ready);
 *   <li>{@link #skipped(String, String)} for each malformed item that was left out: logged once per item and reason
 *       at WARN, counted every time;
 *   <li>{@link #error(String, Throwable)} for failed calls to the registry (counted, last one kept for display);
 *   <li>{@link #guard(Guard)} while the deletion guard holds removals, {@link #warmingUntil(Instant)} while removals
 *       are held after a reconnect.
 * </ol>
 *
 * <p>Logging stays quiet in an outage: one line per change of state (unreachable, reconnected), errors while the
 * registry is unreachable only counted, plus one reminder every {@link #REMINDER} while it stays so; the same error
 * text while connected is logged at most once per {@link #REMINDER}.
 */
public final class RegistryStatus {

    private static final Logger log = LoggerFactory.getLogger(RegistryStatus.class);
    private static final int MAX_REMEMBERED = 10_000;
    private static final int MAX_GUARD_SERVICES = 20;

    /** How often an ongoing outage, or an error that keeps coming, is logged again. */
    public static final Duration REMINDER = Duration.ofMinutes(5);

    /**
     * What the deletion guard holds back.
     *
     * @param since when it tripped
     * @param scope {@code registry} (more than the registry's share would vanish) or {@code service} (more than one
     *     service's share)
     * @param heldEndpoints endpoints that left the registry but are still served
     * @param servedEndpoints endpoints the registry serves now, held ones included
     * @param services the services concerned, most endpoints first (at most 20)
     * @param moreServices how many more services are concerned
     * @param release how it will be released
     */
    public record Guard(
            Instant since,
            String scope,
            long heldEndpoints,
            long servedEndpoints,
            List<HeldService> services,
            int moreServices,
            String release) {

        public Guard {
            services = List.copyOf(
                    services.size() > MAX_GUARD_SERVICES ? services.subList(0, MAX_GUARD_SERVICES) : services);
        }

        /** The share of served endpoints that would vanish, in percent. */
        public double percent() {
            return servedEndpoints == 0 ? 100 : Math.round(1000.0 * heldEndpoints / servedEndpoints) / 10.0;
        }
    }

    /**
     * One service the guard holds.
     *
     * @param service the registry's name of the service (namespace, group, name, version as the registry has them)
     * @param host its host in the mesh
     * @param vanishing endpoints that would vanish
     * @param of endpoints it serves now
     * @param gone true when the whole service left the registry
     */
    public record HeldService(String service, String host, int vanishing, int of, boolean gone) {}

    /** Connection state. */
    public enum State {
        STARTING,
        UP,
        DOWN,
        STOPPED
    }

    private final String registry;
    private final String type;
    private final Clock clock;
    private final Instant startedAt;
    private volatile State state = State.STARTING;
    private volatile String lastError;
    private volatile Instant lastErrorAt;
    private volatile Instant lastSyncAt;
    private volatile Instant firstSyncAt;
    private volatile boolean takesOver;
    private final LongAdder skipped = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder droppedLabels = new LongAdder();
    private final LongAdder syncs = new LongAdder();
    private final LongAdder guardTrips = new LongAdder();
    private volatile Guard guard;
    private volatile Instant warmingUntil;
    private volatile Duration warmUp;
    private volatile Runnable releaseHandler;
    private volatile Instant downSince;
    private volatile Instant lastReminder;
    private final LongAdder errorsWhileDown = new LongAdder();
    private final Map<String, Instant> errorLogged = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
            return size() > 1000;
        }
    });
    private final Set<String> warned =
            Collections.synchronizedSet(Collections.newSetFromMap(new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > MAX_REMEMBERED;
                }
            }));

    public RegistryStatus(String registry, String type, Clock clock) {
        this.registry = registry;
        this.type = type;
        this.clock = clock;
        this.startedAt = clock.instant();
    }

    public RegistryStatus(String registry, String type) {
        this(registry, type, Clock.systemUTC());
    }

    public String registry() {
        return registry;
    }

    public String type() {
        return type;
    }

    public void connected() {
        State previous = state;
        state = State.UP;
        if (previous == State.DOWN) {
            Instant since = downSince;
            log.info(
                    "registry={} type={} reconnected after {} s ({} failed attempts meanwhile)",
                    registry,
                    type,
                    since == null ? 0 : Duration.between(since, clock.instant()).toSeconds(),
                    errorsWhileDown.sum());
        }
        downSince = null;
    }

    /** The registry cannot be reached (or refused us); the catalog keeps its last good state. */
    public void disconnected(String reason) {
        reason = LogText.safe(reason);
        State previous = state;
        state = State.DOWN;
        lastError = reason;
        Instant now = clock.instant();
        lastErrorAt = now;
        if (previous != State.DOWN) {
            downSince = now;
            lastReminder = now;
            errorsWhileDown.reset();
            log.warn("registry={} type={} is unreachable, keeping the last known state: {}", registry, type, reason);
        } else {
            remind(now);
        }
    }

    /** While an outage lasts: one line every {@link #REMINDER}. */
    private void remind(Instant now) {
        Instant last = lastReminder;
        if (last != null && Duration.between(last, now).compareTo(REMINDER) < 0) return;
        lastReminder = now;
        Instant since = downSince;
        log.warn(
                "registry={} type={} still unreachable after {} s ({} failed attempts), keeping the last known"
                        + " state: {}",
                registry,
                type,
                since == null ? 0 : Duration.between(since, now).toSeconds(),
                errorsWhileDown.sum(),
                lastError);
    }

    public void synced() {
        Instant now = clock.instant();
        if (firstSyncAt == null) {
            firstSyncAt = now;
            log.info(
                    "registry={} type={} first sync done in {} ms",
                    registry,
                    type,
                    Duration.between(startedAt, now).toMillis());
        }
        lastSyncAt = now;
        syncs.increment();
        if (state == State.STARTING) state = State.UP;
    }

    /**
     * A malformed registry item was left out.
     *
     * @param item what was skipped, precise enough to find it in the registry (a znode path, a service and instance id)
     * @param reason why
     */
    public void skipped(String item, String reason) {
        item = LogText.safe(item);
        reason = LogText.safe(reason);
        // counted once per item and reason: a watcher that sees the same bad item on every resync counts it once
        if (warned.add(item + '\n' + reason)) {
            skipped.increment();
            log.warn("registry={} type={} skipped item={} reason={}", registry, type, item, reason);
        }
    }

    /**
     * A registry item was taken with a value changed to fit (a weight out of range clamped): counted as a skipped
     * value and logged once per item.
     */
    public void adjusted(String item, String what) {
        skipped(item, what);
    }

    /** Labels that could not be made valid were dropped from an item (logged once per item and key). */
    public void droppedLabels(String item, List<Labels.Dropped> dropped) {
        droppedLabels(item, dropped, dropped.size());
    }

    /**
     * {@code total} labels were dropped from an item; {@code logged} are the ones named in the log (a bounded few of
     * them, once per item and key). The counter counts them all.
     */
    public void droppedLabels(String item, List<Labels.Dropped> logged, long total) {
        droppedLabels.add(Math.max(0, total - logged.size()));
        item = LogText.safe(item);
        for (Labels.Dropped d : logged) {
            droppedLabels.increment();
            if (warned.add(item + '\n' + d.key())) {
                log.info(
                        "registry={} type={} item={} dropped label key={} reason={}",
                        registry,
                        type,
                        item,
                        LogText.safe(d.key()),
                        LogText.safe(d.reason()));
            }
        }
    }

    /**
     * A call to the registry failed; the watcher will retry. Counted always; logged when connected (the same text at
     * most once per {@link #REMINDER}), only as part of the outage's reminder while disconnected.
     */
    public void error(String what, Throwable cause) {
        errors.increment();
        String text = LogText.safe(what + (cause == null ? "" : ": " + cause));
        lastError = text;
        Instant now = clock.instant();
        lastErrorAt = now;
        if (state == State.DOWN) {
            errorsWhileDown.increment();
            remind(now);
            log.debug("registry={} type={} error while unreachable: {}", registry, type, text);
            return;
        }
        Instant logged = errorLogged.get(text);
        if (logged != null && Duration.between(logged, now).compareTo(REMINDER) < 0) {
            log.debug("registry={} type={} error again: {}", registry, type, text);
            return;
        }
        errorLogged.put(text, now);
        log.warn("registry={} type={} error: {}", registry, type, text);
    }

    // ------------------------------------------------------------------ held removals

    /**
     * The deletion guard's state: non-null while it holds removals, null once released. A new trip is logged once at
     * WARN, naming the registry, the services and the amounts; a release once at INFO.
     *
     * @param reason for a release, why (e.g. {@code released by an operator}); ignored otherwise
     */
    public void guard(Guard g, String reason) {
        Guard previous = guard;
        guard = g;
        if (g != null && previous == null) {
            guardTrips.increment();
            String what = g.scope().equals("registry")
                    ? g.heldEndpoints() + " of the registry's " + g.servedEndpoints() + " endpoints (" + g.percent()
                            + "%) left it at once"
                    : g.heldEndpoints() + " endpoints left " + (g.services().size() + g.moreServices())
                            + " service(s) at once, most of each one's endpoints";
            log.warn(
                    "registry={} type={} deletion guard: {}; they are still served. services={}{} release={}",
                    registry,
                    type,
                    what,
                    describe(g.services()),
                    g.moreServices() > 0 ? " and " + g.moreServices() + " more" : "",
                    g.release());
        } else if (g == null && previous != null) {
            log.info("registry={} type={} deletion guard released: {}", registry, type, LogText.safe(reason));
        }
    }

    private static String describe(List<HeldService> services) {
        StringBuilder b = new StringBuilder("[");
        for (HeldService h : services) {
            if (b.length() > 1) b.append(", ");
            b.append(LogText.safe(h.host()))
                    .append(' ')
                    .append(h.vanishing())
                    .append('/')
                    .append(h.of())
                    .append(h.gone() ? " (service gone)" : "");
        }
        return b.append(']').toString();
    }

    /** What the deletion guard holds now, or null. */
    public Guard guard() {
        return guard;
    }

    /** How many times the deletion guard tripped. */
    public long guardTrips() {
        return guardTrips.sum();
    }

    /** Endpoints the deletion guard holds now. */
    public long guardHeldEndpoints() {
        Guard g = guard;
        return g == null ? 0 : g.heldEndpoints();
    }

    /** Removals are held after a reconnect until this instant (null: not warming up). */
    public void warmingUntil(Instant until) {
        warmingUntil = until;
    }

    /** The warm-up in force (the configured one, else the registry type's default); set by the watcher kit. */
    public void warmUp(Duration d) {
        warmUp = d;
    }

    public Duration warmUp() {
        return warmUp;
    }

    public Instant warmingUntil() {
        return warmingUntil;
    }

    /** Who lets the guard's held removals go ({@link #release()}); set by the watcher kit. */
    public void onRelease(Runnable handler) {
        releaseHandler = handler;
    }

    /**
     * An operator releases the deletion guard: the removals it holds apply.
     *
     * @return false when the guard held nothing
     */
    public boolean release() {
        Runnable h = releaseHandler;
        if (guard == null || h == null) return false;
        h.run();
        return true;
    }

    public void stopped() {
        state = State.STOPPED;
    }

    public State state() {
        return state;
    }

    /** True once the first full sync finished. */
    public boolean hasSynced() {
        return firstSyncAt != null;
    }

    /**
     * Ready for {@code /ready}: synced once, or given up waiting after {@code syncTimeout}, or taking over from a watcher
     * of the same registry that had synced (its last good state is still served while this one resyncs).
     */
    public boolean ready(Duration syncTimeout) {
        return firstSyncAt != null
                || takesOver
                || Duration.between(startedAt, clock.instant()).compareTo(syncTimeout) >= 0;
    }

    /**
     * This watcher replaces {@code previous} (a configuration edit restarted it): when that one had synced, its state
     * is still served, so this one counts as ready while it resyncs.
     */
    public void takeOverFrom(RegistryStatus previous) {
        if (previous != null && previous.registry.equals(registry) && (previous.hasSynced() || previous.takesOver)) {
            takesOver = true;
        }
    }

    /** True while a restarted watcher resyncs and its predecessor's state is served. */
    public boolean resyncing() {
        return takesOver && firstSyncAt == null;
    }

    public String lastError() {
        return lastError;
    }

    public Instant lastErrorAt() {
        return lastErrorAt;
    }

    public Instant lastSyncAt() {
        return lastSyncAt;
    }

    public Instant startedAt() {
        return startedAt;
    }

    public long skippedCount() {
        return skipped.sum();
    }

    public long errorCount() {
        return errors.sum();
    }

    public long droppedLabelCount() {
        return droppedLabels.sum();
    }

    public long syncCount() {
        return syncs.sum();
    }
}
