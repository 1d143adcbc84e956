package dev.meshbridge.core.watch;

import dev.meshbridge.core.spi.RegistryStatus;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that owns a watcher's state. Client callbacks only {@link #execute} onto it; delayed work goes
 * through {@link #schedule}, which takes its time from the injected {@link Ticker}.
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>tasks run one at a time, in the order they were handed in;
 *   <li>a task that throws is reported on the watcher's {@link RegistryStatus} ("internal error, state kept") and the
 *       thread goes on with the next task;
 *   <li>after {@link #close()} nothing runs any more and new tasks are dropped; close returns once the running task (if
 *       any) has finished, so a closed watcher sends nothing more.
 * </ol>
 */
public final class SerialExecutor implements Executor, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    private final String name;
    private final Ticker ticker;
    private final RegistryStatus status;
    private final ThreadPoolExecutor executor;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Thread thread;

    /**
     * @param threadName the name of the owner thread
     * @param ticker where delays come from
     * @param status where failed tasks are reported, or null to log only
     */
    public SerialExecutor(String threadName, Ticker ticker, RegistryStatus status) {
        this.name = threadName;
        this.ticker = ticker;
        this.status = status;
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            thread = t;
            return t;
        });
    }

    @Override
    public void execute(Runnable task) {
        if (closed.get()) return;
        try {
            executor.execute(() -> runGuarded(task));
        } catch (RejectedExecutionException e) {
            // closing: nothing runs any more
        }
    }

    private void runGuarded(Runnable task) {
        if (closed.get()) return;
        try {
            task.run();
        } catch (RuntimeException e) {
            if (status != null) status.error("internal error, state kept", e);
            log.error("thread={} task failed; state kept", name, e);
        }
    }

    /** Runs {@code task} on this executor after {@code delay} of ticker time. */
    public Ticker.Cancellable schedule(Duration delay, Runnable task) {
        if (closed.get()) return Ticker.Cancellable.NONE;
        return ticker.schedule(delay, () -> execute(task));
    }

    public Ticker ticker() {
        return ticker;
    }

    /** The ticker's monotonic time. */
    public long nanoTime() {
        return ticker.nanoTime();
    }

    /** True on the owner thread. */
    public boolean inOwnerThread() {
        return Thread.currentThread() == thread;
    }

    public boolean isClosed() {
        return closed.get();
    }

    /** Stops the thread (interrupting a task that blocks) and waits for it; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        executor.shutdownNow();
        if (inOwnerThread()) return;
        try {
            if (!executor.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("thread={} did not stop within {}", name, CLOSE_WAIT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
