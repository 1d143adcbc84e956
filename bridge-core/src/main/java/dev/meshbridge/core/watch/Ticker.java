package dev.meshbridge.core.watch;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Time for watchers: a monotonic clock, the wall clock, and delayed tasks. Injected (see {@link WatcherRuntime}) so
 * that tests drive time instead of waiting for it.
 *
 * <p>Contract: a scheduled task runs once, after at least its delay, on a thread of the ticker's choosing; tasks must
 * be short (they hand work to a {@link SerialExecutor}, which {@link SerialExecutor#schedule} does for its callers).
 */
public interface Ticker {

    /** Monotonic nanoseconds, for durations only. */
    long nanoTime();

    /** The wall clock, for timestamps shown to users. */
    Clock clock();

    /** Runs {@code task} once after {@code delay}; the returned handle cancels it if it has not run yet. */
    Cancellable schedule(Duration delay, Runnable task);

    /** A scheduled task that can still be cancelled. */
    @FunctionalInterface
    interface Cancellable {
        Cancellable NONE = () -> {};

        void cancel();
    }

    /** Real time: {@link System#nanoTime()}, the UTC clock, one shared daemon timer thread. */
    static Ticker system() {
        return SystemTicker.INSTANCE;
    }

    /** The real-time ticker. */
    final class SystemTicker implements Ticker {
        static final SystemTicker INSTANCE = new SystemTicker();

        private final ScheduledThreadPoolExecutor timer;

        private SystemTicker() {
            timer = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "meshbridge-ticker");
                t.setDaemon(true);
                return t;
            });
            timer.setRemoveOnCancelPolicy(true);
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public Clock clock() {
            return Clock.systemUTC();
        }

        @Override
        public Cancellable schedule(Duration delay, Runnable task) {
            ScheduledFuture<?> f = timer.schedule(task, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
        }

        @Override
        public String toString() {
            return "system ticker at " + Instant.now();
        }
    }
}
