package dev.meshbridge.ads;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * How many log lines one kind of client-caused event may write: at most {@code perWindow} per window for the whole
 * server, whatever the number of clients, so ten thousand bad requests write a handful of lines and a count of the
 * rest. Kinds are a small fixed set chosen by the code (never client text). Thread-safe.
 */
final class LogBudget {

    private final int perWindow;
    private final long windowNanos;
    private final LongSupplier nanoTime;
    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

    private static final class Window {
        long start;
        int used;
        final AtomicLong suppressed = new AtomicLong();
    }

    LogBudget(int perWindow, long windowNanos, LongSupplier nanoTime) {
        this.perWindow = perWindow;
        this.windowNanos = windowNanos;
        this.nanoTime = nanoTime;
    }

    static LogBudget perMinute(int lines) {
        return new LogBudget(lines, 60_000_000_000L, System::nanoTime);
    }

    /**
     * Takes one line of this kind from the budget.
     *
     * @return -1 when the line must not be written; otherwise how many lines of this kind were dropped since the last
     *     one written (to say so on this line)
     */
    long take(String kind) {
        Window w = windows.computeIfAbsent(kind, k -> {
            Window n = new Window();
            n.start = nanoTime.getAsLong();
            return n;
        });
        synchronized (w) {
            long now = nanoTime.getAsLong();
            if (now - w.start >= windowNanos) {
                w.start = now;
                w.used = 0;
            }
            if (w.used >= perWindow) {
                w.suppressed.incrementAndGet();
                return -1;
            }
            w.used++;
            return w.suppressed.getAndSet(0);
        }
    }

    /** The text to append to a written line that stands for dropped ones ("" when none were). */
    static String dropped(long n) {
        return n <= 0 ? "" : " (" + n + " similar lines dropped)";
    }
}
