package dev.meshbridge.ads;

import dev.meshbridge.core.model.MeshSnapshot;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.BindableService;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ADS server: the gRPC server, its one serving thread and the {@link AdsEngine} that thread runs. The xDS and MCP
 * servers are producers on it: they put resources into the engine's store and leave the protocol to it. The engine's
 * state is the serving thread's, with one exception: a producer that hands over a small snapshot while that thread has
 * nothing to do applies it itself ({@link #executeSnapshot}); a lock that every task holds keeps one task at a time.
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>{@link #start()} builds and binds the gRPC server ({@link #buildServer}, the one place where transport
 *       options are set) with the ADS service and the producer's extra services, then holds first answers until
 *       {@link #markReady} or {@link AdsOptions#initialSyncTimeout()};
 *   <li>every stream enters through {@link #openSotw} or {@link #openDelta} (the one place where streams are
 *       admitted); gRPC callbacks only enqueue work on the serving thread;
 *   <li>{@link #drain()} sends the clients to another replica: GOAWAY on every connection, then every stream ends
 *       with {@code UNAVAILABLE}, and new streams and connections are refused;
 *   <li>{@link #close()} ends the streams with {@code UNAVAILABLE}, stops the server and the thread; a second close
 *       does nothing.
 * </ol>
 */
public final class AdsServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AdsServer.class);
    private static final Context.Key<String> PEER = Context.key("meshbridge.ads.peer");
    private static final Context.Key<java.net.InetAddress> PEER_ADDRESS = Context.key("meshbridge.ads.peerAddress");

    /** A stream whose response has not been acknowledged for this long counts as stale ({@code streams.stale}). */
    public static final Duration STALE_AFTER = Duration.ofSeconds(30);

    private enum State {
        LATENT,
        STARTED,
        DRAINING,
        CLOSED
    }

    private final AdsOptions options;
    private final ScheduledThreadPoolExecutor executor;
    private final AdsEngine engine;
    private final Clock clock;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final AtomicLong streamIds = new AtomicLong();
    private final List<BindableService> services = new ArrayList<>();
    /** Open streams per client connection (its remote address and port). */
    private final java.util.concurrent.ConcurrentHashMap<String, Integer> streamsByConnection =
            new java.util.concurrent.ConcurrentHashMap<>();

    private final AdsMetrics metrics;
    private final LogBudget logBudget = LogBudget.perMinute(20);
    private volatile Server server;
    private ServerTransport transport;
    private volatile int boundPort = -1;
    private TlsOptions tlsOptions = TlsOptions.DISABLED;
    private volatile ServerTls tls;
    private final MeterRegistry meterRegistry;

    public AdsServer(AdsOptions options, ResourceTypes types, MeterRegistry registry) {
        this(options, types, registry, Clock.systemUTC());
    }

    /** @param clock the time of debug records and of push pacing (tests drive it) */
    public AdsServer(AdsOptions options, ResourceTypes types, MeterRegistry registry, Clock clock) {
        this.options = Objects.requireNonNull(options, "options");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.meterRegistry = registry;
        String threadName = "meshbridge-" + options.server();
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.metrics = new AdsMetrics(options.server(), types, registry);
        this.engine = new AdsEngine(
                options.server(),
                types,
                metrics,
                clock,
                new GuardedExecutor(),
                options.minPushInterval(),
                options.limits());
        engine.clientTasks(() -> runningClientTask);
    }

    public AdsOptions options() {
        return options;
    }

    /** The engine; its store methods are for the serving thread ({@link #execute}). */
    public AdsEngine engine() {
        return engine;
    }

    /** Adds a service next to ADS (a per-type xDS service); before {@link #start()}. */
    public AdsServer addService(BindableService service) {
        if (state.get() != State.LATENT) throw new IllegalStateException("services are added before start");
        services.add(service);
        return this;
    }

    /** Serves TLS (and authorizes clients by certificate) as {@code tls} says; before {@link #start()}. */
    public AdsServer tls(TlsOptions tls) {
        if (state.get() != State.LATENT) throw new IllegalStateException("TLS is set before start");
        this.tlsOptions = Objects.requireNonNull(tls, "tls");
        return this;
    }

    /** The {@code tls} part of the debug page: mode, certificate, refused clients. */
    public ServerTls.View tlsView() {
        ServerTls t = tls;
        return t == null ? ServerTls.View.plaintext() : t.view();
    }

    /** The server's TLS, null when it speaks plaintext (tests reload its files with {@code checkFiles()}). */
    public ServerTls serverTls() {
        return tls;
    }

    /** Binds and starts serving. */
    public AdsServer start() throws IOException {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw new IllegalStateException("the " + options.server() + " server can be started once");
        }
        if (tlsOptions.enabled()) {
            try {
                tls = new ServerTls(options.server(), tlsOptions, meterRegistry, clock);
            } catch (IOException | java.security.GeneralSecurityException | RuntimeException e) {
                state.set(State.CLOSED);
                executor.shutdownNow();
                throw new IOException(
                        displayName() + " server cannot use its TLS files (" + options.server() + ".tls): "
                                + e.getMessage(),
                        e);
            }
        } else if (!isLoopback(options.bindAddress())) {
            log.warn(
                    "{} server serves plaintext on {} (not loopback): any process that reaches this port reads the"
                            + " whole catalog; set {}.tls, or bind 127.0.0.1 behind a sidecar",
                    displayName(),
                    options.bindAddress(),
                    options.server());
        }
        Server s = buildServer();
        try {
            s.start();
        } catch (IOException e) {
            state.set(State.CLOSED);
            executor.shutdownNow();
            shutdownEventLoops();
            throw new IOException(
                    displayName() + " server cannot listen on " + options.bindAddress() + ":" + options.port()
                            + " (" + options.server() + ".bindAddress, " + options.server() + ".port): "
                            + e.getMessage(),
                    e);
        }
        server = s;
        boundPort = boundPort(s);
        log.info(
                "{} server listening on {}:{} ({}, {} I/O threads)",
                displayName(),
                options.bindAddress(),
                boundPort,
                transport.describe(),
                options.ioThreadCount());
        if (tls != null) tls.startReloading(executor);
        executor.scheduleWithFixedDelay(
                () -> guarded(() -> engine.refreshStale(clock.instant().minus(STALE_AFTER))), 5, 5, TimeUnit.SECONDS);
        if (options.initialSyncTimeout().isZero()) {
            markReady("initialSyncTimeout is 0");
        } else {
            executor.schedule(
                    () -> guarded(
                            () -> engine.markReady("initialSyncTimeout " + options.initialSyncTimeout() + " passed")),
                    options.initialSyncTimeout().toNanos(),
                    TimeUnit.NANOSECONDS);
        }
        return this;
    }

    private String displayName() {
        return options.server().equals("xds") ? "xDS" : options.server().toUpperCase(java.util.Locale.ROOT);
    }

    /** The gRPC server with every transport option: the one place limits (connections, TLS) go. */
    private Server buildServer() {
        AdsLimits limits = options.limits();
        String name = "meshbridge-" + options.server();
        transport = ServerTransport.open(name, options.ioThreadCount(), this);
        NettyServerBuilder b = NettyServerBuilder.forAddress(
                        new InetSocketAddress(options.bindAddress(), options.port()))
                // the accepting channel refuses connections past maxConnections before they cost anything
                .channelFactory(transport.channels)
                .bossEventLoopGroup(transport.boss)
                .workerEventLoopGroup(transport.workers)
                .directExecutor() // handlers only enqueue onto the serving thread
                .maxInboundMessageSize(limits.maxInboundMessageSize())
                // streams past the limit are refused with a status by admit(); this caps what a client can open
                // before admission answers
                .maxConcurrentCallsPerConnection(limits.maxStreamsPerConnection() * 2)
                .handshakeTimeout(limits.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS)
                // clients ping idle connections (istiod every 30 s): allow it, or gRPC closes them
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .intercept(new PeerInterceptor())
                .addStreamTracerFactory(new MessageSizeTracer())
                .addService(ResponseMarshaller.wrap(new Ads().bindService()));
        if (tls != null) b.sslContext(tls.sslContext()).intercept(tls.authorizer()); // runs before any handler
        for (BindableService s : services) b.addService(ResponseMarshaller.wrap(s.bindService()));
        if (!options.keepaliveTime().isZero()) {
            b.keepAliveTime(options.keepaliveTime().toMillis(), TimeUnit.MILLISECONDS)
                    .keepAliveTimeout(20, TimeUnit.SECONDS);
        }
        if (!options.maxConnectionAge().isZero()) {
            b.maxConnectionAge(options.maxConnectionAge().toMillis(), TimeUnit.MILLISECONDS)
                    .maxConnectionAgeGrace(
                            maxConnectionAgeGrace(options.maxConnectionAge()).toMillis(), TimeUnit.MILLISECONDS);
        }
        if (!limits.idleTimeout().isZero()) {
            b.maxConnectionIdle(limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
        }
        return b.build();
    }

    /** Which transport serves the sockets: {@code epoll} or {@code nio} (tests). */
    String transportKind() {
        return transport == null ? "none" : transport.kind.tag();
    }

    private void shutdownEventLoops() {
        if (transport != null) transport.shutdown();
    }

    /** A connection was accepted; false when it is past {@link AdsLimits#maxConnections()} and must be closed. */
    boolean connectionOpened() {
        int n = metrics.connections.incrementAndGet();
        if (n <= options.limits().maxConnections()) return true;
        metrics.connections.decrementAndGet();
        metrics.limitHit("maxConnections");
        long dropped = logBudget.take("maxConnections");
        if (dropped >= 0) {
            log.warn(
                    "{} server refused a connection: maxConnections={} reached ({}.limits.maxConnections){}",
                    options.server(),
                    options.limits().maxConnections(),
                    options.server(),
                    LogBudget.dropped(dropped));
        }
        return false;
    }

    void connectionClosed() {
        metrics.connections.decrementAndGet();
    }

    /**
     * How long a connection that reached its maximum age (and got GOAWAY) keeps its streams: a tenth of the age,
     * between 1 s and 10 s. An ADS stream never ends by itself, so the grace is how long it stays on the old replica
     * before gRPC closes the connection and the client reconnects (through the Service, to any replica).
     */
    static Duration maxConnectionAgeGrace(Duration maxConnectionAge) {
        Duration tenth = maxConnectionAge.dividedBy(10);
        if (tenth.compareTo(Duration.ofSeconds(1)) < 0) return Duration.ofSeconds(1);
        return tenth.compareTo(Duration.ofSeconds(10)) > 0 ? Duration.ofSeconds(10) : tenth;
    }

    // ------------------------------------------------------------------ draining: a replica going away

    /**
     * Sends every client to another replica, for a graceful shutdown: GOAWAY on every connection (the clients open
     * their next stream on a new connection, which the Service balances to a replica still ready), then every open
     * stream ends with {@code UNAVAILABLE} so the clients reconnect now, holding what they have (they present their
     * versions, and a replica serving the same catalog sends them nothing new). New streams are refused from here on.
     * The listener is closed too (gRPC stops accepting connections on shutdown). Idempotent.
     *
     * @return completes once every stream has been ended (bounded: within 5 s)
     */
    public CompletableFuture<Void> drain() {
        if (!state.compareAndSet(State.STARTED, State.DRAINING)) return CompletableFuture.completedFuture(null);
        Server s = server;
        if (s != null) s.shutdown(); // GOAWAY first, so that a client does not reopen its stream on this connection
        int[] ended = {0};
        return CompletableFuture.runAsync(
                        () -> {
                            ended[0] = engine.streamCount();
                            engine.completeAll(Status.UNAVAILABLE.withDescription(
                                    "meshbridge replica is shutting down; reconnect to another replica"));
                        },
                        executor)
                .orTimeout(5, TimeUnit.SECONDS)
                .handle((v, e) -> {
                    if (e != null) log.warn("draining {} streams: {}", options.server(), e.toString());
                    else log.info("{} server drained: GOAWAY sent, {} streams ended", options.server(), ended[0]);
                    return null;
                });
    }

    /** True from {@link #drain()} on. */
    public boolean draining() {
        State st = state.get();
        return st == State.DRAINING || st == State.CLOSED;
    }

    /** The port the server listens on (the actual one when configured as 0); -1 before start. */
    public int port() {
        return boundPort;
    }

    /** True for addresses only this machine reaches: {@code localhost}, 127.0.0.0/8, {@code ::1}. */
    static boolean isLoopback(String address) {
        if (address.equals("localhost")) return true;
        if (!dev.meshbridge.core.naming.IpAddresses.isBare(address)) return false;
        try {
            return java.net.InetAddress.getByName(address).isLoopbackAddress(); // a literal: no lookup
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    private static int boundPort(Server s) {
        for (SocketAddress a : s.getListenSockets()) {
            if (a instanceof InetSocketAddress i) return i.getPort();
        }
        return s.getPort();
    }

    /** Lets the server answer: the registries have synced (or their sync timeouts passed). Idempotent. */
    public void markReady(String why) {
        execute(() -> engine.markReady(why));
    }

    /**
     * Runs a producer's task on the serving thread (a snapshot, {@link #markReady}); a task that throws is logged and
     * the state kept. Ignored after close. It runs after every producer task queued before it, and after at most
     * {@link #CLIENT_TURN} of the clients' requests already queued (see {@link #changes}).
     */
    public void execute(Runnable task) {
        try {
            enqueueChange(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * The default for {@link #callerRunsServices}: the JVM property {@code meshbridge.ads.callerRunsServices}, else 8.
     * It was off in issue 22's twelfth session: with it on, most cold ingests of a million endpoints through the SPI
     * left a core idle for seconds. The idle core was the xDS server's sidecar throttle waiting out its spacing after
     * the ingest's last snapshot ({@code XdsCore.sidecarDelayNanos}), which this path made more likely; since the
     * thirteenth session the end of a burst is not spaced, and an ingest with it on kept both cores busy (bench/README.md).
     * A server whose snapshot may take long to apply keeps it off its caller per snapshot (the xDS server queues one
     * that may change the sidecar's routes).
     */
    public static final int CALLER_RUNS_SERVICES = Integer.getInteger("meshbridge.ads.callerRunsServices", 8);

    /**
     * The most services a snapshot may change (or remove) for {@link #executeSnapshot} to apply it on the calling
     * thread (0: never): a lone change, or a few coalesced, costs a fraction of a millisecond, which a hop to the
     * serving thread would more than double; a larger snapshot (an ingest's, a route change) goes to the serving
     * thread, so that the aggregator goes on merging while each server applies.
     */
    private volatile int callerRunsServices = CALLER_RUNS_SERVICES;

    /** Sets {@link #callerRunsServices} (0 turns the path off). */
    public void callerRunsServices(int services) {
        if (services < 0) throw new IllegalArgumentException("callerRunsServices < 0: " + services);
        callerRunsServices = services;
    }

    /**
     * Runs a producer's task for {@code snapshot} (its puts into the engine's store): on the calling thread, at once,
     * when the snapshot changes at most {@link #callerRunsServices} services and not the routes, the aggregator had
     * nothing else due when it published it ({@link MeshSnapshot#publishedAlone()}: not during an ingest or a burst,
     * where the aggregator goes on merging while the servers apply), and the serving thread has nothing queued or
     * running; else queued as {@link #execute} does. Either way it runs under the serving
     * lock, after every producer task queued before it, alone with the serving state. The pushes it causes are queued
     * for the serving thread, which sends them (see {@link AdsEngine#markDirty}): a lone change that reaches no client
     * wakes no thread of its own; one that reaches clients wakes the serving thread only to send.
     *
     * <p>Why: three threads woken per lone change (the aggregator, then this server's and the other server's) cost
     * more than the change's work itself on a loaded machine (issue 22: 0.51 against 0.32 ms per lone change at
     * 100,000 endpoints, bench/README.md).
     */
    public void executeSnapshot(MeshSnapshot snapshot, Runnable task) {
        int limit = callerRunsServices;
        boolean small = limit > 0
                && snapshot.publishedAlone()
                && !snapshot.routesChanged()
                && snapshot.changed().size() + snapshot.removed().size() <= limit;
        // a task that hands a snapshot on (the caller already serving) would otherwise run it in the middle of itself
        if (small && !serving.isHeldByCurrentThread() && idleForCaller() && serving.tryLock()) {
            try {
                // checked again under the lock: a task queued in between runs first, so this one is queued behind it
                if (idleForCaller()) {
                    callerRuns.incrementAndGet();
                    metrics.callerRan();
                    runTask(task);
                    return;
                }
            } finally {
                serving.unlock();
            }
        }
        execute(task);
    }

    /** Nothing queued for the serving thread, no drain queued or running, and the server open. */
    private boolean idleForCaller() {
        return drainState.get() == NO_DRAIN && changes.isEmpty() && mailbox.isEmpty() && !executor.isShutdown();
    }

    /** Whether a small snapshot handed now would be applied by the caller (tests; racy by nature). */
    boolean idleNow() {
        return idleForCaller() && !serving.isLocked();
    }

    /** Snapshots applied on the thread that handed them over ({@link #executeSnapshot}); tests and debug pages. */
    public long callerRuns() {
        return callerRuns.get();
    }

    private final AtomicLong callerRuns = new AtomicLong();

    /** Runs a client's callback (a request, an ACK, ready, cancel) on the serving thread, behind every one before. */
    private void fromClient(Runnable task) {
        try {
            enqueue(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * The most tasks of {@link #changes} and {@link #mailbox} one drain runs before the scheduler's due timers get
     * their turn.
     */
    static final int DRAIN_BATCH = 256;

    /**
     * The clients' tasks in arrival order, run by one drain task at a time on the scheduler: every request, ACK, ready
     * and cancel callback of every stream, and {@link #idle()} and the debug pages' queries. A lock-free FIFO costs
     * each a queue node, where the scheduler's queue is a delay heap under one lock (about log2(queued) comparisons
     * per task on both sides, 13 with 10,000 ACKs queued after a change to 10,000 streams). It holds at most a request
     * per stream (requests are read one at a time) and their follow-ups.
     */
    private final java.util.concurrent.ConcurrentLinkedQueue<Runnable> mailbox =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /**
     * The producers' tasks (snapshots, markReady) and the pushes they cause, in their order, run ahead of the tasks
     * of {@link #mailbox} (after at most {@link #CLIENT_TURN} of them): a change to 10,000 streams is followed by
     * 10,000 ACKs, and the next change is not made to wait behind them. The protocol allows it: a request handled
     * after a newer push is one that crossed that push on the wire, which the engine handles already (an ACK or NACK
     * names its nonce and is matched to the version sent with it; a SotW request answering an older nonce is
     * recorded as the ACK or NACK of that response and its subscription change ignored, the client repeats its
     * subscription when it answers the newer one). Each stream's own requests keep their order in {@link #mailbox}.
     */
    private final java.util.concurrent.ConcurrentLinkedQueue<Runnable> changes =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** Under {@link #serving}: the running task came from {@link #mailbox}, so the work it queues goes there too. */
    private boolean runningClientTask;

    /** {@link #drainState}: no drain queued or running. */
    private static final int NO_DRAIN = 0;

    /** {@link #drainState}: a drain queued {@link #CLIENT_DRAIN_DELAY_NANOS} after the client task that queued it. */
    private static final int DRAIN_SOON = 1;

    /** {@link #drainState}: a drain queued to run at once, or running. */
    private static final int DRAIN_NOW = 2;

    /**
     * How long a client's task (an ACK, a request, a ready or cancel callback) that finds the serving thread idle
     * waits for others before the thread is woken for it: 0.5 ms. After a change to 10,000 streams their ACKs come in
     * one at a time from the transport thread, and a serving thread woken for each (it handles one in about 2 us,
     * parks, and is woken for the next) was woken 7,000 times a second and preempted the transport thread 4,000 times a
     * second (issue 22, bench/README.md); woken once per half millisecond it takes them in batches. A producer's task (a
     * change) is never held: it wakes the thread at once, and the clients' tasks waiting then run with it.
     */
    static final long CLIENT_DRAIN_DELAY_NANOS = 500_000;

    /** {@link #CLIENT_DRAIN_DELAY_NANOS}, unless a test holds the clients' tasks longer. */
    private volatile long clientDrainDelayNanos = CLIENT_DRAIN_DELAY_NANOS;

    /** How long a client's task waits for others before the idle serving thread is woken (tests). */
    void clientDrainDelay(Duration delay) {
        clientDrainDelayNanos = delay.toNanos();
    }

    /** Drains run so far: the times the serving thread took up its queued tasks (tests). */
    long drains() {
        return drains.get();
    }

    private final AtomicLong drains = new AtomicLong();

    /** {@link #NO_DRAIN}, {@link #DRAIN_SOON} or {@link #DRAIN_NOW}. */
    private final java.util.concurrent.atomic.AtomicInteger drainState =
            new java.util.concurrent.atomic.AtomicInteger(NO_DRAIN);

    private final Runnable drain = this::drainMailbox;

    /** Queues a client's task behind every client task queued before it, the thread woken within the batching delay. */
    private void enqueue(Runnable task) {
        enqueue(task, false);
    }

    /**
     * Queues a task behind every client task queued before it and wakes the serving thread at once (a debug page's
     * query, closing): nobody's ACK is waiting for company here, somebody is waiting for the answer.
     */
    private void enqueueNow(Runnable task) {
        enqueue(task, true);
    }

    /** Refuses the task once the serving thread is shut down. */
    private void enqueue(Runnable task, boolean now) {
        if (executor.isShutdown()) throw new RejectedExecutionException("closed");
        mailbox.add(task);
        scheduleDrain(now);
    }

    /** Queues a task behind every producer task queued before it, ahead of the clients' tasks. */
    private void enqueueChange(Runnable task) {
        if (executor.isShutdown()) throw new RejectedExecutionException("closed");
        changes.add(task);
        scheduleDrain(true);
    }

    /**
     * Makes sure a drain will run: at once ({@code now}, a producer's task) or within {@link
     * #CLIENT_DRAIN_DELAY_NANOS} (a client's). A drain already queued at once, or running, takes the task; one queued
     * for later is brought forward by a task that may not wait (the later one then finds nothing, or what came since).
     */
    private void scheduleDrain(boolean now) {
        while (true) {
            int state = drainState.get();
            if (state == DRAIN_NOW || (state == DRAIN_SOON && !now)) return;
            if (!drainState.compareAndSet(state, now ? DRAIN_NOW : DRAIN_SOON)) continue;
            try {
                if (now) executor.execute(drain);
                else executor.schedule(drain, clientDrainDelayNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                drainState.compareAndSet(now ? DRAIN_NOW : DRAIN_SOON, NO_DRAIN);
                throw e;
            }
            return;
        }
    }

    /**
     * The most client tasks that run between two producer tasks while both queues hold work: a change waits behind
     * at most this many queued requests (not behind all of them), and the clients' requests (a new client's first
     * subscription too) still move while changes keep coming faster than the thread serves them.
     */
    static final int CLIENT_TURN = 64;

    /** Serving thread: client tasks run since the last producer task. */
    private int clientsSinceChange = CLIENT_TURN;

    private void drainMailbox() {
        // running: whatever is queued from now on is taken by this drain or by the check at its end
        drainState.set(DRAIN_NOW);
        drains.incrementAndGet();
        for (int i = 0; i < DRAIN_BATCH; i++) {
            Runnable task = clientsSinceChange >= CLIENT_TURN ? changes.poll() : null;
            if (task != null) {
                clientsSinceChange = 0;
                guarded(task);
                continue;
            }
            task = mailbox.poll();
            if (task == null) {
                task = changes.poll();
                if (task == null) break;
                clientsSinceChange = 0;
                guarded(task);
                continue;
            }
            clientsSinceChange++;
            guardedClient(task);
        }
        drainState.set(NO_DRAIN);
        // a task added after the last poll saw the drain still running and left it to this check; what is left runs
        // at once (a batch cut at DRAIN_BATCH, or a change that a client's later task must not hold back)
        if (!changes.isEmpty() || !mailbox.isEmpty()) {
            try {
                scheduleDrain(true);
            } catch (RejectedExecutionException e) {
                // closed: what is left is dropped, as execute() drops it after close
            }
        }
    }

    /** How many tasks wait for the serving thread (tests: the clients' requests have arrived). */
    int queued() {
        return changes.size() + mailbox.size();
    }

    /** Runs a task on the serving thread after {@code delay}, guarded as {@link #execute}. Ignored after close. */
    public void schedule(Runnable task, Duration delay) {
        try {
            executor.schedule(() -> guarded(task), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * Completes once the serving thread has done everything queued before this call (the producers' tasks and the
     * clients' requests), and the pushes that work caused (tests wait on it instead of sleeping).
     */
    public CompletableFuture<Void> idle() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        // each queue's tasks queued before this call, then the flushes they queued in their own queue: two hops
        // through the producers' queue, then two through the clients' (a client task that finds a stream dirty still
        // queues a flush in the clients' queue, see AdsEngine.scheduleFlush)
        try {
            enqueueChange(() -> enqueueChange(() -> fromClient(() -> fromClient(() -> done.complete(null)))));
        } catch (RejectedExecutionException e) {
            done.complete(null);
        }
        return done;
    }

    /**
     * Completes once the producers' tasks queued before this call have run and the pushes they caused were handed to
     * gRPC for every stream whose transport was ready; unlike {@link #idle()}, it does not wait for the clients'
     * requests queued meanwhile (at most {@link #CLIENT_TURN} of them run between two producer tasks).
     */
    public CompletableFuture<Void> pushed() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            enqueueChange(() -> enqueueChange(() -> done.complete(null)));
        } catch (RejectedExecutionException e) {
            done.complete(null);
        }
        return done;
    }

    /** Computes a value on the serving thread and waits up to 5 s for it (debug pages). */
    public <T> T query(Supplier<T> work) {
        try {
            return CompletableFuture.supplyAsync(work, this::enqueueNow).get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the " + options.server() + " state", e);
        } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
            throw new IllegalStateException("cannot read the " + options.server() + " state: " + e, e);
        }
    }

    @Override
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous == State.CLOSED) return;
        Server s = server;
        if (s != null) {
            try {
                CompletableFuture.runAsync(
                                () -> engine.completeAll(
                                        Status.UNAVAILABLE.withDescription("meshbridge is shutting down")),
                                this::enqueueNow)
                        .get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
                log.warn("closing {} streams: {}", options.server(), e.toString());
            }
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
        ServerTls t = tls;
        if (t != null) t.close();
        shutdownEventLoops();
        // the clients' last tasks (their streams ending) still run: a drain held for a batch would be dropped
        if (!mailbox.isEmpty() || !changes.isEmpty()) {
            try {
                scheduleDrain(true);
            } catch (RejectedExecutionException e) {
                // already shut down
            }
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) executor.shutdownNow();
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
        if (previous == State.STARTED || previous == State.DRAINING) log.info("{} server stopped", options.server());
    }

    /**
     * Held by whoever runs a task on the serving state: the serving thread, or a producer's thread that runs a small
     * snapshot itself ({@link #executeSnapshot}). Every task that touches the engine runs through {@link #guarded} or
     * {@link #guardedClient}, so no two run at once and each sees what the one before did.
     */
    private final ReentrantLock serving = new ReentrantLock();

    private void guarded(Runnable task) {
        serving.lock();
        try {
            runTask(task);
        } finally {
            serving.unlock();
        }
    }

    /** {@link #guarded} for a client's task: the work it queues goes to the clients' queue. */
    private void guardedClient(Runnable task) {
        serving.lock();
        try {
            runningClientTask = true;
            runTask(task);
        } finally {
            runningClientTask = false;
            serving.unlock();
        }
    }

    /** Runs a task under {@link #serving}: a task that throws is logged and the state kept. */
    private void runTask(Runnable task) {
        try {
            task.run();
            engine.reclaim();
        } catch (RuntimeException e) {
            metrics.taskFailed();
            log.error("serving task failed; state kept", e);
        }
    }

    /** The engine's view of the serving thread: every task guarded, nothing after close. */
    private final class GuardedExecutor extends java.util.concurrent.AbstractExecutorService
            implements java.util.concurrent.ScheduledExecutorService {

        @Override
        public void execute(Runnable command) {
            // the engine's follow-up work (a flush) stays in the lane of the task that caused it: a change's push goes
            // out before the queued requests, the flush after a request is batched with the requests queued with it
            if (runningClientTask) fromClient(command);
            else AdsServer.this.execute(command);
        }

        @Override
        public java.util.concurrent.ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            try {
                return executor.schedule(() -> guarded(command), delay, unit);
            } catch (RejectedExecutionException e) {
                return null;
            }
        }

        @Override
        public <V> java.util.concurrent.ScheduledFuture<V> schedule(
                java.util.concurrent.Callable<V> callable, long delay, TimeUnit unit) {
            return executor.schedule(
                    () -> {
                        serving.lock();
                        try {
                            return callable.call();
                        } finally {
                            serving.unlock();
                        }
                    },
                    delay,
                    unit);
        }

        @Override
        public java.util.concurrent.ScheduledFuture<?> scheduleAtFixedRate(
                Runnable command, long initialDelay, long period, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.concurrent.ScheduledFuture<?> scheduleWithFixedDelay(
                Runnable command, long initialDelay, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void shutdown() {
            throw new UnsupportedOperationException("the server owns the thread");
        }

        @Override
        public List<Runnable> shutdownNow() {
            throw new UnsupportedOperationException("the server owns the thread");
        }

        @Override
        public boolean isShutdown() {
            return executor.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return executor.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return executor.awaitTermination(timeout, unit);
        }
    }

    // ------------------------------------------------------------------ admission: handlers only enqueue

    /** Admits a state-of-the-world stream; {@code fixedType} is the one type of a per-type service, null for ADS. */
    public StreamObserver<DiscoveryRequest> openSotw(
            StreamObserver<DiscoveryResponse> observer, ResourceType fixedType) {
        ServerCallStreamObserver<DiscoveryResponse> call = (ServerCallStreamObserver<DiscoveryResponse>) observer;
        AdsStream st = AdsStream.sotw(
                streamIds.incrementAndGet(),
                fixedType,
                peer(),
                clock.instant(),
                engine.types().urlCount(),
                call);
        st.peerAddress = PEER_ADDRESS.get();
        return admit(st, call, engine::onSotwRequest);
    }

    /** Admits a Delta stream; {@code fixedType} is the one type of a per-type service, null for ADS. */
    public StreamObserver<DeltaDiscoveryRequest> openDelta(
            StreamObserver<DeltaDiscoveryResponse> observer, ResourceType fixedType) {
        ServerCallStreamObserver<DeltaDiscoveryResponse> call =
                (ServerCallStreamObserver<DeltaDiscoveryResponse>) observer;
        AdsStream st = AdsStream.delta(
                streamIds.incrementAndGet(),
                fixedType,
                peer(),
                clock.instant(),
                engine.types().urlCount(),
                call);
        st.peerAddress = PEER_ADDRESS.get();
        return admit(st, call, engine::onDeltaRequest);
    }

    /**
     * Registers a stream and returns the observer of its requests; every callback only enqueues.
     *
     * <p>Requests are read one at a time: the next is asked for only after the serving thread handled the last one
     * and the stream's request rate allows it ({@link AdsLimits#maxRequestsPerSecond()}). A client that sends faster
     * fills its own HTTP/2 window and waits; nothing piles up in the server.
     */
    private <Q> StreamObserver<Q> admit(
            AdsStream st, ServerCallStreamObserver<?> call, BiConsumer<AdsStream, Q> onRequest) {
        if (draining()) {
            call.onError(Status.UNAVAILABLE
                    .withDescription("meshbridge is shutting down")
                    .asRuntimeException());
            return ignoring();
        }
        AdsLimits limits = options.limits();
        String connection = st.peer;
        int open = streamsByConnection.merge(connection, 1, Integer::sum);
        if (open > limits.maxStreamsPerConnection()) {
            streamsByConnection.computeIfPresent(connection, (k, v) -> v <= 1 ? null : v - 1);
            metrics.limitHit("maxStreamsPerConnection");
            long dropped = logBudget.take("maxStreamsPerConnection", LogBudget.host(st.peer));
            if (dropped >= 0) {
                log.warn(
                        "{} server refused a stream from peer={}: maxStreamsPerConnection={} reached{}",
                        options.server(),
                        st.peer,
                        limits.maxStreamsPerConnection(),
                        LogBudget.dropped(dropped));
            }
            call.onError(Status.RESOURCE_EXHAUSTED
                    .withDescription("maxStreamsPerConnection=" + limits.maxStreamsPerConnection()
                            + " reached: this connection has " + (open - 1) + " open streams ("
                            + options.server() + ".limits.maxStreamsPerConnection)")
                    .asRuntimeException());
            return ignoring();
        }
        st.onClose = () -> streamsByConnection.computeIfPresent(connection, (k, v) -> v <= 1 ? null : v - 1);
        call.disableAutoRequest();
        RequestRate rate = new RequestRate(limits.maxRequestsPerSecond());
        call.setOnReadyHandler(() -> fromClient(() -> engine.markDirty(st)));
        call.setOnCancelHandler(() -> fromClient(() -> engine.unregister(st, Status.CANCELLED.asRuntimeException())));
        fromClient(() -> {
            if (draining()) {
                refuseLate(st); // admitted just as the drain began, after its streams were ended
                return;
            }
            engine.register(st);
        });
        call.request(1);
        return new StreamObserver<>() {
            @Override
            public void onNext(Q request) {
                fromClient(() -> {
                    onRequest.accept(st, request);
                    readNext(st, call, rate);
                });
            }

            @Override
            public void onError(Throwable t) {
                fromClient(() -> engine.unregister(st, t));
            }

            @Override
            public void onCompleted() {
                fromClient(() -> {
                    engine.unregister(st, null);
                    if (!st.closed || !call.isCancelled()) call.onCompleted();
                });
            }
        };
    }

    private static <Q> StreamObserver<Q> ignoring() {
        return new StreamObserver<>() {
            @Override
            public void onNext(Q value) {}

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        };
    }

    /** Asks the transport for the stream's next request, now or when its request rate allows. */
    private void readNext(AdsStream st, ServerCallStreamObserver<?> call, RequestRate rate) {
        if (st.closed) return;
        long waitNanos = rate.take(System.nanoTime());
        if (waitNanos <= 0) {
            request(call);
            return;
        }
        metrics.limitHit("maxRequestsPerSecond");
        if (!rate.reported) {
            rate.reported = true;
            long dropped = logBudget.take("maxRequestsPerSecond", LogBudget.host(st.peer));
            if (dropped >= 0) {
                log.warn(
                        "{} {} reached maxRequestsPerSecond={}; its requests are read no faster from now on{}",
                        options.server(),
                        st.describe(),
                        options.limits().maxRequestsPerSecond(),
                        LogBudget.dropped(dropped));
            }
        }
        try {
            executor.schedule(() -> request(call), waitNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    private static void request(ServerCallStreamObserver<?> call) {
        try {
            call.request(1);
        } catch (RuntimeException e) {
            // the call has ended
        }
    }

    /** A token bucket of requests per second with a burst of one second's worth; serving thread only. */
    private static final class RequestRate {
        private final double perNano;
        private final double burst;
        private double tokens;
        private long at = System.nanoTime();
        boolean reported;

        RequestRate(int perSecond) {
            this.perNano = perSecond / 1e9;
            this.burst = perSecond;
            this.tokens = perSecond;
        }

        /** Takes a token; returns 0 when one was there, or how long until there is one. */
        long take(long now) {
            tokens = Math.min(burst, tokens + (now - at) * perNano);
            at = now;
            if (tokens >= 1) {
                tokens -= 1;
                return 0;
            }
            return (long) Math.ceil((1 - tokens) / perNano);
        }
    }

    private static void refuseLate(AdsStream st) {
        try {
            st.fail(Status.UNAVAILABLE.withDescription(
                    "meshbridge replica is shutting down; reconnect to another replica"));
        } catch (RuntimeException ignored) {
            // already cancelled by the client
        }
    }

    private static String peer() {
        String p = PEER.get();
        return p == null ? "?" : p;
    }

    /**
     * Counts the streams gRPC itself ends for a request past {@link AdsLimits#maxInboundMessageSize()} (the transport
     * refuses the message with {@code RESOURCE_EXHAUSTED} before the server sees it).
     */
    private final class MessageSizeTracer extends io.grpc.ServerStreamTracer.Factory {
        @Override
        public io.grpc.ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
            return new io.grpc.ServerStreamTracer() {
                @Override
                public void streamClosed(Status status) {
                    String d = status.getDescription();
                    if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED
                            && d != null
                            && d.contains("exceeds maximum")) {
                        metrics.limitHit("maxInboundMessageSize");
                    }
                }
            };
        }
    }

    /** Puts the client's address into the call's context, for logs and the debug pages. */
    private static final class PeerInterceptor implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            String peer = remote instanceof InetSocketAddress i
                    ? i.getAddress().getHostAddress() + ":" + i.getPort()
                    : String.valueOf(remote);
            java.net.InetAddress address = remote instanceof InetSocketAddress i ? i.getAddress() : null;
            return Contexts.interceptCall(
                    Context.current().withValue(PEER, peer).withValue(PEER_ADDRESS, address), call, headers, next);
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
}
