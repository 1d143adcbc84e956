package dev.meshbridge.xds;

import dev.meshbridge.ads.AdsOptions;
import dev.meshbridge.ads.AdsServer;
import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.listener.v3.ListenerDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.RouteDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.secret.v3.SecretDiscoveryServiceGrpc;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.slf4j.LoggerFactory;

/**
 * Serves the catalog and the Ingress routes over xDS to Envoy and proxyless gRPC clients: ADS and the per-type CDS,
 * EDS, LDS, RDS and SDS services, each in SotW and Delta form, on the ADS engine ({@link AdsServer}).
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>subscribe it to a {@code ServiceAggregator}; each snapshot is translated per changed service ({@link
 *       EnvoyTranslator}) on the server's own thread, never on the aggregator's;
 *   <li>a change to one instance sends only that service's ClusterLoadAssignment, to the streams subscribed to it;
 *       CDS, LDS, RDS and SDS are pushed only when services or ports appear or go, or the Ingress routes change
 *       ({@link EnvoyIngressTranslator});
 *   <li>first answers are held until {@link #markCatalogReady()} (the bridge calls it once every registry has synced
 *       or passed its sync timeout) or {@link XdsOptions#initialSyncTimeout()}; the protocol policy (unknown types,
 *       absent resources, NACKs, make-before-break removals) is the engine's, the same as the MCP server's;
 *   <li>a node's role ({@link NodeRoles}) decides which listeners its wildcard subscription includes: the Ingress
 *       listeners (gateways only) or the outbound listeners ({@link EnvoySidecarTranslator}, sidecars only);
 *   <li>{@link #start()} once; {@link #close()} stops it, and a second close does nothing.
 * </ol>
 */
public final class XdsServer implements SnapshotListener, AutoCloseable {

    private final XdsOptions options;
    private final AdsServer ads;
    private final XdsCore core;
    private volatile long servedSequence = -1;

    public XdsServer(XdsOptions options, MeterRegistry registry) {
        this(options, new EnvoyTranslator(options.translatorOptions()), registry);
    }

    public XdsServer(XdsOptions options, EnvoyTranslator translator, MeterRegistry registry) {
        this.options = Objects.requireNonNull(options, "options");
        this.ads = new AdsServer(
                new AdsOptions(
                        "xds",
                        options.bindAddress(),
                        options.port(),
                        options.keepaliveTime(),
                        options.maxConnectionAge(),
                        options.limits(),
                        options.initialSyncTimeout(),
                        Duration.ZERO,
                        options.ioThreads()),
                XdsType.TYPES,
                registry);
        ads.tls(options.tls());
        ads.engine().roles(options.nodeRoles()::role, NodeRoles.NAMES);
        // Ingress TLS private keys go only to the clients allowed to have them (until clients are authenticated)
        ads.engine().restrict(XdsType.SECRET.resourceType(), options.sdsClients()::contains);
        this.core = new XdsCore(
                translator,
                options.ingress().enabled() ? new EnvoyIngressTranslator(translator, options.ingress()) : null,
                options.sidecar().enabled() ? new EnvoySidecarTranslator(translator, options.sidecar()) : null,
                new XdsMetrics(registry),
                ads.engine());
        ads.addService(new Cds())
                .addService(new Eds())
                .addService(new Lds())
                .addService(new Rds())
                .addService(new Sds());
    }

    /** Binds and starts serving. */
    public XdsServer start() throws IOException {
        ads.start();
        LoggerFactory.getLogger(XdsServer.class)
                .info(
                        "xds server listening on {}:{} (first answers held until the catalog is ready, at most {})",
                        options.bindAddress(),
                        port(),
                        options.initialSyncTimeout());
        ads.execute(core::warmUp);
        return this;
    }

    /**
     * Sends every client to another replica (graceful shutdown): GOAWAY, then every stream ends with
     * {@code UNAVAILABLE}; see {@link AdsServer#drain()}.
     */
    public CompletableFuture<Void> drain() {
        return ads.drain();
    }

    /** The port the server listens on (the actual one when configured as 0); -1 before start. */
    public int port() {
        return ads.port();
    }

    public XdsOptions options() {
        return options;
    }

    /**
     * Lets the server answer: the catalog holds every registry's first sync (or their sync timeouts passed). Call it
     * after the aggregator published that state, e.g. {@code aggregator.flushNow().thenRun(xds::markCatalogReady)}.
     */
    public void markCatalogReady() {
        ads.markReady("catalog ready");
    }

    @Override
    public void onSnapshot(MeshSnapshot snapshot) {
        Map<String, MeshService> before = handedServices;
        handedServices = snapshot.servicesMap();
        handedSequence.accumulateAndGet(snapshot.sequence(), Math::max);
        Runnable task = () -> {
            boolean later = handedSequence.get() > snapshot.sequence();
            ads.engine().applyChange(snapshot.firstEventNanos(), () -> core.applySnapshot(snapshot, later));
            if (!core.sidecarPending()) {
                servedSequence = snapshot.sequence();
            } else if (!later) {
                scheduleSidecar(snapshot.firstEventNanos());
            }
        };
        // making the sidecar's resources again takes time in proportion to the catalog (seconds at 100,000
        // services): never on the aggregator's thread, which would hold up the next events and the other server
        if (options.sidecar().enabled() && mayChangeSidecar(snapshot, before)) ads.execute(task);
        else ads.executeSnapshot(snapshot, task);
    }

    /** The services of the last snapshot handed over (set by the aggregator's thread, which hands them one at a time). */
    private volatile Map<String, MeshService> handedServices;

    /**
     * Whether a snapshot may change what the sidecar's outbound routes are made from (see {@link
     * EnvoySidecarTranslator#entry}): a service came or went, or changed its ports, labels or sources. An endpoint
     * change, the usual lone change, does not.
     */
    static boolean mayChangeSidecar(MeshSnapshot snapshot, Map<String, MeshService> before) {
        if (before == null || !snapshot.removed().isEmpty()) return true;
        for (String host : snapshot.changed()) {
            MeshService was = before.get(host);
            MeshService now = snapshot.service(host);
            if (was == null || now == null) return true;
            if (!was.ports().equals(now.ports())
                    || !was.labels().equals(now.labels())
                    || !was.sources().equals(now.sources())) return true;
        }
        return false;
    }

    /**
     * The ticket of the making of the sidecar's resources that is scheduled, and when it runs ({@link System#nanoTime()};
     * {@link Long#MAX_VALUE}: none). Serving tasks only, under the serving lock.
     */
    private long sidecarTicket;

    private long sidecarDueNanos = Long.MAX_VALUE;

    /**
     * Makes the sidecar's resources that the last snapshot put off once their spacing has passed ({@link
     * XdsCore#sidecarDelayNanos}: at once when a burst just ended), unless a later snapshot comes first (it decides
     * again); the served sequence follows once they are served. A making due sooner than the one scheduled replaces
     * it: the end of an ingest does not wait for a spacing scheduled during it.
     */
    private void scheduleSidecar(long eventNanos) {
        long delay = Math.max(0, core.sidecarDelayNanos());
        long due = System.nanoTime() + delay;
        if (sidecarDueNanos != Long.MAX_VALUE && due - sidecarDueNanos >= 0) return;
        long ticket = ++sidecarTicket;
        sidecarDueNanos = due;
        ads.schedule(
                () -> {
                    if (ticket != sidecarTicket) return; // replaced by a sooner one
                    sidecarDueNanos = Long.MAX_VALUE;
                    if (!core.sidecarPending() || handedSequence.get() > core.lastSequence()) return;
                    if (core.sidecarDelayNanos() > 0) {
                        scheduleSidecar(eventNanos);
                        return;
                    }
                    ads.engine().applyChange(eventNanos, core::flushSidecar);
                    servedSequence = core.lastSequence();
                },
                java.time.Duration.ofNanos(delay));
    }

    /** The sequence of the last snapshot handed to this server (applied or waiting on the serving thread). */
    private final java.util.concurrent.atomic.AtomicLong handedSequence =
            new java.util.concurrent.atomic.AtomicLong(-1);

    /** The sequence of the last snapshot applied (the next pushes carry it); -1 before the first. */
    public long servedSequence() {
        return servedSequence;
    }

    /**
     * Completes once the server has applied everything handed to it so far and pushed what that changed, and has
     * handled the clients' requests queued before this call.
     */
    public CompletableFuture<Void> idle() {
        return ads.idle();
    }

    /**
     * Completes once the server has applied every snapshot handed to it so far and handed the pushes they caused to
     * gRPC; the clients' requests (ACKs) queued meanwhile are handled after that (see {@link AdsServer#pushed()}).
     */
    public CompletableFuture<Void> pushed() {
        return ads.pushed();
    }

    /** The resource served under this type and name, or null (tests); waits for the server's thread. */
    XdsResource served(XdsType type, String name) {
        return ads.query(() -> core.index().get(type, name));
    }

    /** The current {@code /debug/xds} view; waits up to 5 s for the server's thread. */
    public XdsDebugView debugView(Map<String, String> query) {
        try {
            return ads.query(() -> core.debugView(query)).withTls(ads.tlsView());
        } catch (IllegalStateException e) {
            if (!(e.getCause() instanceof java.util.concurrent.RejectedExecutionException)) throw e;
            // closed: nothing is served
            return new XdsDebugView(
                    new XdsDebugView.Catalog(-1, "", 0, 0),
                    Map.of(),
                    java.util.List.of(),
                    java.util.List.of(),
                    new XdsDebugView.Ingress(false, "", "", java.util.List.of(), java.util.List.of()),
                    new XdsDebugView.Sidecar(false, java.util.List.of(), java.util.List.of()),
                    ads.tlsView());
        }
    }

    public XdsDebugView debugView() {
        return debugView(Map.of());
    }

    /** The {@code /debug/xds} page: connected clients and their sync status per type, NACKs, skipped resources. */
    public DebugSource debugSource() {
        return DebugSource.of(
                "xds",
                "xDS clients (node, role, subscriptions, sent and ACKed versions per type, NACKs; filter"
                        + " ?node=&type=) and resources left out",
                this::debugView);
    }

    @Override
    public void close() {
        ads.close();
    }

    private final class Cds extends ClusterDiscoveryServiceGrpc.ClusterDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamClusters(StreamObserver<DiscoveryResponse> o) {
            return ads.openSotw(o, XdsType.CLUSTER.resourceType());
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaClusters(StreamObserver<DeltaDiscoveryResponse> o) {
            return ads.openDelta(o, XdsType.CLUSTER.resourceType());
        }
    }

    private final class Eds extends EndpointDiscoveryServiceGrpc.EndpointDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamEndpoints(StreamObserver<DiscoveryResponse> o) {
            return ads.openSotw(o, XdsType.ENDPOINT.resourceType());
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaEndpoints(StreamObserver<DeltaDiscoveryResponse> o) {
            return ads.openDelta(o, XdsType.ENDPOINT.resourceType());
        }
    }

    private final class Lds extends ListenerDiscoveryServiceGrpc.ListenerDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamListeners(StreamObserver<DiscoveryResponse> o) {
            return ads.openSotw(o, XdsType.LISTENER.resourceType());
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaListeners(StreamObserver<DeltaDiscoveryResponse> o) {
            return ads.openDelta(o, XdsType.LISTENER.resourceType());
        }
    }

    private final class Sds extends SecretDiscoveryServiceGrpc.SecretDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamSecrets(StreamObserver<DiscoveryResponse> o) {
            return ads.openSotw(o, XdsType.SECRET.resourceType());
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaSecrets(StreamObserver<DeltaDiscoveryResponse> o) {
            return ads.openDelta(o, XdsType.SECRET.resourceType());
        }
    }

    private final class Rds extends RouteDiscoveryServiceGrpc.RouteDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamRoutes(StreamObserver<DiscoveryResponse> o) {
            return ads.openSotw(o, XdsType.ROUTE.resourceType());
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaRoutes(StreamObserver<DeltaDiscoveryResponse> o) {
            return ads.openDelta(o, XdsType.ROUTE.resourceType());
        }
    }
}
