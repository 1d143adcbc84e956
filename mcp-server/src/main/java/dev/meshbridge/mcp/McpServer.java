package dev.meshbridge.mcp;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import dev.meshbridge.ads.AdsClientView;
import dev.meshbridge.ads.AdsEngine;
import dev.meshbridge.ads.AdsOptions;
import dev.meshbridge.ads.AdsServer;
import dev.meshbridge.ads.PackedBytes;
import dev.meshbridge.ads.ServerTls;
import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.util.Hash64;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 *   <li>the protocol is the ADS engine's ({@link AdsServer}), the same as the xDS server's: SotW, which istiod uses,
 *       and Delta; the kinds it produces under whichever API version was requested, every other type URL (istiod
 *       asks for all of its config types and {@code core/v1alpha1/MeshConfig}) with no resources;
 *   <li>first answers are held until {@link #markCatalogReady()} or {@link McpOptions#initialSyncTimeout()}, so an
 *       istiod connected to a restarting bridge does not see a half-filled catalog and drop the rest;
 *   <li>pushes to one istiod are paced ({@link McpOptions#minPushInterval()}): a burst of catalog changes goes out
 *       as a few pushes of the merged state, not one whole-set push per change;
 *   <li>a resource's version changes only with its content, and its bytes are the same in every replica (no
 *       {@code create_time} is set: a replica's own clock would make them differ);
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
    private static final int DEFAULT_DEBUG_LIMIT = 200;

    /**
     * The MCP server's I/O threads: its clients are a few istiods, each one connection that a push fills with the
     * whole set, so one thread moves their bytes and more would only wait.
     */
    static final int MCP_IO_THREADS = 1;

    /** The one node role of the MCP server's clients. */
    private static final List<String> ROLES = List.of("istiod");

    private final McpOptions options;
    private final Clock clock;
    private final ServiceEntryTranslator translator;
    private final IngressRouteTranslator routeTranslator;
    private final McpMetrics metrics;
    private final AdsServer ads;
    private final AdsEngine engine;

    // --- owned by the serving thread ---
    private final Map<String, Applied> translations = new HashMap<>();

    private final Set<String> conflicted = new HashSet<>();
    /** Packs every served resource's bytes (scratch arrays reused from one resource to the next). */
    private final PackedBytes packer = new PackedBytes(ServiceEntryTranslator.DICTIONARY);
    /** Translations made over the served bytes of the service's last one (tests check the path is taken). */
    private long reused;

    private MeshSnapshot applied;
    /** The newest snapshot taken in and not applied yet (paced, see {@link #take}), or null. */
    private MeshSnapshot waiting;
    /** The hosts changed or gone in the snapshots from {@link #applied} to {@link #waiting}. */
    private Set<String> waitingHosts = new HashSet<>();
    /** A snapshot waits that did not follow the one before: its application compares every host. */
    private boolean waitingAll;

    private long waitingEventNanos;
    /** When the last snapshot was applied, on the pacing clock; long ago at first. */
    private long lastApplyMillis = Long.MIN_VALUE / 4;

    private boolean applyScheduled;
    private RouteTranslation routes;
    private int refusedCount;
    private long noteCount;

    public McpServer(McpOptions options, MeterRegistry meterRegistry) {
        this(options, meterRegistry, Clock.systemUTC());
    }

    /** @param clock the pacing of pushes and the debug records' times (tests drive it) */
    McpServer(McpOptions options, MeterRegistry meterRegistry, Clock clock) {
        this.options = Objects.requireNonNull(options, "options");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.translator = new ServiceEntryTranslator(options);
        this.routeTranslator = new IngressRouteTranslator(options);
        this.metrics = new McpMetrics(Objects.requireNonNull(meterRegistry, "meterRegistry"));
        this.ads = new AdsServer(
                new AdsOptions(
                        "mcp",
                        options.bindAddress(),
                        options.port(),
                        options.keepaliveTime(),
                        options.maxConnectionAge(),
                        options.limits(),
                        options.initialSyncTimeout(),
                        options.minPushInterval(),
                        MCP_IO_THREADS),
                McpKind.TYPES,
                meterRegistry,
                clock);
        ads.tls(options.tls());
        this.engine = ads.engine();
        engine.roles(node -> 0, ROLES);
        engine.beforeFirstRequest(this::applyWaiting);
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
        ads.start();
        log.info(
                "MCP server listening on {}:{} namespace={} endpointMode={} minPushInterval={} (holding answers until"
                        + " the catalog is ready, at most {})",
                options.bindAddress(),
                ads.port(),
                options.namespace(),
                modeName(),
                options.minPushInterval(),
                options.initialSyncTimeout());
        return this;
    }

    private String modeName() {
        return options.endpointMode().name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The port the server listens on (the actual one when configured as 0); the configured port before start. */
    public int port() {
        int p = ads.port();
        return p < 0 ? options.port() : p;
    }

    /**
     * Tells the server the catalog holds every registry's first sync, so it may answer istiod. Call it after the
     * aggregator published that state, e.g. {@code aggregator.flushNow().thenRun(mcp::markCatalogReady)}.
     */
    public void markCatalogReady() {
        ads.markReady("catalog ready");
    }

    /**
     * Receives catalog snapshots on the aggregator's thread: a small one is applied there when the serving thread is
     * idle, the rest on the serving thread ({@link AdsServer#executeSnapshot}).
     */
    @Override
    public void onSnapshot(MeshSnapshot snapshot) {
        ads.executeSnapshot(snapshot, () -> take(snapshot));
    }

    /**
     * The most services a snapshot may change for its application to be paced ({@link #take}); a larger one (a
     * registry's sync, an ingest) is applied at once.
     */
    static final int PACED_SERVICES = 64;

    /**
     * Takes a snapshot in (serving thread). Pushes to istiod go out at most once per {@link
     * McpOptions#minPushInterval()} anyway, so a small snapshot that comes less than that after the last application is
     * not applied at once: it waits, with the ones after it, until the interval has passed since that application,
     * and they are applied together: one ServiceEntry translation per changed service per interval, where one per
     * change cost about a third of a lone change's CPU (issue 22). A snapshot after a quiet interval is applied at once
     * (so is a large one, a route change, or any when the interval is 0), and so is what waits when a client asks for
     * something for the first time ({@link AdsEngine#beforeFirstRequest}), when {@link #idle()} is called or the
     * debug page read. istiod sees the same pushes, at the same times or sooner: its stream is paced from the
     * last push, which follows the last application.
     */
    private void take(MeshSnapshot snapshot) {
        takenSequence = snapshot.sequence();
        if (waiting == null) waitingEventNanos = snapshot.firstEventNanos();
        collect(snapshot);
        waiting = snapshot;
        long pace = options.minPushInterval().toMillis();
        boolean small = !snapshot.routesChanged()
                && snapshot.changed().size() + snapshot.removed().size() <= PACED_SERVICES;
        long now = clock.millis();
        if (pace <= 0 || !small || now - lastApplyMillis >= pace) {
            applyWaiting();
            return;
        }
        metrics.pacedSnapshots.increment();
        if (!applyScheduled) {
            applyScheduled = true;
            long delay = Math.max(0, lastApplyMillis + pace - now);
            ads.schedule(this::applyScheduled, java.time.Duration.ofMillis(delay));
        }
    }

    /**
     * Adds a snapshot's changed and removed hosts to those of the snapshots taken since the last application; when it
     * does not follow the one before, its application compares every host.
     */
    private void collect(MeshSnapshot snapshot) {
        MeshSnapshot before = waiting != null ? waiting : applied;
        if (before != null && snapshot.sequence() == before.sequence() + 1) {
            waitingHosts.addAll(snapshot.changed());
            waitingHosts.addAll(snapshot.removed());
        } else {
            waitingAll = true;
        }
    }

    private void applyScheduled() {
        applyScheduled = false;
        applyWaiting();
    }

    /** Applies the newest snapshot taken in, with every one that waited before it, if any (serving thread). */
    private void applyWaiting() {
        MeshSnapshot snapshot = waiting;
        if (snapshot == null) return;
        Collection<String> hosts = waitingAll ? null : new TreeSet<>(waitingHosts);
        waiting = null;
        waitingAll = false;
        if (waitingHosts.size() > PACED_SERVICES * 4) waitingHosts = new HashSet<>();
        else waitingHosts.clear();
        engine.applyChange(waitingEventNanos, () -> apply(snapshot, hosts));
        lastApplyMillis = clock.millis();
    }

    /**
     * Sends every istiod to another replica (graceful shutdown): GOAWAY, then every stream ends with
     * {@code UNAVAILABLE}; see {@link AdsServer#drain()}.
     */
    public CompletableFuture<Void> drain() {
        return ads.drain();
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
        ads.close();
    }

    // ------------------------------------------------------------------ package-private views for tests and benchmarks

    /** Completes once the server has applied everything handed to it so far and pushed what that changed. */
    public CompletableFuture<Void> idle() {
        ads.execute(this::applyWaiting);
        return ads.idle();
    }

    /**
     * The sequence of the last snapshot applied; -1 before the first. Reading it costs the serving thread nothing
     * (unlike {@link #idle()}, which queues work on it), so a benchmark can wait on it without adding to what it
     * measures.
     */
    public long servedSequence() {
        return servedSequence;
    }

    private volatile long servedSequence = -1;

    /**
     * The sequence of the last snapshot taken in: applied, or waiting for its paced application, which comes at most
     * {@link McpOptions#minPushInterval()} after the last one (see {@link #take}); -1 before the first. Read as
     * {@link #servedSequence()}.
     */
    public long takenSequence() {
        return takenSequence;
    }

    private volatile long takenSequence = -1;

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
                ads::execute);
    }

    /** How many translations so far were made over the served bytes of the service's last translation. */
    CompletableFuture<Long> reusedTranslations() {
        return CompletableFuture.supplyAsync(() -> reused, ads::execute);
    }

    /** The versions of the resources of a kind being served, by {@code namespace/name}. */
    CompletableFuture<Map<String, String>> servedVersions(McpKind kind) {
        return CompletableFuture.supplyAsync(
                () -> {
                    Map<String, String> out = new TreeMap<>();
                    engine.forEach(kind.resourceType(), r -> out.put(r.name(), ((Served) r).version()));
                    return out;
                },
                ads::execute);
    }

    // ------------------------------------------------------------------ server thread

    /**
     * A resource as the engine serves it: the wire form, packed, with what the server needs to keep (its host, for name
     * conflicts and the debug page). Kept small, one per served resource: the bytes are held in {@link PackedBytes}'
     * compact form (a ServiceEntry's endpoints repeat their labels, ports and locality: about a fifth of its bytes are
     * kept) and unpacked when a response needs them; the version string is made from its hash when asked for, the Any
     * is made when a response needs it and names its type with the one shared type URL string, and no creation time is
     * held (none is sent, so that every replica sends the same bytes).
     *
     * @param packed the serialized MCP {@code Resource} (the value of the Any clients receive), packed
     */
    record Served(String name, long versionHash, String host, byte[] packed) implements dev.meshbridge.ads.Resource {

        /** @param packer the serving thread's packer */
        static Served of(McpResource r, PackedBytes packer) {
            // the Resource's bytes written from its parts (the body is not serialized a second time), then packed
            byte[] wire = r.resourceArray();
            return new Served(r.fullName(), hashOf(r.version()), r.host(), packer.pack(wire, wire.length));
        }

        /** The serialized MCP {@code Resource}, unpacked (a new copy at each call). */
        ByteString wire() {
            return UnsafeByteOperations.unsafeWrap(
                    PackedBytes.unpack(packed, ServiceEntryTranslator.DICTIONARY)); // the array is never touched again
        }

        /** The resource as clients receive it, made when a response needs it (held, it cost 40 bytes each). */
        @Override
        public Any any() {
            return Any.newBuilder()
                    .setTypeUrl(McpResource.RESOURCE_TYPE_URL)
                    .setValue(wire())
                    .build();
        }

        /** Whole-set responses unpack it straight into the transport's buffers (never made as an Any there). */
        @Override
        public byte[] packedValue() {
            return packed;
        }

        @Override
        public PackedBytes.Dictionary packedWith() {
            return ServiceEntryTranslator.DICTIONARY;
        }

        @Override
        public String anyTypeUrl() {
            return McpResource.RESOURCE_TYPE_URL;
        }

        /** The engine's version hash of a resource version (never 0 or {@code Long.MIN_VALUE}, which it reserves). */
        static long hashOf(String version) {
            long hash = Long.parseUnsignedLong(version, 16);
            return hash == 0 || hash == Long.MIN_VALUE ? 1 : hash;
        }

        /** The version, as the resource's metadata carries it (but for the two reserved hashes, 1 in 2^63 each). */
        String version() {
            return Hash64.toHex(versionHash);
        }

        /** The Delta wrapper, made when a response needs it (not held: one per resource, for every resource). */
        @Override
        public io.envoyproxy.envoy.service.discovery.v3.Resource delta() {
            return io.envoyproxy.envoy.service.discovery.v3.Resource.newBuilder()
                    .setName(name)
                    .setVersion(version())
                    .setResource(any())
                    .build();
        }

        @Override
        public boolean wildcard() {
            return true;
        }
    }

    private Served served(McpKind kind, String name) {
        return (Served) engine.get(kind.resourceType(), name);
    }

    /**
     * @param changedHosts the hosts that changed or went since the snapshot applied last (sorted), or null when that
     *     is not known: every host is compared
     */
    private void apply(MeshSnapshot snapshot, Collection<String> changedHosts) {
        long start = System.nanoTime();
        Collection<String> hosts = changedHosts;
        if (hosts == null) {
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
        servedSequence = snapshot.sequence();
        engine.publishCounts();
        metrics.skippedServices.set(refusedCount);
        metrics.droppedEndpoints.set(noteCount);
        metrics.apply().record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        if (!changed.isEmpty() && log.isDebugEnabled()) log.debug("snapshot {} changed {}", snapshot, changed);
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
                if (engine.remove(r.kind().resourceType(), r.fullName())) {
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
        ServiceEntryTranslator.Reuse reuse = null;
        try {
            ServiceEntryTranslator.Translated t = translator.translate(service, reusableFor(old));
            next = claimNames(t.translation());
            if (next.served()) reuse = t.reuse();
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
        // no copy of the ServiceEntry's bytes is kept for the next translation: the served resource's, unpacked then
        ServiceEntryTranslator.Reuse kept = reuse == null
                ? null
                : reuse.atRest(Served.hashOf(next.resources().get(0).version()));
        Applied entry = Applied.of(next, kept);
        translations.put(host, entry);
        if (old != null) account(old, -1);
        account(entry, 1);
        report(old, entry);
        return replace(old, next, changed);
    }

    /**
     * What the last translation of a host kept for the next one, over the served ServiceEntry's bytes again; null when
     * there is none or the resource served under its name is no longer the one it was kept for.
     */
    private ServiceEntryTranslator.Reuse reusableFor(Applied old) {
        ServiceEntryTranslator.Reuse kept = old == null ? null : old.reuse();
        if (kept == null) return null;
        for (Applied.Ref r : old.resources()) {
            if (r.kind() != McpKind.SERVICE_ENTRY) continue;
            Served s = served(McpKind.SERVICE_ENTRY, r.name());
            if (s == null || s.versionHash() != kept.servedHash()) return null;
            ByteString wire = s.wire();
            if (wire.size() < kept.size()) return null;
            reused++;
            return kept.withBytes(wire.substring(wire.size() - kept.size()));
        }
        return null;
    }

    /** Refuses a translation whose resource names another host's resources already use. */
    private ServiceTranslation claimNames(ServiceTranslation t) {
        List<String> taken = new ArrayList<>();
        for (McpResource r : t.resources()) {
            Served existing = served(r.kind(), r.fullName());
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
                if (engine.remove(r.kind().resourceType(), r.name())) {
                    changed.computeIfAbsent(r.kind(), k -> new HashSet<>()).add(r.name());
                    freed = true;
                }
            }
        }
        return freed;
    }

    /**
     * Puts resources into their tables: a resource whose version is served already is left alone. No resource carries a
     * {@code create_time}, so every replica serves the same bytes.
     *
     * @return the names of the given resources by kind
     */
    private Map<McpKind, Set<String>> serve(List<McpResource> resources, Map<McpKind, Set<String>> changed) {
        Map<McpKind, Set<String>> names = new EnumMap<>(McpKind.class);
        for (McpResource r : resources) {
            names.computeIfAbsent(r.kind(), k -> new HashSet<>()).add(r.fullName());
            // the name looked up once in a table of 100,000s, for the served one and for the put
            int slot = engine.slot(r.kind().resourceType(), r.fullName());
            Served existing = (Served) engine.get(r.kind().resourceType(), slot);
            if (existing != null && existing.versionHash() == Served.hashOf(r.version())) continue;
            // no create_time: a time of this replica's own would make replicas send different bytes
            engine.put(r.kind().resourceType(), slot, Served.of(r, packer), AdsEngine.ALL_ROLES);
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

    /** What the server keeps of a translation once applied: names, not bodies (those live in the tables). */
    private record Applied(
            String host,
            String serviceVersion,
            String registry,
            List<Ref> resources,
            List<String> problems,
            List<String> notes,
            ServiceEntryTranslator.Reuse reuse) {

        record Ref(McpKind kind, String name) {}

        /**
         * @param reuse what the host's next translation may reuse (see {@link ServiceEntryTranslator.Reuse}), at rest;
         *     null for nothing. Checked against the resource served when it is used.
         */
        static Applied of(ServiceTranslation t, ServiceEntryTranslator.Reuse reuse) {
            List<Ref> refs = new ArrayList<>(t.resources().size());
            for (McpResource r : t.resources()) refs.add(new Ref(r.kind(), r.fullName()));
            return new Applied(
                    t.host(), t.serviceVersion(), t.registry(), List.copyOf(refs), t.problems(), t.notes(), reuse);
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
            List<AdsClientView> clients,
            List<ServiceView> skipped,
            List<ServiceView> droppedEndpoints,
            String routesVersion,
            List<RouteView> routesSkipped,
            List<String> routesUnavailable,
            List<ServedView> served,
            boolean servedTruncated,
            ServerTls.View tls) {}

    /** Ingress resources of a host that are not served, and why. */
    public record RouteView(String host, String name, List<String> reasons) {}

    /** Resources of one kind. */
    public record KindView(int count, String version) {}

    /** A service that is not served, or whose instances were partly left out, and why. */
    public record ServiceView(String host, String registry, List<String> reasons) {}

    /** One served resource. */
    public record ServedView(String kind, String name, String version, String host, Instant createTime) {}

    private Object debugView(Map<String, String> query) {
        try {
            return CompletableFuture.supplyAsync(
                            () -> {
                                applyWaiting();
                                return buildDebugView(query);
                            },
                            ads::execute)
                    .get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of("error", "interrupted");
        } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
            return Map.of("error", e.toString());
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
        for (McpKind kind : McpKind.values()) {
            List<Served> all = new ArrayList<>();
            engine.forEach(kind.resourceType(), r -> all.add((Served) r));
            all.sort(java.util.Comparator.comparing(Served::name));
            long sum = 0;
            for (Served r : all) sum += Hash64.mix(r.versionHash() ^ Hash64.of(r.name()));
            kinds.put(kind.kind(), new KindView(all.size(), Hash64.toHex(Hash64.mix(sum))));
            if (!kindFilter.isEmpty() && !kindFilter.equalsIgnoreCase(kind.kind())) continue;
            for (Served r : all) {
                if (!hostFilter.isEmpty() && !r.host().contains(hostFilter)) continue;
                if (served.size() >= limit) {
                    truncated = true;
                    break;
                }
                // no creation time is sent (replicas would differ), so there is none to show
                served.add(new ServedView(kind.kind(), r.name(), r.version(), r.host(), null));
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
        List<AdsClientView> clients = engine.clients("", "");
        return new DebugView(
                options.bindAddress() + ":" + port(),
                engine.ready(),
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
                truncated,
                ads.tlsView());
    }
}
