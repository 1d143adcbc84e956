package dev.meshbridge.core.watch;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves the host names instances are registered under, for one watcher, without blocking its owner thread.
 *
 * <p>Contract (every method on the owner {@link SerialExecutor}'s thread):
 *
 * <ol>
 *   <li>{@link #resolve} answers from the cache at once: an address, {@link Pending} while the first lookup runs, or a
 *       failure; a missing or stale entry starts a lookup on a blocking executor (at most {@value #MAX_IN_FLIGHT} at
 *       a time);
 *   <li>an address is kept for the refresh period, then looked up again while the old one is still served; a failed
 *       refresh keeps the last address (DNS trouble never takes an instance away), a failed first lookup is retried
 *       after the same period;
 *   <li>when a lookup changes what {@link #resolve} answers for a name, {@code onChange} is called with the name;
 *   <li>the cache holds at most {@value #MAX_NAMES} names; beyond that the least recently used is forgotten (counted
 *       in {@link #evictions()} and logged once).
 * </ol>
 */
public final class HostResolver {

    private static final Logger log = LoggerFactory.getLogger(HostResolver.class);

    public static final int MAX_NAMES = 10_000;
    static final int MAX_IN_FLIGHT = 16;

    /** How a name is looked up: the system resolver in production, a table in tests. */
    @FunctionalInterface
    public interface Lookup {
        Lookup SYSTEM = InetAddress::getAllByName;

        InetAddress[] lookup(String host) throws UnknownHostException;
    }

    /** What {@link #resolve} knows about a name. */
    public sealed interface Result permits Resolved, Pending, Failed {}

    /** The name's address. */
    public record Resolved(String address) implements Result {}

    /** The first lookup has not answered yet. */
    public enum Pending implements Result {
        INSTANCE
    }

    /** The name does not resolve (and never did since it was first seen). */
    public record Failed(String reason) implements Result {}

    private static final class Entry {
        Result result = Pending.INSTANCE;
        long expiresAt;
        boolean inFlight;
    }

    private final SerialExecutor owner;
    private final Lookup lookup;
    private final Executor blocking;
    private final long refreshNanos;
    private final Consumer<String> onChange;
    private final LinkedHashMap<String, Entry> cache = new LinkedHashMap<>(16, 0.75f, true);
    private final ArrayDeque<String> waiting = new ArrayDeque<>();
    private int inFlight;
    private long evictions;
    private long lookups;

    /**
     * @param owner the watcher's owner thread; lookups report back onto it
     * @param lookup how names are looked up
     * @param blocking where lookups block (virtual threads)
     * @param refresh how long an answer is used
     * @param onChange called on the owner thread with a name whose answer changed
     */
    public HostResolver(
            SerialExecutor owner, Lookup lookup, Executor blocking, Duration refresh, Consumer<String> onChange) {
        this.owner = Objects.requireNonNull(owner);
        this.lookup = Objects.requireNonNull(lookup);
        this.blocking = Objects.requireNonNull(blocking);
        this.refreshNanos = refresh.toNanos();
        this.onChange = Objects.requireNonNull(onChange);
    }

    /** What is known about {@code name} now; starts a lookup when there is none or it is due for a refresh. */
    public Result resolve(String name) {
        Entry e = cache.get(name);
        if (e == null) {
            evictIfFull();
            e = new Entry();
            cache.put(name, e);
            start(name, e);
        } else if (!e.inFlight && owner.nanoTime() - e.expiresAt >= 0) {
            start(name, e);
        }
        return e.result;
    }

    /** Names forgotten because the cache was full. */
    public long evictions() {
        return evictions;
    }

    /** Lookups started so far. */
    public long lookups() {
        return lookups;
    }

    /** Names in the cache. */
    public int size() {
        return cache.size();
    }

    private void evictIfFull() {
        if (cache.size() < MAX_NAMES) return;
        for (Iterator<Map.Entry<String, Entry>> it = cache.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Entry> eldest = it.next();
            if (eldest.getValue().inFlight) continue;
            it.remove();
            if (evictions++ == 0) {
                log.warn(
                        "more than {} host names to resolve; forgetting the least recently used ones (they are looked"
                                + " up again when needed)",
                        MAX_NAMES);
            }
            return;
        }
    }

    private void start(String name, Entry e) {
        e.inFlight = true;
        if (inFlight >= MAX_IN_FLIGHT) {
            waiting.add(name);
            return;
        }
        launch(name);
    }

    private void launch(String name) {
        inFlight++;
        lookups++;
        try {
            blocking.execute(() -> {
                Result r = lookUp(name);
                owner.execute(() -> complete(name, r));
            });
        } catch (RejectedExecutionException ex) {
            inFlight--; // closing
        }
    }

    private Result lookUp(String name) {
        try {
            InetAddress[] all = lookup.lookup(name);
            if (all == null || all.length == 0) return new Failed("no address");
            InetAddress chosen = all[0];
            for (InetAddress a : all) {
                if (a instanceof Inet4Address) {
                    chosen = a;
                    break;
                }
            }
            return new Resolved(chosen.getHostAddress());
        } catch (UnknownHostException ex) {
            return new Failed("unknown host");
        } catch (RuntimeException ex) {
            return new Failed(ex.toString());
        }
    }

    private void complete(String name, Result r) {
        inFlight--;
        Entry e = cache.get(name);
        if (e != null) {
            e.inFlight = false;
            e.expiresAt = owner.nanoTime() + refreshNanos;
            Result old = e.result;
            if (r instanceof Failed f && old instanceof Resolved ok) {
                log.warn(
                        "host name {} does not resolve any more ({}); keeping its last address {}",
                        name,
                        f.reason(),
                        ok.address());
            } else {
                e.result = r;
            }
            if (!e.result.equals(old)) onChange.accept(name);
        }
        while (inFlight < MAX_IN_FLIGHT && !waiting.isEmpty()) {
            String next = waiting.poll();
            if (cache.containsKey(next)) launch(next);
        }
    }
}
