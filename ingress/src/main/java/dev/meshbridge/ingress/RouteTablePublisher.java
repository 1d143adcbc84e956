package dev.meshbridge.ingress;

import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.RouteConflict;
import dev.meshbridge.core.route.RouteTable;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Merges the Ingresses of every source (cluster, directory) into one {@link RouteTable} and publishes it.
 *
 * <ol>
 *   <li>each source hands over its complete current contributions with {@link #update}; the publisher's one thread
 *       owns the merged state, callers only enqueue;
 *   <li>the first table is published once every expected source has delivered its first full read, or when the sync
 *       timeout passes (so a restart never publishes a half table that would take routes away for a moment);
 *   <li>later tables are published when their version changes; conflicts are reported on the losing Ingress through
 *       the {@link IssueTracker}, once per change.
 * </ol>
 */
public final class RouteTablePublisher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RouteTablePublisher.class);
    static final String CONFLICT_CATEGORY = "conflict";

    private final IssueTracker issues;
    private final ScheduledExecutorService executor;
    private final AtomicReference<RouteTable> current = new AtomicReference<>(RouteTable.empty());
    private final List<RouteTableListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Counter published;

    // --- owned by the executor thread ---
    private final Map<String, Collection<IngressRoutes>> bySource = new LinkedHashMap<>();
    private final Set<String> expected = new java.util.LinkedHashSet<>();
    private boolean started;
    private boolean released;
    private volatile String publishedVersion;

    public RouteTablePublisher(IssueTracker issues, MeterRegistry meters) {
        this.issues = issues;
        this.executor = Executors.newSingleThreadScheduledExecutor(Threads.daemon("meshbridge-ingress-routes"));
        this.published = Counter.builder("meshbridge.ingress.tables.published")
                .description("route tables published (one per version change)")
                .register(meters);
        Gauge.builder(
                        "meshbridge.ingress.routes",
                        current,
                        c -> c.get().routes().size())
                .description("HTTP routes served from Ingresses")
                .register(meters);
        Gauge.builder(
                        "meshbridge.ingress.conflicts",
                        current,
                        c -> c.get().conflicts().size())
                .description("Ingress claims left out because an older Ingress claims the same")
                .register(meters);
        Gauge.builder(
                        "meshbridge.ingress.ingresses",
                        current,
                        c -> c.get().ingresses().size())
                .description("Ingresses contributing to the route table")
                .register(meters);
    }

    /** Declares a source whose first delivery the first table waits for; call before {@link #start}. */
    public void expectSource(String source) {
        executor.execute(() -> expected.add(source));
    }

    /** Starts the sync timeout: after it, the first table is published even if a source has not delivered. */
    public void start(Duration syncTimeout) {
        executor.execute(() -> started = true);
        executor.schedule(
                () -> {
                    if (released) return;
                    List<String> missing = new ArrayList<>(expected);
                    missing.removeAll(bySource.keySet());
                    log.warn(
                            "ingress sources={} have not finished their first read after {} ms; publishing routes"
                                    + " without them",
                            missing,
                            syncTimeout.toMillis());
                    released = true;
                    rebuild();
                },
                syncTimeout.toMillis(),
                TimeUnit.MILLISECONDS);
        executor.execute(this::rebuild);
    }

    /** The complete current contributions of one source (enqueued). */
    public void update(String source, Collection<IngressRoutes> contributions) {
        List<IngressRoutes> copy = List.copyOf(contributions);
        if (closed.get()) return;
        executor.execute(() -> {
            bySource.put(source, copy);
            rebuild();
        });
    }

    /** Adds a listener; it receives the current table (once published) and every later one. */
    public void addListener(RouteTableListener listener) {
        executor.execute(() -> {
            listeners.add(listener);
            if (released) listener.onRouteTable(current.get());
        });
    }

    /** The latest merged table (empty before the first publication). */
    public RouteTable current() {
        return current.get();
    }

    /** True once the first table was published. */
    public boolean synced() {
        return publishedVersion != null;
    }

    private void rebuild() {
        if (!started) return;
        if (!released && bySource.keySet().containsAll(expected)) released = true;
        if (!released) return;
        List<IngressRoutes> all = new ArrayList<>();
        bySource.values().forEach(all::addAll);
        RouteTable table;
        try {
            table = RouteTable.merge(all);
        } catch (IllegalArgumentException e) {
            log.error("merging Ingress routes failed, keeping the previous table: {}", e.getMessage());
            return;
        }
        current.set(table);
        reportConflicts(table);
        if (table.version().equals(publishedVersion)) return;
        publishedVersion = table.version();
        published.increment();
        log.info(
                "ingress routes version={} routes={} tlsHosts={} conflicts={} ingresses={}",
                table.version(),
                table.routes().size(),
                table.tls().size(),
                table.conflicts().size(),
                table.ingresses().size());
        for (RouteTableListener l : listeners) {
            try {
                l.onRouteTable(table);
            } catch (RuntimeException e) {
                log.error("route table listener failed", e);
            }
        }
    }

    private void reportConflicts(RouteTable table) {
        Map<IngressRef, List<Issue>> byLoser = new HashMap<>();
        for (RouteConflict c : table.conflicts()) {
            byLoser.computeIfAbsent(c.loser(), r -> new ArrayList<>()).add(new Issue(Issue.CONFLICT, c.message()));
        }
        issues.update(CONFLICT_CATEGORY, byLoser, table.ingresses());
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        executor.shutdownNow();
    }
}
