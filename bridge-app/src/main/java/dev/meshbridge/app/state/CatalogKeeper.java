package dev.meshbridge.app.state;

import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.model.MeshSnapshot;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the last good catalog in the data directory ({@link CatalogFile}).
 *
 * <ol>
 *   <li>it writes nothing until {@link #enable()} (the bridge calls it once every registry has synced or passed its
 *       sync timeout), so a half-synced catalog never replaces a good file;
 *   <li>after that, each published snapshot is written, at most once per {@code writeInterval}: a burst of changes
 *       is written once, after it; the write runs on its own thread, never on the aggregator's;
 *   <li>{@link #close()} writes the latest snapshot if it was not written yet; a second close does nothing;
 *   <li>a failed write is logged (once until a write succeeds again) and retried with the next snapshot; serving
 *       never depends on it.
 * </ol>
 */
public final class CatalogKeeper implements SnapshotListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CatalogKeeper.class);

    private final CatalogFile file;
    private final long intervalMillis;
    private final Clock clock;
    private final ScheduledExecutorService writer;
    private final AtomicReference<MeshSnapshot> latest = new AtomicReference<>();
    private final AtomicBoolean enabled = new AtomicBoolean();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile long lastWriteAt;
    private volatile long writtenSequence = -1;
    private volatile boolean failing;

    public CatalogKeeper(Path directory, Duration writeInterval, Clock clock) {
        this.file = new CatalogFile(directory);
        this.intervalMillis = writeInterval.toMillis();
        this.clock = clock;
        this.writer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "meshbridge-catalog-file");
            t.setDaemon(true);
            return t;
        });
    }

    public CatalogFile file() {
        return file;
    }

    /** Starts writing: the catalog is good (every registry synced, or passed its sync timeout). */
    public void enable() {
        if (enabled.compareAndSet(false, true)) schedule();
    }

    /** The sequence of the last snapshot written; -1 before the first. */
    public long writtenSequence() {
        return writtenSequence;
    }

    @Override
    public void onSnapshot(MeshSnapshot snapshot) {
        latest.set(snapshot);
        if (enabled.get()) schedule();
    }

    private void schedule() {
        if (closed.get() || !scheduled.compareAndSet(false, true)) return;
        long wait = Math.max(0, lastWriteAt + intervalMillis - clock.millis());
        try {
            writer.schedule(this::writeLatest, wait, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            scheduled.set(false);
        }
    }

    private void writeLatest() {
        scheduled.set(false);
        MeshSnapshot s = latest.get();
        if (s == null || s.sequence() == writtenSequence) return;
        lastWriteAt = clock.millis();
        try {
            file.write(s, clock.instant());
            writtenSequence = s.sequence();
            if (failing) log.info("catalog file={} written again", file.path());
            failing = false;
            log.debug("catalog file={} written: sequence={} services={}", file.path(), s.sequence(), s.serviceCount());
        } catch (IOException | RuntimeException e) {
            if (!failing) {
                log.warn(
                        "catalog file={} cannot be written ({}); a restart will not find the last catalog until it"
                                + " can",
                        file.path(),
                        e.toString());
            }
            failing = true;
        }
        // a snapshot that came while writing
        MeshSnapshot now = latest.get();
        if (now != null && now.sequence() != writtenSequence && enabled.get()) schedule();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        writer.shutdownNow();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        MeshSnapshot s = latest.get();
        if (enabled.get() && s != null && s.sequence() != writtenSequence) {
            try {
                file.write(s, clock.instant());
                writtenSequence = s.sequence();
            } catch (IOException | RuntimeException e) {
                log.warn("catalog file={} not written at shutdown: {}", file.path(), e.toString());
            }
        }
    }
}
