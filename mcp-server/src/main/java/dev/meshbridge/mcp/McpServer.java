package dev.meshbridge.mcp;

import com.google.protobuf.Timestamp;
import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.mcp.ResourceTable.Served;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the catalog to istiod as Istio config over MCP-over-xDS: istiod lists the bridge in its mesh config's
 * {@code configSources} ({@code xds://<bridge>:15051}) and receives a ServiceEntry (and, in WorkloadEntry mode, a
 * WorkloadEntry per instance) for every catalog service.
 *
 * <p>How it works:
 *
 * <ol>
 *   <li>subscribe it to the {@link dev.meshbridge.core.aggregate.ServiceAggregator}; each snapshot is handed to the
 *       server's own thread, which translates only the services that changed ({@link ServiceEntryTranslator}) and
 *       keeps one table per kind; nothing is computed per client that could be computed once;
 *   <li>it speaks the ADS protocol (SotW, which istiod uses, and Delta) and answers every type URL it is asked for:
 *       the kinds it produces under whichever API version was requested, every other kind (istiod asks for all of
 *       its config types and {@code core/v1alpha1/MeshConfig}) with an empty set;
 *   <li>it holds its first answers until {@link #markCatalogReady()} or {@link McpOptions#initialSyncTimeout()}, so
 *       an istiod connected to a restarting bridge does not see a half-filled catalog and drop the rest;
 *   <li>a resource keeps its creation time for as long as it exists, and its version changes only with its content;
 *   <li>services istiod would refuse are not sent; they are logged, counted and listed by {@code /debug/mcp};
 *   <li>the snapshot's Ingress routes become Gateways, VirtualServices and DestinationRules ({@link
 *       IngressRouteTranslator}), translated again only when the route table changes or a host it names changes its
 *       served ports (never for an endpoint), and only the resources whose content changed get a new version.
 * </ol>
 *
 * <p>Lifecycle: {@link #start()} once; {@link #close()} ends the streams and stops the server; a second close does
 * nothing.
 */
public final class McpServer implements SnapshotListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(McpServer.class);
    private static final Context.Key<String> PEER = Context.key("meshbridge-mcp-peer");
    private static final int DEFAULT_DEBUG_LIMIT = 200;

    private enum State {
        LATENT,
        STARTED,
        CLOSED
    }

    private final McpOptions options;
    private final Clock clock;
    private final ServiceEntryTranslator translator;
    private final IngressRouteTranslator routeTranslator;
    private final McpMetrics metrics;
    private final ScheduledThreadPoolExecutor executor;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final AtomicLong streamIds = new AtomicLong();
    private volatile Server server;

    // --- owned by the executor thread ---
    private final Map<McpKind, ResourceTable> tables = new EnumMap<>(McpKind.class);
    private final Map<String, Applied> translations = new HashMap<>();
    private final Set<String> conflicted = new HashSet<>();
    private final Map<Long, McpStream> streams = new LinkedHashMap<>();
    private MeshSnapshot applied;
    private RouteTranslation routes;
    private boolean ready;
    private int refusedCount;
    private long noteCount;

    private final McpStream.Context streamContext = new McpStream.Context() {
        @Override
        public ResourceTable table(McpKind kind) {
            return tables.get(kind);
        }

        @Override
        public boolean ready() {
            return ready;
        }

        @Override
        public McpMetrics metrics() {
            return metrics;
        }

        @Override
        public Instant now() {
            return clock.instant();
        }
    };

    public McpServer(McpOptions options, MeterRegistry meterRegistry) {
        this(options, meterRegistry, Clock.systemUTC());
    }

    McpServer(McpOptions options, MeterRegistry meterRegistry, Clock clock) {
        this.options = Objects.requireNonNull(options, "options");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.translator = new ServiceEntryTranslator(options);
        this.routeTranslator = new IngressRouteTranslator(options);
        this.metrics = new McpMetrics(Objects.requireNonNull(meterRegistry, "meterRegistry"));
        for (McpKind kind : McpKind.values()) tables.put(kind, new ResourceTable());
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "meshbridge-mcp");
            t.setDaemon(true);
            return t;
        });
        this.executor.setRemoveOnCancelPolicy(true);
        this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    public McpOptions options() {
        return options;
    }

    /**
     * Binds the port and starts serving.
     *
     * @return this server
     * @throws IOException when the address cannot be bound
     * @throws IllegalStateException when called twice or after close
     */
    public McpServer start() throws IOException {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw new IllegalStateException(
                    "MCP server already " + state.get().name().toLowerCase(Locale.ROOT));
        }
        AdsService service = new AdsService();
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress(options.bindAddress(), options.port()))
                    .addService(ServerInterceptors.intercept(service, new PeerInterceptor()))
                    // istiod's client sends keepalive pings (every 30 s by default): allow them, or gRPC closes it.
                    .permitKeepAliveTime(10, TimeUnit.SECONDS)
                    .permitKeepAliveWithoutCalls(true)
                    .keepAliveTime(60, TimeUnit.SECONDS)
                    .keepAliveTimeout(20, TimeUnit.SECONDS)
                    .maxInboundMessageSize(64 * 1024 * 1024)
                    .build()
                    .start();
        } catch (IOException e) {
            throw new IOException(
                    "MCP server cannot listen on " + options.bindAddress() + ":" + options.port()
                            + " (mcp.bindAddress, mcp.port): " + e.getMessage(),
                    e);
        }
        log.info(
                "MCP server listening on {}:{} namespace={} endpointMode={} (holding answers until the catalog is ready, at most {})",
                options.bindAddress(),
                server.getPort(),
                options.namespace(),
                modeName(),
                options.initialSyncTimeout());
        if (options.initialSyncTimeout().isZero()) {
            enqueue(() -> becomeReady("initialSyncTimeout is 0"));
        } else {
            executor.schedule(
                    () -> guarded(() -> becomeReady("initialSyncTimeout " + options.initialSyncTimeout() + " passed")),
                    options.initialSyncTimeout().toNanos(),
                    TimeUnit.NANOSECONDS);
        }
        return this;
    }

    private String modeName() {
        return options.endpointMode().name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The port the server listens on (the actual one when configured as 0); the configured port before start. */
    public int port() {
        Server s = server;
        return s == null ? options.port() : s.getPort();
    }

    /**
     * Tells the server the catalog holds every registry's first sync, so it may answer istiod. Call it after the
     * aggregator published that state, e.g. {@code aggregator.flushNow().thenRun(mcp::markCatalogReady)}.
     */
    public void markCatalogReady() {
        enqueue(() -> becomeReady("catalog ready"));
    }

    /** Receives catalog snapshots (on the aggregator's thread; the work happens on the server's thread). */
    @Override
    public void onSnapshot(MeshSnapshot snapshot) {
        enqueue(() -> apply(snapshot));
    }

    /** The {@code /debug/mcp} page. */
    public DebugSource debugSource() {
        return DebugSource.of(
                "mcp",
                "MCP server for istiod: connected clients, subscribed types, ACKed versions, NACKs, served and"
                        + " skipped resources (filters: kind, host, limit)",
                this::debugView);
    }

    @Override
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous == State.CLOSED) return;
        Server s = server;
        if (s != null) {
            try {
                CompletableFuture.runAsync(
                                () -> {
                                    for (McpStream stream : streams.values()) {
                                        stream.complete(
                                                Status.UNAVAILABLE.withDescription("meshbridge is shutting down"));
                                    }
                                    streams.clear();
                                    metrics.clients.set(0);
                                },
                                executor)
                        .get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
                log.warn("closing MCP streams: {}", e.toString());
            }
            s.shutdown();
            try {
                if (!s.awaitTermination(5, TimeUnit.SECONDS)) s.shutdownNow();
            } catch (InterruptedException e) {
                s.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) executor.shutdownNow();
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
        log.info("MCP server stopped");
    }

    // ------------------------------------------------------------------ package-private views for tests and benchmarks

    /** Completes once everything queued before it has been done. */
    CompletableFuture<Void> idle() {
        return CompletableFuture.runAsync(() -> {}, executor);
    }

    /**
     * CPU time and bytes allocated so far by the server's thread (benchmarks read it before and after some work):
     * {@code [cpuNanos, allocatedBytes]}, -1 where the JVM cannot tell.
     */
    CompletableFuture<long[]> threadCost() {
        return CompletableFuture.supplyAsync(
                () -> {
                    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
                    long cpu = mx.isCurrentThreadCpuTimeSupported() ? mx.getCurrentThreadCpuTime() : -1;
                    long allocated = mx instanceof com.sun.management.ThreadMXBean sun
                            ? sun.getCurrentThreadAllocatedBytes()
                            : -1;
                    return new long[] {cpu, allocated};
                },
                executor);
    }

    /** The versions of the resources of a kind being served, by {@code namespace/name}. */
    CompletableFuture<Map<String, String>> servedVersions(McpKind kind) {
        return CompletableFuture.supplyAsync(
                () -> {
                    Map<String, String> out = new LinkedHashMap<>();
                    for (Served s : tables.get(kind).all()) out.put(s.name(), s.version());
                    return out;
                },
                executor);
    }

    // ------------------------------------------------------------------ server thread

    private void enqueue(Runnable task) {
        try {
            executor.execute(() -> guarded(task));
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private static void guarded(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            log.error("MCP server task failed; state kept", e);
        }
    }

    private void becomeReady(String why) {
        if (ready) return;
        ready = true;
        log.info(
                "MCP server answering istiod ({}): {}",
                why,
                tables.entrySet().stream()
                        .map(e -> e.getKey().kind() + "=" + e.getValue().size())
                        .toList());
        for (McpStream stream : streams.values()) stream.push(null, null);
    }

    private void apply(MeshSnapshot snapshot) {
        long start = System.nanoTime();
        Collection<String> hosts;
        if (applied != null && snapshot.sequence() == applied.sequence() + 1) {
            TreeSet<String> h = new TreeSet<>(snapshot.removed());
            h.addAll(snapshot.changed());
            hosts = h;
        } else {
            TreeSet<String> h = new TreeSet<>(translations.keySet());
            h.addAll(snapshot.services().keySet());
            hosts = h;
        }
        Map<McpKind, Set<String>> changed = new EnumMap<>(McpKind.class);
        boolean freed = false;
        // removals first, so a name given up in this snapshot can be taken by another service in the same one
        for (String host : hosts) {
            if (snapshot.service(host) == null) freed |= applyService(host, null, changed, false);
        }
        for (String host : hosts) {
            MeshService service = snapshot.service(host);
            if (service != null) freed |= applyService(host, service, changed, false);
        }
        Set<String> examined = new HashSet<>(hosts);
        if (freed && !conflicted.isEmpty()) {
            for (String host : List.copyOf(conflicted)) {
                applyService(host, snapshot.service(host), changed, true);
                examined.add(host);
            }
        }
        applyRoutes(snapshot, examined, changed);
        applied = snapshot;
        for (McpKind kind : McpKind.values())
            metrics.resources(kind, tables.get(kind).size());
        metrics.skippedServices.set(refusedCount);
        metrics.droppedEndpoints.set(noteCount);
        metrics.apply().record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        if (!changed.isEmpty()) {
            if (log.isDebugEnabled()) log.debug("snapshot {} changed {}", snapshot, changed);
            for (McpStream stream : streams.values()) stream.push(changed.keySet(), changed);
        }
    }

    /**
     * Brings the Gateways, VirtualServices and DestinationRules up to date with the snapshot's routes: translated again
     * when the table changed or a host it names changed what istiod gets for it (present, served, ports); resources
     * with unchanged content keep their version and creation time.
     */
    private void applyRoutes(MeshSnapshot snapshot, Set<String> examined, Map<McpKind, Set<String>> changed) {
        if (!options.ingress().enabled()) return;
        IngressRouteTranslator.Catalog catalog = catalogView(snapshot);
        RouteTranslation previous = routes;
        boolean stale = previous == null
                || !previous.tableVersion().equals(snapshot.routes().version());
        if (!stale) {
            // only a host whose service was looked at in this snapshot can have changed for the routes
            SortedMap<String, Long> deps = previous.dependencies();
            boolean fewer = examined.size() < deps.size();
            for (String host : fewer ? examined : deps.keySet()) {
                Long before = deps.get(host);
                if (before == null || (!fewer && !examined.contains(host))) continue;
                if (IngressRouteTranslator.signature(catalog, host) != before) {
                    stale = true;
                    break;
                }
            }
        }
        if (!stale) return;
        RouteTranslation next;
        try {
            next = routeTranslator.translate(snapshot.routes(), catalog);
        } catch (RuntimeException e) {
            // a bug must not take the services down with it: keep the last good routes
            log.error(
                    "ingress routes version={}: translation failed; keeping the last ones",
                    snapshot.routes().version(),
                    e);
            return;
        }
        Map<McpKind, Set<String>> keep = serve(next.resources(), changed);
        if (previous != null) {
            for (McpResource r : previous.resources()) {
                if (keep.getOrDefault(r.kind(), Set.of()).contains(r.fullName())) continue;
                if (tables.get(r.kind()).remove(r.fullName()) != null) {
                    changed.computeIfAbsent(r.kind(), k -> new HashSet<>()).add(r.fullName());
                }
            }
        }
        routes = next;
        reportRoutes(previous, next);
    }

    /** What the route translation may know of the catalog: hosts, and the ports of those served as ServiceEntries. */
    private IngressRouteTranslator.Catalog catalogView(MeshSnapshot snapshot) {
        return new IngressRouteTranslator.Catalog() {
            @Override
            public List<dev.meshbridge.core.model.ServicePort> servedPorts(String host) {
                MeshService service = snapshot.service(host);
                Applied a = translations.get(host);
                return service == null || a == null || !a.served() ? null : service.ports();
            }

            @Override
            public boolean contains(String host) {
                return snapshot.service(host) != null;
            }
        };
    }

    private void reportRoutes(RouteTranslation previous, RouteTranslation next) {
        List<RouteTranslation.Skipped> oldSkipped = previous == null ? List.of() : previous.skipped();
        for (RouteTranslation.Skipped s : next.skipped()) {
            if (!oldSkipped.contains(s)) {
                log.warn("ingress host={} is not served to istiod, which would refuse it: {}", s.host(), s.reasons());
            }
        }
        for (RouteTranslation.Skipped s : oldSkipped) {
            if (next.skipped().stream().noneMatch(n -> n.host().equals(s.host()))) {
                log.info("ingress host={} is served to istiod again", s.host());
            }
        }
        List<String> oldUnavailable = previous == null ? List.of() : previous.unavailable();
        for (String u : next.unavailable()) {
            if (!oldUnavailable.contains(u)) log.info("ingress route answers 503 on istio gateways: {}", u);
        }
        for (String u : oldUnavailable) {
            if (!next.unavailable().contains(u)) log.info("ingress route no longer answers 503: {}", u);
        }
        List<String> oldNotes = previous == null ? List.of() : previous.notes();
        for (String n : next.notes()) {
            if (!oldNotes.contains(n)) log.warn("ingress: {}", n);
        }
        metrics.routesSkipped.set(next.skipped().size());
        metrics.routesUnavailable.set(next.unavailable().size());
        if (previous == null
                || !previous.tableVersion().equals(next.tableVersion())
                || previous.resources().size() != next.resources().size()) {
            log.info(
                    "ingress routes version={} served to istiod as {} resources ({} hosts skipped, {} destinations"
                            + " answering 503)",
                    next.tableVersion(),
                    next.resources().size(),
                    next.skipped().size(),
                    next.unavailable().size());
        }
    }

    /**
     * Brings one host's resources up to date.
     *
     * @param force translate again even when the service did not change (it was refused for a name now free)
     * @return true when some resource name was given up
     */
    private boolean applyService(String host, MeshService service, Map<McpKind, Set<String>> changed, boolean force) {
        Applied old = translations.get(host);
        if (service == null) {
            if (old == null) return false;
            translations.remove(host);
            conflicted.remove(host);
            account(old, -1);
            return replace(old, null, changed);
        }
        if (!force && old != null && old.serviceVersion().equals(service.version())) return false;
        ServiceTranslation next;
        try {
            next = claimNames(translator.translate(service));
        } catch (RuntimeException e) {
            // a bug must cost this one service, never the others
            log.error("service host={}: translation failed", host, e);
            next = new ServiceTranslation(
                    host,
                    service.version(),
                    service.origin().registry(),
                    List.of(),
                    List.of("translation failed: " + e),
                    List.of());
        }
        Applied entry = Applied.of(next);
        translations.put(host, entry);
        if (old != null) account(old, -1);
        account(entry, 1);
        report(old, entry);
        return replace(old, next, changed);
    }

    /** Refuses a translation whose resource names another host's resources already use. */
    private ServiceTranslation claimNames(ServiceTranslation t) {
        List<String> taken = new ArrayList<>();
        for (McpResource r : t.resources()) {
            Served existing = tables.get(r.kind()).get(r.fullName());
            if (existing != null && !existing.host().equals(t.host())) {
                taken.add(r.kind().kind() + " " + r.fullName() + " is already served for host " + existing.host()
                        + " (check the resourceName template)");
            }
        }
        if (taken.isEmpty()) {
            conflicted.remove(t.host());
            return t;
        }
        conflicted.add(t.host());
        return t.refused(taken);
    }

    private boolean replace(Applied old, ServiceTranslation next, Map<McpKind, Set<String>> changed) {
        Map<McpKind, Set<String>> keep = next == null ? new EnumMap<>(McpKind.class) : serve(next.resources(), changed);
        boolean freed = false;
        if (old != null) {
            for (Applied.Ref r : old.resources()) {
                if (keep.getOrDefault(r.kind(), Set.of()).contains(r.name())) continue;
                Served removed = tables.get(r.kind()).remove(r.name());
                if (removed != null) {
                    changed.computeIfAbsent(r.kind(), k -> new HashSet<>()).add(r.name());
                    freed = true;
                }
            }
        }
        return freed;
    }

    /**
     * Puts resources into their tables: a resource whose version is served already is left alone, a changed one keeps
     * its creation time, a new one gets the current time.
     *
     * @return the names of the given resources by kind
     */
    private Map<McpKind, Set<String>> serve(List<McpResource> resources, Map<McpKind, Set<String>> changed) {
        Map<McpKind, Set<String>> names = new EnumMap<>(McpKind.class);
        Timestamp now = null;
        for (McpResource r : resources) {
            names.computeIfAbsent(r.kind(), k -> new HashSet<>()).add(r.fullName());
            ResourceTable table = tables.get(r.kind());
            Served existing = table.get(r.fullName());
            if (existing != null && existing.version().equals(r.version())) continue;
            Timestamp created;
            if (existing != null) {
                created = existing.createTime();
            } else {
                if (now == null) now = timestamp(clock.instant());
                created = now;
            }
            table.put(new Served(r.fullName(), r.version(), r.host(), created, r.toAny(created)));
            changed.computeIfAbsent(r.kind(), k -> new HashSet<>()).add(r.fullName());
        }
        return names;
    }

    private void account(Applied t, int sign) {
        if (!t.served()) refusedCount += sign;
        noteCount += (long) sign * t.notes().size();
    }

    private void report(Applied old, Applied next) {
        if (!next.served()) {
            metrics.skipped();
            if (old == null || !old.problems().equals(next.problems())) {
                log.warn(
                        "service host={} registry={} is not served to istiod, which would refuse it: {}",
                        next.host(),
                        next.registry(),
                        next.problems());
            }
        } else if (old != null && !old.served()) {
            log.info("service host={} registry={} is served to istiod again", next.host(), next.registry());
        }
        for (String note : next.notes()) {
            if (old == null || !old.notes().contains(note)) {
                log.warn("service host={} registry={}: {}", next.host(), next.registry(), note);
            }
        }
    }

    private static Timestamp timestamp(Instant t) {
        return Timestamp.newBuilder()
                .setSeconds(t.getEpochSecond())
                .setNanos(t.getNano())
                .build();
    }

    private void addStream(McpStream stream) {
        if (state.get() == State.CLOSED) {
            stream.complete(Status.UNAVAILABLE.withDescription("meshbridge is shutting down"));
            return;
        }
        streams.put(stream.id, stream);
        metrics.clients.set(streams.size());
        log.debug("MCP stream id={} peer={} protocol={} opened", stream.id, stream.peer, stream.protocol());
    }

    private void removeStream(McpStream stream, String why) {
        stream.markClosed();
        if (streams.remove(stream.id) != null) {
            metrics.clients.set(streams.size());
            log.info("istiod client={} peer={} node={} disconnected: {}", stream.id, stream.peer, stream.nodeId(), why);
        }
    }

    /** What the server keeps of a translation once applied: names, not bodies (those live in the tables). */
    private record Applied(
            String host,
            String serviceVersion,
            String registry,
            List<Ref> resources,
            List<String> problems,
            List<String> notes) {

        record Ref(McpKind kind, String name) {}

        static Applied of(ServiceTranslation t) {
            List<Ref> refs = new ArrayList<>(t.resources().size());
            for (McpResource r : t.resources()) refs.add(new Ref(r.kind(), r.fullName()));
            return new Applied(t.host(), t.serviceVersion(), t.registry(), List.copyOf(refs), t.problems(), t.notes());
        }

        boolean served() {
            return problems.isEmpty();
        }
    }

    // ------------------------------------------------------------------ /debug/mcp

    /** The page as JSON-ready records. */
    public record DebugView(
            String listening,
            boolean ready,
            String namespace,
            String endpointMode,
            long snapshotSequence,
            String catalogVersion,
            Map<String, KindView> resources,
            List<ClientView> clients,
            List<ServiceView> skipped,
            List<ServiceView> droppedEndpoints,
            String routesVersion,
            List<RouteView> routesSkipped,
            List<String> routesUnavailable,
            List<ServedView> served,
            boolean servedTruncated) {}

    /** Ingress resources of a host that are not served, and why. */
    public record RouteView(String host, String name, List<String> reasons) {}

    /** The last NACK on a type. */
    public record Nack(String nonce, String version, String message, Instant at) {}

    /** One subscribed type, as {@code /debug/mcp} shows it. */
    public record TypeView(
            String typeUrl,
            String kind,
            Instant subscribedAt,
            int resourcesSent,
            String lastSentVersion,
            String lastSentNonce,
            Instant lastSentAt,
            String lastAckedVersion,
            Instant lastAckedAt,
            boolean inSync,
            long acks,
            long nacks,
            Nack lastNack) {}

    /** One client, as {@code /debug/mcp} shows it. */
    public record ClientView(
            long id,
            String protocol,
            String peer,
            String nodeId,
            Map<String, String> nodeMetadata,
            Instant connectedAt,
            List<TypeView> types) {}

    /** Resources of one kind. */
    public record KindView(int count, String version) {}

    /** A service that is not served, or whose instances were partly left out, and why. */
    public record ServiceView(String host, String registry, List<String> reasons) {}

    /** One served resource. */
    public record ServedView(String kind, String name, String version, String host, Instant createTime) {}

    private Object debugView(Map<String, String> query) {
        try {
            return CompletableFuture.supplyAsync(() -> buildDebugView(query), executor)
                    .get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of("error", "interrupted");
        } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
            return Map.of("state", state.get().name().toLowerCase(Locale.ROOT), "error", e.toString());
        }
    }

    private DebugView buildDebugView(Map<String, String> query) {
        String kindFilter = query.getOrDefault("kind", "");
        String hostFilter = query.getOrDefault("host", "");
        int limit = DEFAULT_DEBUG_LIMIT;
        try {
            if (query.containsKey("limit")) limit = Math.max(0, Integer.parseInt(query.get("limit")));
        } catch (NumberFormatException e) {
            // keep the default
        }
        Map<String, KindView> kinds = new LinkedHashMap<>();
        List<ServedView> served = new ArrayList<>();
        boolean truncated = false;
        for (Map.Entry<McpKind, ResourceTable> e : tables.entrySet()) {
            kinds.put(
                    e.getKey().kind(),
                    new KindView(e.getValue().size(), e.getValue().version()));
            if (!kindFilter.isEmpty() && !kindFilter.equalsIgnoreCase(e.getKey().kind())) continue;
            for (Served s : e.getValue().all()) {
                if (!hostFilter.isEmpty() && !s.host().contains(hostFilter)) continue;
                if (served.size() >= limit) {
                    truncated = true;
                    break;
                }
                Timestamp c = s.createTime();
                served.add(new ServedView(
                        e.getKey().kind(),
                        s.name(),
                        s.version(),
                        s.host(),
                        Instant.ofEpochSecond(c.getSeconds(), c.getNanos())));
            }
        }
        List<ServiceView> skipped = new ArrayList<>();
        List<ServiceView> dropped = new ArrayList<>();
        for (Applied t : new TreeMap<>(translations).values()) {
            if (!hostFilter.isEmpty() && !t.host().contains(hostFilter)) continue;
            if (!t.served()) skipped.add(new ServiceView(t.host(), t.registry(), t.problems()));
            if (!t.notes().isEmpty()) dropped.add(new ServiceView(t.host(), t.registry(), t.notes()));
        }
        List<RouteView> routesSkipped = new ArrayList<>();
        List<String> routesUnavailable = new ArrayList<>();
        if (routes != null) {
            for (RouteTranslation.Skipped s : routes.skipped()) {
                if (hostFilter.isEmpty() || s.host().contains(hostFilter)) {
                    routesSkipped.add(new RouteView(s.host(), s.name(), s.reasons()));
                }
            }
            for (String u : routes.unavailable()) {
                if (hostFilter.isEmpty() || u.contains(hostFilter)) routesUnavailable.add(u);
            }
        }
        List<ClientView> clients = new ArrayList<>();
        for (McpStream s : streams.values()) clients.add(s.view());
        Server s = server;
        return new DebugView(
                options.bindAddress() + ":" + (s == null ? options.port() : s.getPort()),
                ready,
                options.namespace(),
                modeName(),
                applied == null ? -1 : applied.sequence(),
                applied == null ? "" : applied.version(),
                kinds,
                clients,
                skipped,
                dropped,
                routes == null ? "" : routes.tableVersion(),
                routesSkipped,
                routesUnavailable,
                served,
                truncated);
    }

    // ------------------------------------------------------------------ gRPC

    private final class AdsService extends AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase {

        @Override
        public StreamObserver<DiscoveryRequest> streamAggregatedResources(
                StreamObserver<DiscoveryResponse> responseObserver) {
            ServerCallStreamObserver<DiscoveryResponse> observer =
                    (ServerCallStreamObserver<DiscoveryResponse>) responseObserver;
            SotwStream stream = new SotwStream(streamIds.incrementAndGet(), peer(), observer, streamContext);
            return wire(stream, observer, stream::onRequest);
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaAggregatedResources(
                StreamObserver<DeltaDiscoveryResponse> responseObserver) {
            ServerCallStreamObserver<DeltaDiscoveryResponse> observer =
                    (ServerCallStreamObserver<DeltaDiscoveryResponse>) responseObserver;
            DeltaStream stream = new DeltaStream(streamIds.incrementAndGet(), peer(), observer, streamContext);
            return wire(stream, observer, stream::onRequest);
        }

        /** Connects a stream to gRPC: callbacks only enqueue work for the server's thread. */
        private <Q> StreamObserver<Q> wire(
                McpStream stream, ServerCallStreamObserver<?> observer, Consumer<Q> onRequest) {
            observer.setOnReadyHandler(() -> enqueue(stream::resume));
            observer.setOnCancelHandler(() -> enqueue(() -> removeStream(stream, "cancelled by the client")));
            enqueue(() -> addStream(stream));
            return new StreamObserver<>() {
                @Override
                public void onNext(Q request) {
                    enqueue(() -> onRequest.accept(request));
                }

                @Override
                public void onError(Throwable t) {
                    enqueue(() -> removeStream(stream, Status.fromThrowable(t).toString()));
                }

                @Override
                public void onCompleted() {
                    enqueue(() -> {
                        stream.complete(Status.OK);
                        removeStream(stream, "client closed the stream");
                    });
                }
            };
        }

        private String peer() {
            String p = PEER.get();
            return p == null ? "unknown" : p;
        }
    }

    /** Puts the client's address into the call's context, for logs and {@code /debug/mcp}. */
    private static final class PeerInterceptor implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            Object address = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            String peer = address instanceof InetSocketAddress a
                    ? a.getHostString() + ":" + a.getPort()
                    : String.valueOf(address);
            Context context = Context.current().withValue(PEER, peer);
            return Contexts.interceptCall(context, call, headers, next);
        }
    }
}
