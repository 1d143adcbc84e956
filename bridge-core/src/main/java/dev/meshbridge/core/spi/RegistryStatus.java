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
 *   <li>{@link #error(String, Throwable)} for failed calls to the registry (counted, last one kept for display).
 * </ol>
 */
public final class RegistryStatus {

    private static final Logger log = LoggerFactory.getLogger(RegistryStatus.class);
    private static final int MAX_REMEMBERED = 10_000;

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
    private final LongAdder skipped = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder droppedLabels = new LongAdder();
    private final LongAdder syncs = new LongAdder();
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
        if (previous == State.DOWN) log.info("registry={} type={} reconnected", registry, type);
    }

    /** The registry cannot be reached (or refused us); the catalog keeps its last good state. */
    public void disconnected(String reason) {
        reason = LogText.safe(reason);
        State previous = state;
        state = State.DOWN;
        lastError = reason;
        lastErrorAt = clock.instant();
        if (previous != State.DOWN) {
            log.warn("registry={} type={} is unreachable, keeping the last known state: {}", registry, type, reason);
        }
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

    /** A call to the registry failed; the watcher will retry. */
    public void error(String what, Throwable cause) {
        errors.increment();
        lastError = LogText.safe(what + (cause == null ? "" : ": " + cause));
        lastErrorAt = clock.instant();
        log.warn("registry={} type={} error: {}", registry, type, lastError);
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

    /** Ready for {@code /ready}: synced once, or given up waiting after {@code syncTimeout}. */
    public boolean ready(Duration syncTimeout) {
        return firstSyncAt != null
                || Duration.between(startedAt, clock.instant()).compareTo(syncTimeout) >= 0;
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
