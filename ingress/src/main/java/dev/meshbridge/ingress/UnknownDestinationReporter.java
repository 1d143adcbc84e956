package dev.meshbridge.ingress;

import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.WeightedDestination;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Finds served routes whose registry destinations are not in the catalog and reports them on their Ingress (a
 * Kubernetes Event {@code UnknownDestination} for the cluster source) and in the log, once when a destination goes
 * missing and once when it appears ({@code UnknownDestinationResolved}); such a route answers 503 meanwhile.
 *
 * <ol>
 *   <li>it listens to the catalog ({@link SnapshotListener}) and to the route table ({@link RouteTableListener});
 *       both callbacks only enqueue, the check runs on its own thread;
 *   <li>a snapshot that follows the previous one and changes none of the hosts the routes point at is skipped, so the
 *       cost per snapshot does not grow with the catalog;
 *   <li>a destination with a port is also reported when the service has no such port;
 *   <li>nothing is reported before the catalog is ready (every registry had its first sync, as the app's {@code
 *       /ready} says), so a restart does not report every route as broken for a moment.
 * </ol>
 */
public final class UnknownDestinationReporter implements SnapshotListener, RouteTableListener, AutoCloseable {

    static final String CATEGORY = "destination";
    private static final long NOT_READY_RETRY_MS = 500;

    private final IssueTracker issues;
    private final BooleanSupplier catalogReady;
    private final ScheduledExecutorService executor;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger missing = new AtomicInteger();

    // --- owned by the executor thread ---
    private MeshSnapshot snapshot;
    private RouteTable table;
    private Set<String> tableHosts = Set.of();
    private MeshSnapshot checkedSnapshot;
    private RouteTable checkedTable;
    private boolean retryScheduled;

    /**
     * @param catalogReady true once the catalog is complete enough to judge (the app passes its readiness)
     */
    public UnknownDestinationReporter(IssueTracker issues, BooleanSupplier catalogReady, MeterRegistry meters) {
        this.issues = issues;
        this.catalogReady = catalogReady;
        this.executor = Executors.newSingleThreadScheduledExecutor(Threads.daemon("meshbridge-ingress-destinations"));
        Gauge.builder("meshbridge.ingress.unknown.destinations", missing, AtomicInteger::get)
                .description("registry destinations of served routes that are not in the catalog")
                .register(meters);
    }

    @Override
    public void onSnapshot(MeshSnapshot s) {
        enqueue(() -> {
            snapshot = s;
            check();
        });
    }

    @Override
    public void onRouteTable(RouteTable t) {
        enqueue(() -> {
            table = t;
            tableHosts = t.registryHosts();
            check();
        });
    }

    private void enqueue(Runnable task) {
        if (closed.get()) return;
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void check() {
        if (snapshot == null || table == null) return;
        if (!catalogReady.getAsBoolean()) {
            if (!retryScheduled) {
                retryScheduled = true;
                executor.schedule(
                        () -> {
                            retryScheduled = false;
                            check();
                        },
                        NOT_READY_RETRY_MS,
                        TimeUnit.MILLISECONDS);
            }
            return;
        }
        if (table == checkedTable && checkedSnapshot != null && !touchesRoutes(checkedSnapshot, snapshot)) {
            checkedSnapshot = snapshot;
            return;
        }
        checkedSnapshot = snapshot;
        checkedTable = table;
        Map<IngressRef, SortedMap<String, SortedSet<String>>> byIngress = new HashMap<>();
        int count = 0;
        for (HttpRoute r : table.servedRoutes()) {
            for (WeightedDestination wd : r.destinations()) {
                if (!(wd.destination() instanceof RegistryDestination d)) continue;
                String problem = problem(snapshot.service(d.host()), d);
                if (problem == null) continue;
                count++;
                byIngress
                        .computeIfAbsent(r.owner(), k -> new TreeMap<>())
                        .computeIfAbsent(problem, k -> new TreeSet<>())
                        .add(r.match().toString());
            }
        }
        missing.set(count);
        Map<IngressRef, List<Issue>> current = new HashMap<>();
        byIngress.forEach((ref, problems) -> current.put(
                ref,
                problems.entrySet().stream()
                        .map(e -> new Issue(
                                Issue.UNKNOWN_DESTINATION,
                                e.getKey() + "; route" + (e.getValue().size() > 1 ? "s " : " ")
                                        + String.join(", ", e.getValue()) + " answer"
                                        + (e.getValue().size() > 1 ? "" : "s") + " 503 until it appears"))
                        .toList()));
        issues.update(CATEGORY, current, table.ingresses());
    }

    private static String problem(MeshService service, RegistryDestination d) {
        if (service == null) return "destination " + d.host() + " is not in the catalog";
        if (d.port() == 0) return null;
        for (ServicePort p : service.ports()) {
            if (p.number() == d.port()) return null;
        }
        return "destination " + d.host() + ":" + d.port() + " names a port the service does not have (it has "
                + service.ports().stream().map(p -> String.valueOf(p.number())).toList() + ")";
    }

    /** Whether {@code next} may differ from {@code previous} for a host the routes point at. */
    private boolean touchesRoutes(MeshSnapshot previous, MeshSnapshot next) {
        if (next == previous) return false;
        if (next.sequence() != previous.sequence() + 1) return true;
        for (String h : next.changed()) {
            if (tableHosts.contains(h)) return true;
        }
        for (String h : next.removed()) {
            if (tableHosts.contains(h)) return true;
        }
        return false;
    }

    /** Registry destinations of served routes that are missing now. */
    public int missingCount() {
        return missing.get();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        executor.shutdownNow();
    }
}
