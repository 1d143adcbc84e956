package dev.meshbridge.bench;

import dev.meshbridge.bench.load.ChangeIds;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * What a run measures: a real {@link ServiceAggregator} (default coalescing) and what serves its catalog: the bridge's
 * servers, or the java-control-plane baseline.
 */
abstract class Target implements AutoCloseable {

    private final ServiceAggregator aggregator = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS);
    private final AtomicReference<MeshSnapshot> last = new AtomicReference<>(MeshSnapshot.empty());
    private final AtomicReference<Expectation> expectation = new AtomicReference<>();

    /** Waits for the first snapshot with this many services and endpoints. */
    private record Expectation(int services, long endpoints, CompletableFuture<Long> reached) {}

    /**
     * While tracing, per host: when a snapshot first held each larger change id ({@link ChangeIds}) among the host's
     * endpoints' ports, i.e. when a change had reached the catalog the servers are handed (the listener runs after
     * theirs were given the snapshot). Written on the aggregator's thread, read by the harness.
     */
    private final Map<String, IdLog> traced = new ConcurrentHashMap<>();

    private volatile boolean tracing;

    /** The change ids a host's snapshots showed, in order, with the time each first showed. */
    static final class IdLog {
        private int max;
        private final List<long[]> seen = new ArrayList<>();

        synchronized void offer(int id, long nanos) {
            if (id <= max) return;
            max = id;
            seen.add(new long[] {id, nanos});
        }

        /** When a snapshot first held change {@code id} or a later one of the host, or -1. */
        synchronized long firstAtOrAfter(int id) {
            for (long[] s : seen) if (s[0] >= id) return s[1];
            return -1;
        }
    }

    /** When the last change made alone ({@link #awaitAlone}) was served; 0 before the first. */
    private long aloneServedNanos;

    /**
     * Waits until the aggregator's quiet period has passed since the last change made alone was served (so since the
     * aggregator had it), so that the next change arrives alone, as one in a running bridge does (changes seconds
     * apart), and not within the quiet period of the one before, which it would join on the trailing edge. Up to issue
     * 22's sixth session the aggregator's quiet-period timer made every change wait that long anyway, so there this
     * waits for nothing. Call {@link #servedAlone()} once the change is served.
     */
    final void awaitAlone() {
        if (aloneServedNanos == 0) return;
        long quiet = aggregator.options().quietPeriod().toNanos();
        long wait;
        while ((wait = aloneServedNanos + quiet - System.nanoTime()) > 0) LockSupport.parkNanos(wait);
    }

    /** The change made after {@link #awaitAlone()} is served. */
    final void servedAlone() {
        aloneServedNanos = System.nanoTime();
    }

    /** Starts (forgetting what was traced) or stops tracing the change ids that reach the catalog. */
    final void trace(boolean on) {
        if (on) traced.clear();
        tracing = on;
    }

    /** When a snapshot first held change {@code id} (or a later one) of {@code host}, or -1; see {@link #trace}. */
    final long inCatalog(String host, int id) {
        IdLog log = traced.get(host);
        return log == null ? -1 : log.firstAtOrAfter(id);
    }

    private void traceChanges(MeshSnapshot s, long now) {
        for (String host : s.changed()) {
            MeshService service = s.service(host);
            if (service == null) continue;
            int max = maxId(service);
            if (max > 0) traced.computeIfAbsent(host, h -> new IdLog()).offer(max, now);
        }
    }

    /** The largest change id ({@link ChangeIds}) among a service's endpoints' ports; 0 when none carries one. */
    static int maxId(MeshService service) {
        int max = 0;
        for (Endpoint e : service.endpoints()) {
            for (int port : e.ports().values()) max = Math.max(max, ChangeIds.id(port));
        }
        return max;
    }

    /** Whether the snapshot holds change {@code id} of {@code host}, or a later one. */
    static boolean carries(MeshSnapshot s, String host, int id) {
        MeshService service = s == null ? null : s.service(host);
        return service != null && maxId(service) >= id;
    }

    /** A change the harness waits for: {@code action} runs with the first snapshot that carries it. */
    private record Watch(String host, int id, Consumer<MeshSnapshot> action) {}

    /** The changes waited for; guarded by itself (the harness adds, the aggregator's thread takes). */
    private final List<Watch> watches = new ArrayList<>();

    /**
     * Runs {@code action} once, with the first snapshot handed to the servers that carries change {@code id} of {@code
     * host} (or a later one): on the aggregator's thread right after the servers were given it, or at once on the
     * caller's thread when the last snapshot already carries it. A callback from the aggregator's own publication, so
     * that a figure waiting for a change costs no polling on the cores it measures.
     */
    final void whenCarried(String host, int id, Consumer<MeshSnapshot> action) {
        MeshSnapshot now;
        synchronized (watches) {
            // the listener sets the last snapshot before it looks here: one of the two sees the other
            now = last.get();
            if (!carries(now, host, id)) {
                watches.add(new Watch(host, id, action));
                return;
            }
        }
        action.accept(now);
    }

    private void runWatches(MeshSnapshot s) {
        List<Watch> due = null;
        synchronized (watches) {
            if (watches.isEmpty()) return;
            for (java.util.Iterator<Watch> it = watches.iterator(); it.hasNext(); ) {
                Watch w = it.next();
                if (!carries(s, w.host(), w.id())) continue;
                it.remove();
                if (due == null) due = new ArrayList<>();
                due.add(w);
            }
        }
        if (due == null) return;
        for (Watch w : due) {
            try {
                w.action().accept(s);
            } catch (RuntimeException e) {
                // a figure is lost, never the aggregator's listener
            }
        }
    }

    /** Subscribes the servers, then the harness's own listener (so it sees a snapshot after the servers got it). */
    final void subscribeAll() {
        subscribeServers(aggregator);
        aggregator
                .subscribe(s -> {
                    if (tracing) traceChanges(s, System.nanoTime());
                    last.set(s);
                    runWatches(s);
                    Expectation e = expectation.get();
                    if (e != null && s.serviceCount() == e.services() && s.endpointCount() == e.endpoints()) {
                        e.reached().complete(System.nanoTime());
                    }
                })
                .join();
    }

    abstract String name();

    abstract void subscribeServers(ServiceAggregator aggregator);

    abstract int adsPort();

    /** The MCP port, or -1 when this target does not serve MCP. */
    abstract int mcpPort();

    /** Waits until every server applied the snapshot with this sequence (or a later one). */
    abstract void awaitServed(long sequence, long timeoutMillis) throws Exception;

    /**
     * Waits until every server took the snapshot with this sequence (or a later one) in: applied it, or holds it for an
     * application the server paces (the bridge's MCP server applies a small snapshot at most once per push interval,
     * with those after it); the changes' CPU is counted once {@link #applyPaced} ran. As {@link #awaitServed} where
     * nothing is paced.
     */
    void awaitTaken(long sequence, long timeoutMillis) throws Exception {
        awaitServed(sequence, timeoutMillis);
    }

    /** Applies what a server holds for a paced application now, so that its CPU counts where it was caused. */
    void applyPaced(long timeoutMillis) throws Exception {}

    /** The thread groups ({@link ThreadCost#group}) that do the work of a catalog change. */
    abstract String[] changeGroups();

    /** Tells the servers the catalog holds the registries' first sync. */
    void catalogReady() {}

    final ServiceAggregator aggregator() {
        return aggregator;
    }

    final MeshSnapshot last() {
        return last.get();
    }

    /** A future completing (with {@link System#nanoTime()}) at the first snapshot of this size. */
    final CompletableFuture<Long> expect(int services, long endpoints) {
        Expectation e = new Expectation(services, endpoints, new CompletableFuture<>());
        expectation.set(e);
        MeshSnapshot s = last.get();
        if (s.serviceCount() == services && s.endpointCount() == endpoints)
            e.reached().complete(System.nanoTime());
        return e.reached();
    }

    /** Publishes what is pending and waits until the servers took it in ({@link #awaitTaken}). */
    final MeshSnapshot settle(long timeoutMillis) throws Exception {
        MeshSnapshot s = aggregator.flushNow().get(timeoutMillis, TimeUnit.MILLISECONDS);
        awaitTaken(s.sequence(), timeoutMillis);
        return s;
    }

    /** Waits until {@code served} reaches {@code sequence}. */
    static void awaitSequence(LongSupplier served, long sequence, long timeoutMillis, String what)
            throws TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (served.getAsLong() < sequence) {
            if (System.nanoTime() > deadline) throw new TimeoutException(what + " did not apply sequence " + sequence);
            LockSupport.parkNanos(200_000);
        }
    }

    @Override
    public void close() {
        closeServers();
        aggregator.close();
    }

    abstract void closeServers();

    /** The xDS server's served snapshot sequence; null where the target cannot tell (the bridge-side figures). */
    java.util.function.LongSupplier xdsServed() {
        return null;
    }

    /**
     * Completes once the xDS server's serving thread has done everything queued before the call, including the pushes
     * that work caused: every response handed to gRPC (written to the sockets by the transport threads after that).
     */
    java.util.concurrent.CompletableFuture<Void> xdsIdle() {
        return null;
    }
}
