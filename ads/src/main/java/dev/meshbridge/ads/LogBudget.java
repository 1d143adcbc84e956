package dev.meshbridge.ads;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * How many log lines one kind of client-caused event may write: at most {@code perWindow} per window for the whole
 * server, whatever the number of clients, and at most {@code perClientPerWindow} of those for one client (its address,
 * without the port: reconnecting does not buy more). Ten thousand bad requests write a handful of lines and a count of
 * the rest, and one noisy client cannot use up the lines that would tell of the others. Kinds are a small fixed set
 * chosen by the code (never client text); the clients remembered per kind and window are bounded ({@link
 * #MAX_CLIENTS}; past it, clients share the kind's budget only). Thread-safe.
 */
final class LogBudget {

    /** Clients remembered per kind within one window. */
    static final int MAX_CLIENTS = 1_024;

    private final int perWindow;
    private final int perClientPerWindow;
    private final long windowNanos;
    private final LongSupplier nanoTime;
    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

    private static final class Window {
        long start;
        int used;
        final Map<String, Integer> byClient = new HashMap<>();
        final AtomicLong suppressed = new AtomicLong();
    }

    LogBudget(int perWindow, int perClientPerWindow, long windowNanos, LongSupplier nanoTime) {
        if (perClientPerWindow < 1 || perClientPerWindow > perWindow) {
            throw new IllegalArgumentException("perClientPerWindow must be in 1.." + perWindow);
        }
        this.perWindow = perWindow;
        this.perClientPerWindow = perClientPerWindow;
        this.windowNanos = windowNanos;
        this.nanoTime = nanoTime;
    }

    /** {@code lines} a minute per kind, a quarter of them (at least one) per client. */
    static LogBudget perMinute(int lines) {
        return new LogBudget(lines, Math.max(1, lines / 4), 60_000_000_000L, System::nanoTime);
    }

    /** Takes one line of this kind from the server's budget (an event no single client caused). */
    long take(String kind) {
        return take(kind, null);
    }

    /**
     * Takes one line of this kind from the budget of this client and of the server.
     *
     * @param client the client's address (host, no port), or null for none
     * @return -1 when the line must not be written; otherwise how many lines of this kind were dropped since the last
     *     one written (to say so on this line)
     */
    long take(String kind, String client) {
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
                w.byClient.clear();
            }
            if (w.used >= perWindow) {
                w.suppressed.incrementAndGet();
                return -1;
            }
            if (client != null) {
                Integer mine = w.byClient.get(client);
                if (mine != null && mine >= perClientPerWindow) {
                    w.suppressed.incrementAndGet();
                    return -1;
                }
                if (mine != null || w.byClient.size() < MAX_CLIENTS) {
                    w.byClient.put(client, mine == null ? 1 : mine + 1);
                }
            }
            w.used++;
            return w.suppressed.getAndSet(0);
        }
    }

    /** The client part of a peer address as the server records it ({@code 10.0.0.1:5000}, {@code ::1:5000}). */
    static String host(String peer) {
        if (peer == null) return null;
        int colon = peer.lastIndexOf(':');
        return colon > 0 ? peer.substring(0, colon) : peer;
    }

    /** The text to append to a written line that stands for dropped ones ("" when none were). */
    static String dropped(long n) {
        return n <= 0 ? "" : " (" + n + " similar lines dropped)";
    }
}
