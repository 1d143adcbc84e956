package dev.meshbridge.xds;

import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.model.MeshSnapshot;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.listener.v3.ListenerDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.RouteDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.secret.v3.SecretDiscoveryServiceGrpc;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the catalog and the Ingress routes over xDS to Envoy and proxyless gRPC clients: ADS and the per-type CDS,
 * EDS, LDS, RDS and SDS services, each in SotW and Delta form.
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>subscribe it to a {@code ServiceAggregator}; each snapshot is translated per changed service ({@link
 *       EnvoyTranslator}) on the server's own thread, never on the aggregator's;
 *   <li>a change to one instance sends only that service's ClusterLoadAssignment, to the streams subscribed to it;
 *       CDS, LDS, RDS and SDS are pushed only when services or ports appear or go, or the Ingress routes change
 *       ({@link EnvoyIngressTranslator});
 *   <li>versions are content hashes: two replicas serving the same catalog give a client the same versions, and a
 *       client that reconnects with the versions it holds is sent nothing it already has;
 *   <li>a NACK is logged, counted and shown on {@code /debug/xds}; the rejected version is not sent again;
 *   <li>{@link #start()} once; {@link #close()} stops it, and a second close does nothing.
 * </ol>
 */
public final class XdsServer implements SnapshotListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(XdsServer.class);
    private static final Context.Key<String> PEER = Context.key("meshbridge.xds.peer");
    private static final int MAX_REQUEST_BYTES = 64 * 1024 * 1024;

    private enum State {
        LATENT,
        STARTED,
        CLOSED
    }

    private final XdsOptions options;
    private final XdsCore core;
    private final ThreadPoolExecutor executor;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final AtomicLong streamIds = new AtomicLong();
    private volatile long servedSequence = -1;
    private volatile Server server;

    public XdsServer(XdsOptions options, MeterRegistry registry) {
        this(options, new EnvoyTranslator(options.translatorOptions()), registry);
    }

    public XdsServer(XdsOptions options, EnvoyTranslator translator, MeterRegistry registry) {
        this.options = Objects.requireNonNull(options, "options");
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "meshbridge-xds");
            t.setDaemon(true);
            return t;
        });
        this.core = new XdsCore(
                translator,
                options.ingress().enabled() ? new EnvoyIngressTranslator(translator, options.ingress()) : null,
                new XdsMetrics(registry),
                Clock.systemUTC(),
                this::execute);
    }

    /** Binds and starts serving. */
    public XdsServer start() throws IOException {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw new IllegalStateException("the xDS server can be started once");
        }
        NettyServerBuilder b = NettyServerBuilder.forAddress(
                        new InetSocketAddress(options.bindAddress(), options.port()))
                .directExecutor() // handlers only enqueue onto the server's thread
                .maxInboundMessageSize(MAX_REQUEST_BYTES)
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .intercept(new PeerInterceptor())
                .addService(new Ads())
                .addService(new Cds())
                .addService(new Eds())
                .addService(new Lds())
                .addService(new Rds())
                .addService(new Sds());
        if (!options.keepaliveTime().isZero()) {
            b.keepAliveTime(options.keepaliveTime().toMillis(), TimeUnit.MILLISECONDS)
                    .keepAliveTimeout(10, TimeUnit.SECONDS);
        }
        if (!options.maxConnectionAge().isZero()) {
            b.maxConnectionAge(options.maxConnectionAge().toMillis(), TimeUnit.MILLISECONDS)
                    .maxConnectionAgeGrace(10, TimeUnit.SECONDS);
        }
        Server s = b.build();
        try {
            s.start();
        } catch (IOException e) {
            state.set(State.CLOSED);
            executor.shutdownNow();
            throw new IOException(
                    "xDS server cannot listen on " + options.bindAddress() + ":" + options.port() + ": "
                            + e.getMessage(),
                    e);
        }
        server = s;
        log.info("xds server listening on {}:{}", options.bindAddress(), port());
        execute(core::warmUp);
        return this;
    }

    /** The port the server listens on (the actual one when configured as 0); -1 before start. */
    public int port() {
        Server s = server;
        if (s == null) return -1;
        List<? extends SocketAddress> addresses = s.getListenSockets();
        for (SocketAddress a : addresses) {
            if (a instanceof InetSocketAddress i) return i.getPort();
        }
        return s.getPort();
    }

    public XdsOptions options() {
        return options;
    }

    @Override
    public void onSnapshot(MeshSnapshot snapshot) {
        execute(() -> {
            core.applySnapshot(snapshot);
            servedSequence = snapshot.sequence();
        });
    }

    /** The sequence of the last snapshot applied (the next pushes carry it); -1 before the first. */
    public long servedSequence() {
        return servedSequence;
    }

    /** The current {@code /debug/xds} view; waits up to 5 s for the server's thread. */
    public XdsDebugView debugView(Map<String, String> query) {
        try {
            Future<XdsDebugView> f = executor.submit(() -> core.debugView(query));
            return f.get(5, TimeUnit.SECONDS);
        } catch (RejectedExecutionException e) {
            return new XdsDebugView(
                    new XdsDebugView.Catalog(-1, "", 0, 0),
                    Map.of(),
                    List.of(),
                    List.of(),
                    new XdsDebugView.Ingress(false, "", "", List.of(), List.of()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the xDS state", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the xDS state: " + e, e);
        }
    }

    public XdsDebugView debugView() {
        return debugView(Map.of());
    }

    /** The {@code /debug/xds} page: connected clients and their sync status per type, NACKs, skipped resources. */
    public DebugSource debugSource() {
        return DebugSource.of(
                "xds",
                "xDS clients (node, subscriptions, sent and ACKed versions per type, NACKs; filter ?node=&type=)"
                        + " and resources left out",
                this::debugView);
    }

    @Override
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous == State.CLOSED) return;
        Server s = server;
        if (s != null) {
            s.shutdown();
            try {
                if (!s.awaitTermination(2, TimeUnit.SECONDS)) {
                    s.shutdownNow();
                    s.awaitTermination(2, TimeUnit.SECONDS);
                }
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
        if (previous == State.STARTED) log.info("xds server stopped");
    }

    private void execute(Runnable task) {
        try {
            executor.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.error("xds task failed; state kept", e);
                }
            });
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    // ------------------------------------------------------------------ gRPC glue: handlers only enqueue

    private StreamObserver<DiscoveryRequest> openSotw(StreamObserver<DiscoveryResponse> observer, XdsType type) {
        ServerCallStreamObserver<DiscoveryResponse> call = (ServerCallStreamObserver<DiscoveryResponse>) observer;
        XdsStream st = XdsStream.sotw(streamIds.incrementAndGet(), type, peer(), Instant.now(), call);
        return requests(st, call, core::onSotwRequest);
    }

    private StreamObserver<DeltaDiscoveryRequest> openDelta(
            StreamObserver<DeltaDiscoveryResponse> observer, XdsType type) {
        ServerCallStreamObserver<DeltaDiscoveryResponse> call =
                (ServerCallStreamObserver<DeltaDiscoveryResponse>) observer;
        XdsStream st = XdsStream.delta(streamIds.incrementAndGet(), type, peer(), Instant.now(), call);
        return requests(st, call, core::onDeltaRequest);
    }

    /** Registers a stream and returns the observer of its requests; every callback only enqueues. */
    private <Q> StreamObserver<Q> requests(
            XdsStream st, ServerCallStreamObserver<?> call, BiConsumer<XdsStream, Q> onRequest) {
        call.setOnReadyHandler(() -> execute(() -> core.markDirty(st)));
        call.setOnCancelHandler(() -> execute(() -> core.unregister(st, Status.CANCELLED.asRuntimeException())));
        execute(() -> core.register(st));
        return new StreamObserver<>() {
            @Override
            public void onNext(Q request) {
                execute(() -> onRequest.accept(st, request));
            }

            @Override
            public void onError(Throwable t) {
                execute(() -> core.unregister(st, t));
            }

            @Override
            public void onCompleted() {
                execute(() -> {
                    core.unregister(st, null);
                    call.onCompleted();
                });
            }
        };
    }

    private static String peer() {
        String p = PEER.get();
        return p == null ? "?" : p;
    }

    private static final class PeerInterceptor implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            String peer = remote instanceof InetSocketAddress i
                    ? i.getAddress().getHostAddress() + ":" + i.getPort()
                    : String.valueOf(remote);
            return Contexts.interceptCall(Context.current().withValue(PEER, peer), call, headers, next);
        }
    }

    private final class Ads extends AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamAggregatedResources(StreamObserver<DiscoveryResponse> o) {
            return openSotw(o, null);
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaAggregatedResources(
                StreamObserver<DeltaDiscoveryResponse> o) {
            return openDelta(o, null);
        }
    }

    private final class Cds extends ClusterDiscoveryServiceGrpc.ClusterDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamClusters(StreamObserver<DiscoveryResponse> o) {
            return openSotw(o, XdsType.CLUSTER);
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaClusters(StreamObserver<DeltaDiscoveryResponse> o) {
            return openDelta(o, XdsType.CLUSTER);
        }
    }

    private final class Eds extends EndpointDiscoveryServiceGrpc.EndpointDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamEndpoints(StreamObserver<DiscoveryResponse> o) {
            return openSotw(o, XdsType.ENDPOINT);
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaEndpoints(StreamObserver<DeltaDiscoveryResponse> o) {
            return openDelta(o, XdsType.ENDPOINT);
        }
    }

    private final class Lds extends ListenerDiscoveryServiceGrpc.ListenerDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamListeners(StreamObserver<DiscoveryResponse> o) {
            return openSotw(o, XdsType.LISTENER);
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaListeners(StreamObserver<DeltaDiscoveryResponse> o) {
            return openDelta(o, XdsType.LISTENER);
        }
    }

    private final class Sds extends SecretDiscoveryServiceGrpc.SecretDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamSecrets(StreamObserver<DiscoveryResponse> o) {
            return openSotw(o, XdsType.SECRET);
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaSecrets(StreamObserver<DeltaDiscoveryResponse> o) {
            return openDelta(o, XdsType.SECRET);
        }
    }

    private final class Rds extends RouteDiscoveryServiceGrpc.RouteDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamRoutes(StreamObserver<DiscoveryResponse> o) {
            return openSotw(o, XdsType.ROUTE);
        }

        @Override
        public StreamObserver<DeltaDiscoveryRequest> deltaRoutes(StreamObserver<DeltaDiscoveryResponse> o) {
            return openDelta(o, XdsType.ROUTE);
        }
    }
}
