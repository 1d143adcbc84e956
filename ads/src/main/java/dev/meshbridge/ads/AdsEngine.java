package dev.meshbridge.ads;

import com.google.protobuf.Value;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.Status;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ADS protocol and the resource store of one server, run on one serving thread: every stream's subscriptions and
 * pending changes, requests, ACKs and NACKs, and pushes. gRPC callback threads and producers only enqueue work for it
 * ({@link #execute}); the store methods ({@link #put}, {@link #remove}...) are called on that thread by the producer.
 *
 * <p>The policy both servers follow (see the module README):
 *
 * <ol>
 *   <li><b>held first answers</b>: until {@link #markReady} (the registries have synced, or their sync timeouts
 *       passed), requests are recorded but nothing is sent, so a restarted server never answers with a partial
 *       catalog;
 *   <li><b>unknown type URLs</b> are answered with no resources (as "none exist"), logged once per stream and type;
 *       a per-type service asked for another type closes the stream with {@code INVALID_ARGUMENT};
 *   <li><b>absent resources</b>: a Delta subscription by name to a resource that does not exist is answered with the
 *       name in {@code removed_resources}, so the client need not wait for its does-not-exist timer; SotW answers
 *       without it;
 *   <li><b>NACKs</b>: the client keeps its last accepted state; the NACK is logged (once per distinct error), counted
 *       and shown on the debug page; the rejected version is not sent again (no resend loop), the next change is;
 *   <li><b>make before break</b>: in one push, additions and changes go out first (in {@link
 *       ResourceTypes#pushOrder()}), removals after them (in {@link ResourceTypes#removalOrder()}); a
 *       state-of-the-world response sent before a removal still carries the removed resource;
 *   <li><b>pacing</b>: with a minimum push interval, a stream gets at most one push of changes per interval; changes
 *       that come in between are merged into the next push. Answers a client is owed (a new subscription) are not
 *       paced;
 *   <li><b>flow control</b>: a stream whose transport is not ready keeps its pending changes, coalesced, until it is.
 * </ol>
 *
 * <p>Versions are content hashes: per resource, and per stream a version of the view the client holds (an
 * order-independent sum), so replicas give equal versions and a reconnecting client that already holds what it
 * subscribes to is sent nothing.
 */
public final class AdsEngine {

    private static final Logger log = LoggerFactory.getLogger(AdsEngine.class);

    /** How many node roles a server may tell apart. */
    public static final int MAX_ROLES = 8;

    /** The mask of a resource every role's wildcard subscriptions include. */
    public static final int ALL_ROLES = (1 << MAX_ROLES) - 1;

    private static final ResourceType UNKNOWN_TYPE = ResourceType.of("unknown", "unknown", true);

    /** Gives a node its role, an int below {@link #MAX_ROLES}; see {@link AdsOptions}. */
    @FunctionalInterface
    public interface RoleClassifier {
        int role(Node node);
    }

    private final String server;
    private final ResourceTypes types;
    private final TypeIndex[] indexes;
    private final TypeIndex unknownIndex = new TypeIndex(UNKNOWN_TYPE);
    private final AdsMetrics metrics;
    private final Clock clock;
    private final ScheduledExecutorService executor;
    private final long paceMillis;
    private final AdsLimits limits;
    /** Lines per minute for each kind of event a client causes (unknown types, NACKs, limits, stream ends). */
    private final LogBudget logBudget = LogBudget.perMinute(20);

    private java.util.function.BiPredicate<ResourceType, AdsStream> access = (type, st) -> true;
    private final List<AdsStream> streams = new ArrayList<>();
    private final List<AdsStream> dirty = new ArrayList<>();
    /** A flush queued with the producers' tasks (ahead of the clients' requests), or with the clients' tasks. */
    private final Runnable flushTask = () -> {
        flushScheduled = false;
        flushDirty();
    };

    private final Runnable lateFlushTask = () -> {
        lateFlushScheduled = false;
        flushDirty();
    };
    /**
     * True while the serving thread runs a client's task (a request, an ACK): the flush it causes is queued behind the
     * clients' tasks queued with it, so that one flush serves them all ({@link AdsServer}'s two queues).
     */
    private java.util.function.BooleanSupplier inClientTask = () -> false;

    private boolean lateFlushScheduled;
    private RoleClassifier roles = node -> 0;
    private List<String> roleNames = List.of("default");
    private boolean flushScheduled;
    private boolean ready;
    private int blocked;
    private long pushes;
    // scratch for the flush, owned by the serving thread
    private int puts;
    private int removals;
    private final IntList done = new IntList();
    /**
     * The Delta wrappers made during one flush, by resource (identity: a new version is a new object), so that a
     * change sent to many streams is wrapped once, not once per stream; emptied at the end of every flush, and never
     * more than {@link #MAX_SHARED_WRAPPERS} (past that, a wrapper is made per response as before).
     */
    private final PerFlush<io.envoyproxy.envoy.service.discovery.v3.Resource> wrappers =
            new PerFlush<>(Resource::delta);
    /** The same for SotW: a resource's {@code Any}, made from its held bytes once per flush, not once per stream. */
    private final PerFlush<com.google.protobuf.Any> anys = new PerFlush<>(Resource::any);

    static final int MAX_SHARED_WRAPPERS = 4096;
    private final Propagation propagation;

    AdsEngine(
            String server,
            ResourceTypes types,
            AdsMetrics metrics,
            Clock clock,
            ScheduledExecutorService executor,
            Duration minPushInterval,
            AdsLimits limits) {
        this.server = Objects.requireNonNull(server, "server");
        this.limits = Objects.requireNonNull(limits, "limits");
        this.types = Objects.requireNonNull(types, "types");
        this.metrics = metrics;
        this.clock = clock;
        this.executor = executor;
        this.paceMillis = minPushInterval.toMillis();
        this.propagation = new Propagation(System::nanoTime, metrics::eventToAck);
        this.indexes = new TypeIndex[types.size()];
        for (ResourceType t : types.pushOrder()) indexes[types.ordinal(t)] = new TypeIndex(t);
    }

    /**
     * An engine with no server and no streams, whose serving thread is the caller's: for measuring a producer's
     * translation and indexing alone (benchmarks).
     */
    public static AdsEngine detached(ResourceTypes types, io.micrometer.core.instrument.MeterRegistry registry) {
        java.util.concurrent.ScheduledThreadPoolExecutor unused =
                new java.util.concurrent.ScheduledThreadPoolExecutor(0);
        unused.shutdown();
        return new AdsEngine(
                "detached",
                types,
                new AdsMetrics("detached", types, registry),
                Clock.systemUTC(),
                unused,
                Duration.ZERO,
                AdsLimits.DEFAULTS);
    }

    /** Sets how nodes get their role, and the names of the roles for the debug page (serving thread or before start). */
    public void roles(RoleClassifier classifier, List<String> names) {
        if (names.isEmpty() || names.size() > MAX_ROLES) throw new IllegalArgumentException("1 to 8 role names");
        this.roles = Objects.requireNonNull(classifier, "classifier");
        this.roleNames = List.copyOf(names);
    }

    public ResourceTypes types() {
        return types;
    }

    /**
     * Restricts a type to some clients (serving thread or before start): a stream that {@code allowed} refuses is
     * answered as if the server did not serve the type (no resources), and the refusal is logged and counted under
     * {@code limits{limit=<limitName>}}. The xDS server uses it to give SDS secrets only to allowed clients.
     */
    public void restrict(ResourceType type, java.util.function.Predicate<java.net.InetAddress> allowed) {
        Objects.requireNonNull(allowed, "allowed");
        java.util.function.BiPredicate<ResourceType, AdsStream> before = access;
        access = (t, st) ->
                before.test(t, st) && (t != type || (st.peerAddress != null && allowed.test(st.peerAddress)));
    }

    AdsLimits limits() {
        return limits;
    }

    /**
     * Forgets the resource names nothing refers to any more (see {@link TypeIndex}); the serving thread calls it after
     * each task.
     */
    void reclaim() {
        int pairs = 0;
        for (TypeIndex idx : indexes) {
            idx.reclaim();
            pairs += idx.subscribers.namedCount();
        }
        unknownIndex.reclaim();
        pairs += unknownIndex.subscribers.namedCount();
        metrics.subscribedNames.set(pairs);
    }

    /** How many names have an id in every index now (tests: the subscriptions clients ever made do not pile up). */
    int liveNames() {
        int n = unknownIndex.liveNames();
        for (TypeIndex idx : indexes) n += idx.liveNames();
        return n;
    }

    private int subscribedPairs() {
        int pairs = unknownIndex.subscribers.namedCount();
        for (TypeIndex idx : indexes) pairs += idx.subscribers.namedCount();
        return pairs;
    }

    /** Writes a line of a kind of client-caused event if the budget allows (see {@link LogBudget}). */
    private void limited(String kind, AdsStream st, boolean warn, String format, Object... args) {
        if (warn ? !log.isWarnEnabled() : !log.isInfoEnabled()) return;
        long dropped = logBudget.take(kind, LogBudget.host(st.peer));
        if (dropped < 0) return;
        String f = format + LogBudget.dropped(dropped);
        if (warn) log.warn(f, args);
        else log.info(f, args);
    }

    /**
     * Ends a stream that passed a limit: {@code RESOURCE_EXHAUSTED} naming the limit, counted and logged
     * (rate-limited).
     */
    void refuse(AdsStream st, String limit, long value, String detail) {
        metrics.limitHit(limit);
        limited(
                "limit",
                st,
                true,
                "{} {} reached {}={} ({}); the stream is ended with RESOURCE_EXHAUSTED",
                server,
                st.describe(),
                limit,
                value,
                detail);
        unregister(st, null, true);
        try {
            st.fail(Status.RESOURCE_EXHAUSTED.withDescription(
                    limit + "=" + value + " reached: " + detail + " (" + server + ".limits." + limit + ")"));
        } catch (RuntimeException ignored) {
            // already cancelled by the client
        }
    }

    /** Whether a request may name {@code adding} more resources on this subscription, which now names {@code has}. */
    private boolean namesAllowed(AdsStream st, int has, int total, int adding) {
        if (total > limits.maxNamesPerSubscription()) {
            refuse(
                    st,
                    "maxNamesPerSubscription",
                    limits.maxNamesPerSubscription(),
                    "a subscription of " + total + " names");
            return false;
        }
        if (st.named - has + total > limits.maxNamesPerStream()) {
            refuse(
                    st,
                    "maxNamesPerStream",
                    limits.maxNamesPerStream(),
                    (st.named - has + total) + " names over the stream's types");
            return false;
        }
        if (adding > 0 && subscribedPairs() + adding > limits.maxSubscribedNames()) {
            refuse(
                    st,
                    "maxSubscribedNames",
                    limits.maxSubscribedNames(),
                    "the server holds " + subscribedPairs() + " subscribed names");
            return false;
        }
        return true;
    }

    /** Runs a task on the serving thread, after what is queued already. */
    public void execute(Runnable task) {
        executor.execute(task);
    }

    // ------------------------------------------------------------------ the store (serving thread only)

    /** Serves a resource to every role; returns true when its version changed. */
    public boolean put(ResourceType type, Resource r) {
        return put(type, r, ALL_ROLES);
    }

    /**
     * Serves a resource.
     *
     * @param roleMask the roles whose wildcard subscriptions include it (bit {@code 1 << role}); a client of any role
     *     still gets it by naming it
     * @return true when its version or its roles changed
     */
    public boolean put(ResourceType type, Resource r, int roleMask) {
        return put(type, slot(type, r.name()), r, roleMask);
    }

    /**
     * The slot of a name in the store of a type, given to the name when it has none: a producer that looks a resource
     * up before it puts it ({@link #get(ResourceType, int)}, {@link #put(ResourceType, int, Resource, int)}) looks its
     * name up once, not twice, in a table of 100,000s. Valid within the task of the serving thread that took it (names
     * are reclaimed between tasks).
     */
    public int slot(ResourceType type, String name) {
        return index(type).id(name);
    }

    /** The resource served in a {@linkplain #slot slot}, or null. */
    public Resource get(ResourceType type, int slot) {
        return index(type).get(slot);
    }

    /**
     * {@link #put(ResourceType, Resource, int)} into the {@linkplain #slot slot} of the resource's name.
     *
     * @return true when its version or its roles changed
     */
    public boolean put(ResourceType type, int slot, Resource r, int roleMask) {
        TypeIndex idx = index(type);
        int id = slot;
        long current = idx.version(id);
        int oldMask = idx.roleMask(id);
        int mask = r.wildcard() ? roleMask : 0;
        if (current == r.versionHash() && oldMask == mask) return false;
        long old = idx.put(id, r, roleMask);
        changed(idx, id, old, oldMask | mask);
        return true;
    }

    /** Stops serving a resource; returns true when it was served. */
    public boolean remove(ResourceType type, String name) {
        TypeIndex idx = index(type);
        int id = idx.find(name);
        if (id < 0 || idx.get(id) == null) return false;
        int oldMask = idx.roleMask(id);
        long old = idx.remove(id, watched(idx, id, oldMask));
        changed(idx, id, old, oldMask);
        return true;
    }

    /** Stops serving a resource if the served one has this version (a name another producer took stays). */
    public boolean removeIfVersion(ResourceType type, String name, long version) {
        TypeIndex idx = index(type);
        int id = idx.find(name);
        if (id < 0 || idx.version(id) != version) return false;
        return remove(type, name);
    }

    /** The resource served under a name, or null. */
    public Resource get(ResourceType type, String name) {
        TypeIndex idx = index(type);
        int id = idx.find(name);
        return id < 0 ? null : idx.get(id);
    }

    /** How many resources of a type are served. */
    public int size(ResourceType type) {
        return index(type).size();
    }

    /** Visits every served resource of a type. */
    public void forEach(ResourceType type, Consumer<Resource> action) {
        TypeIndex idx = index(type);
        for (int id = 0; id < idx.idLimit(); id++) {
            Resource r = idx.get(id);
            if (r != null) action.accept(r);
        }
    }

    /**
     * Applies a change on the serving thread and measures it: the time from {@code eventNanos} (the {@link
     * System#nanoTime()} of the registry event behind it; 0 when unknown) to the ACK of the last client whose
     * subscription it touched is recorded as {@code meshbridge.<server>.event.to.ack}.
     */
    public void applyChange(long eventNanos, Runnable puts) {
        propagation.begin(eventNanos);
        try {
            puts.run();
        } finally {
            propagation.end();
        }
    }

    /**
     * Sets what runs before a stream's first request of a type is answered (serving thread): a producer that holds
     * back some of its puts (the MCP server paces small snapshots) brings the store up to date there, so that a new
     * subscription is answered with the newest state. Only a first request, not each ACK (istiod sends a nonce even
     * with its first one). It must be cheap when there is nothing to do.
     */
    public void beforeFirstRequest(Runnable hook) {
        beforeFirstRequest = Objects.requireNonNull(hook, "hook");
    }

    private Runnable beforeFirstRequest = () -> {};

    /** Updates the resource gauges; producers call it after applying a batch. */
    public void publishCounts() {
        for (ResourceType t : types.pushOrder()) metrics.resources(t, index(t).size());
    }

    TypeIndex index(ResourceType type) {
        return indexes[types.ordinal(type)];
    }

    /** Whether some stream subscribes to the resource (by name, or by wildcard of a role that sees it). */
    private static boolean watched(TypeIndex idx, int id, int roleMask) {
        if (!idx.subscribers.naming(id).isEmpty()) return true;
        for (int role = 0; role < MAX_ROLES; role++) {
            if ((roleMask & (1 << role)) != 0 && !idx.subscribers.wildcard(role).isEmpty()) return true;
        }
        return false;
    }

    private void changed(TypeIndex idx, int id, long oldVersion, int roleMask) {
        // only the subscribers of this resource: a change costs O(its subscribers), not O(streams)
        Subscribers subs = idx.subscribers;
        if (roleMask != 0) {
            for (int role = 0; role < MAX_ROLES; role++) {
                if ((roleMask & (1 << role)) == 0) continue;
                for (TypeState ts : subs.wildcard(role)) changedFor(ts, id, oldVersion);
            }
        }
        for (TypeState ts : subs.naming(id)) {
            if (!(ts.wildcard && (roleMask & (1 << ts.stream.role)) != 0)) changedFor(ts, id, oldVersion);
        }
    }

    private void changedFor(TypeState ts, int id, long oldVersion) {
        if (!ts.requested || ts.stream.closed) return;
        ts.changed(id, oldVersion);
        propagation.attribute(ts.owed);
        markDirty(ts.stream);
    }

    // ------------------------------------------------------------------ held first answers

    /** Lets the server answer (idempotent): the catalog holds every registry's first sync, or the wait is over. */
    public void markReady(String why) {
        if (ready) return;
        ready = true;
        metrics.holding(false);
        StringBuilder counts = new StringBuilder();
        for (ResourceType t : types.pushOrder()) {
            if (!counts.isEmpty()) counts.append(' ');
            counts.append(t.name()).append('=').append(index(t).size());
        }
        log.info("{} server answering ({}): streams={} resources {}", server, why, streams.size(), counts);
        for (AdsStream st : streams) markDirty(st);
        scheduleFlush();
    }

    public boolean ready() {
        return ready;
    }

    // ------------------------------------------------------------------ streams

    void register(AdsStream st) {
        streams.add(st);
        metrics.streamOpened();
        log.debug("{} {} opened api={} mode={}", server, st.describe(), st.api(), st.mode.tag());
    }

    void unregister(AdsStream st, Throwable error) {
        unregister(st, error, false);
    }

    private void unregister(AdsStream st, Throwable error, boolean quiet) {
        if (!streams.remove(st)) return;
        st.closed = true;
        if (st.onClose != null) st.onClose.run();
        if (st.blocked) {
            st.blocked = false;
            blocked--;
        }
        st.forEachState(TypeState::unsubscribeAll);
        st.forEachState(ts -> ts.owed.releaseAll(propagation));
        metrics.streamClosed(st);
        if (quiet) return;
        if (error == null) {
            limited("stream-end", st, false, "{} {} closed by the client", server, st.describe());
        } else {
            limited("stream-end", st, false, "{} {} ended: {}", server, st.describe(), Status.fromThrowable(error));
        }
    }

    /** Ends every stream with this status (shutting down). */
    void completeAll(Status status) {
        for (AdsStream st : List.copyOf(streams)) {
            unregister(st, status.asRuntimeException());
            try {
                if (status.isOk()) st.complete();
                else st.fail(status);
            } catch (RuntimeException ignored) {
                // already cancelled by the client
            }
        }
    }

    void onSotwRequest(AdsStream st, DiscoveryRequest req) {
        Instant now = clock.instant();
        String nonce = req.getResponseNonce();
        TypeState ts = answered(
                st,
                req.hasNode() ? req.getNode() : null,
                req.getTypeUrl(),
                nonce,
                req.hasErrorDetail() ? req.getErrorDetail() : null,
                req.getVersionInfo(),
                now);
        if (ts == null) return;
        // a request answering an older response is stale: the client answers the latest one too
        if (!nonce.isEmpty() && ts.lastSentNonce != null && !ts.isLastSent(AdsStream.nonceNumber(nonce))) return;
        boolean first = !ts.requested;
        ts.requested = true;
        if (first) beforeFirstRequest.run();
        // clients repeat their whole subscription on every ACK (an Envoy: every cluster's name): skip it unchanged
        long namesHash = namesHash(req);
        if (!first && namesHash == ts.namesHash) return;
        ts.namesHash = namesHash;
        List<String> names = req.getResourceNamesList();
        int has = ts.names.cardinality();
        if (!namesAllowed(st, has, names.size(), names.size() - has)) return;
        boolean star = names.contains("*");
        boolean wildcard = star || (names.isEmpty() && (first || ts.legacyWildcard));
        TypeIndex idx = ts.index;
        BitSet requested = new BitSet();
        for (String n : names) {
            if (!n.equals("*")) requested.set(idx.id(n));
        }
        if (first) {
            metrics.typeRequested(st, ts);
            ts.wildcard(wildcard);
            ts.legacyWildcard = wildcard && !star;
            ts.names(requested);
            long current = currentViewSum(ts);
            String version = req.getVersionInfo();
            if (!version.isEmpty() && version.equals(TypeState.versionOf(current))) {
                // a reconnecting client that already holds exactly this view: nothing to resend
                ts.viewSum = current;
                ts.resumed(version, now);
                log.debug(
                        "{} {} type={} resumes at version={}",
                        server,
                        st.describe(),
                        Printable.of(ts.typeUrl),
                        version);
                return;
            }
            forEachSubscribed(ts, id -> ts.added(id, TypeIndex.ABSENT));
            // a full-state type is always answered; a partial one (EDS, RDS) only with what exists
            ts.respond = ts.type().fullState();
            markDirty(st);
            return;
        }
        ts.legacyWildcard = wildcard && !star;
        if (wildcard == ts.wildcard && requested.equals(ts.names)) return;
        updateSubscription(ts, wildcard, requested, TypeIndex.ABSENT);
        if (ts.type().fullState()) ts.respond = true;
        markDirty(st);
    }

    void onDeltaRequest(AdsStream st, DeltaDiscoveryRequest req) {
        Instant now = clock.instant();
        TypeState ts = answered(
                st,
                req.hasNode() ? req.getNode() : null,
                req.getTypeUrl(),
                req.getResponseNonce(),
                req.hasErrorDetail() ? req.getErrorDetail() : null,
                null,
                now);
        if (ts == null) return;
        boolean first = !ts.requested;
        TypeIndex idx = ts.index;
        Map<String, String> initial = first ? req.getInitialResourceVersionsMap() : Map.of();
        List<String> subscribe = req.getResourceNamesSubscribeList();
        List<String> unsubscribe = req.getResourceNamesUnsubscribeList();
        if (initial.size() > limits.maxNamesPerSubscription()) {
            refuse(
                    st,
                    "maxNamesPerSubscription",
                    limits.maxNamesPerSubscription(),
                    "initial_resource_versions of " + initial.size() + " names");
            return;
        }
        // an ACK subscribes to nothing new: no limit to check, and no count of the names (a scan of the id bitmap)
        if (!subscribe.isEmpty()) {
            int has = ts.names.cardinality();
            if (!namesAllowed(st, has, has + subscribe.size(), subscribe.size())) return;
        }
        ts.requested = true;
        if (first) beforeFirstRequest.run();
        boolean wildcard = ts.wildcard;
        if (first && subscribe.isEmpty()) wildcard = true;
        if (subscribe.contains("*")) wildcard = true;
        if (unsubscribe.contains("*")) wildcard = false;
        if (first) metrics.typeRequested(st, ts);

        int role = st.role;
        if (wildcard && !ts.wildcard) {
            ts.wildcard(true);
            idx.forEachWildcard(role, id -> {
                if (!ts.names.get(id)) ts.added(id, clientVersion(initial, idx.name(id), TypeIndex.ABSENT));
            });
        }
        for (String n : subscribe) {
            if (n.equals("*")) continue;
            int id = idx.id(n);
            if (ts.names.get(id)) continue;
            boolean already = ts.subscribes(id);
            ts.name(id, true);
            if (!already) ts.added(id, clientVersion(initial, n, TypeIndex.UNKNOWN));
        }
        for (String n : unsubscribe) {
            if (n.equals("*")) continue;
            int id = idx.find(n);
            if (id < 0 || !ts.names.get(id)) continue;
            ts.name(id, false);
            if (!(ts.wildcard && idx.wildcardVisible(id, role))) ts.dropped(id);
        }
        if (!wildcard && ts.wildcard) {
            ts.wildcard(false);
            idx.forEachWildcard(role, id -> {
                if (!ts.names.get(id)) ts.dropped(id);
            });
        }
        if (first && ts.wildcard) {
            // what the client holds that no longer exists: tell it, as removals
            for (Map.Entry<String, String> e : initial.entrySet()) {
                int id = idx.id(e.getKey());
                if (ts.currentVersion(id) == TypeIndex.ABSENT && !ts.names.get(id) && !ts.pending.containsKey(id)) {
                    ts.added(id, clientVersion(initial, e.getKey(), TypeIndex.UNKNOWN));
                }
            }
        }
        if (first && initial.isEmpty()) ts.respond = true;
        if (first && !initial.isEmpty() && ts.pending.isEmpty()) {
            // a reconnecting client that already holds every subscribed version: nothing to resend
            ts.resumed(ts.viewVersion(), now);
        }
        // an ACK (or NACK) that changed nothing owes no push: no flush visit of the stream for it (one ACK per stream
        // and change, 10,000 of them after a change to 10,000 streams)
        if (first || ts.respond || !ts.pending.isEmpty() || ts.owed.hasPending()) markDirty(st);
    }

    private static long namesHash(DiscoveryRequest req) {
        Hash64 h = new Hash64().putInt(req.getResourceNamesCount());
        for (int i = 0; i < req.getResourceNamesCount(); i++) {
            h.putString(req.getResourceNames(i));
        }
        return h.finish();
    }

    /**
     * The common part of a request: the node, the type's state (null when the request is to be ignored), and the
     * ACK or NACK it carries for the response with {@code nonce}.
     *
     * @param ackedVersion the version the client says it holds (SotW); null to take the version sent with the nonce
     */
    private TypeState answered(
            AdsStream st,
            Node node,
            String typeUrl,
            String nonce,
            com.google.rpc.Status error,
            String ackedVersion,
            Instant now) {
        if (st.closed) return null;
        st.node(node);
        if (!st.roleKnown) {
            // the role comes from the node of the first request, never from a later guess
            st.roleKnown = true;
            int role = st.node == null ? 0 : roles.role(st.node);
            st.role = role < 0 || role >= MAX_ROLES ? 0 : role;
        }
        TypeState ts = typeState(st, typeUrl);
        if (ts == null || nonce.isEmpty()) return ts;
        long nonceNumber = AdsStream.nonceNumber(nonce);
        int slot = ts.slotOfNonce(nonceNumber);
        if (slot < 0) return ts; // not a nonce of ours (istiod's first request carries a timestamp)
        String sentVersion = ts.versionInSlot(slot);
        if (error != null) {
            nack(st, ts, nonce, slot, sentVersion, error.getMessage(), now);
        } else {
            ts.recordAck(nonceNumber, ackedVersion != null ? ackedVersion : sentVersion, now);
            ts.owed.acked(propagation, slot, ts.oldestSlot());
            metrics.ack(ts);
        }
        return ts;
    }

    private TypeState typeState(AdsStream st, String typeUrl) {
        if (typeUrl.isEmpty() && st.fixedType != null) typeUrl = st.fixedType.typeUrl();
        int u = types.urlOrdinal(typeUrl);
        if (u >= 0 && (st.fixedType == null || types.typeOfUrl(u) == st.fixedType)) {
            if (!access.test(types.typeOfUrl(u), st)) return refusedType(st, typeUrl);
            return st.stateOrCreate(u, index(types.typeOfUrl(u)), typeUrl);
        }
        if (st.fixedType != null) {
            limited(
                    "wrong-type",
                    st,
                    true,
                    "{} {} asked for type={} on the {} service; closing it",
                    server,
                    st.describe(),
                    Printable.of(typeUrl),
                    st.api());
            unregister(st, null);
            st.fail(Status.INVALID_ARGUMENT.withDescription(
                    "this is the " + st.api() + " service; it serves only " + st.fixedType.typeUrl()));
            return null;
        }
        TypeState ts = st.unknown.get(typeUrl);
        if (ts != null) return ts;
        if (typeUrl.isEmpty()) {
            limited("unknown-type", st, true, "{} {} sent a request with no type; ignored", server, st.describe());
            return null;
        }
        if (st.unknown.size() >= limits.maxUnknownTypesPerStream()) {
            refuse(
                    st,
                    "maxUnknownTypesPerStream",
                    limits.maxUnknownTypesPerStream(),
                    "asked for type=" + Printable.of(typeUrl) + " after " + st.unknown.size()
                            + " types the server does not serve");
            return null;
        }
        ts = new TypeState(unknownIndex, st, typeUrl, true);
        st.unknown.put(typeUrl, ts);
        limited(
                "unknown-type",
                st,
                false,
                "{} {} asked for type={}, which this server does not serve; answered with no resources",
                server,
                st.describe(),
                Printable.of(typeUrl));
        return ts;
    }

    /** A type the client may not have ({@link #restrict}): answered as one the server does not serve. */
    private TypeState refusedType(AdsStream st, String typeUrl) {
        TypeState ts = st.unknown.get(typeUrl);
        if (ts != null) return ts;
        ts = new TypeState(unknownIndex, st, typeUrl, true);
        st.unknown.put(typeUrl, ts);
        metrics.limitHit(
                "restricted:" + types.typeOfUrl(types.urlOrdinal(typeUrl)).name());
        limited(
                "restricted",
                st,
                true,
                "{} {} asked for type={}, which this client is not allowed; answered with no resources",
                server,
                st.describe(),
                Printable.of(typeUrl));
        return ts;
    }

    private void nack(
            AdsStream st, TypeState ts, String nonce, int slot, String rejected, String message, Instant now) {
        boolean repeated = ts.lastNack != null && message.equals(ts.lastNack.message());
        ts.recordNack(nonce, rejected, message, now);
        ts.owed.nacked(propagation, slot);
        metrics.nack(ts);
        if (repeated) {
            log.debug(
                    "{} NACK again node={} type={} version={}",
                    server,
                    st.describe(),
                    Printable.of(ts.typeUrl),
                    rejected);
        } else {
            limited(
                    "nack",
                    st,
                    true,
                    "{} NACK {} cluster={} type={} version={} nonce={} error={}; the client keeps its last accepted"
                            + " state, the rejected version is not sent again",
                    server,
                    st.describe(),
                    Printable.of(st.nodeCluster),
                    Printable.of(ts.typeUrl),
                    rejected,
                    nonce,
                    Printable.of(message));
        }
    }

    private static long clientVersion(Map<String, String> initial, String name, long otherwise) {
        String v = initial.get(name);
        if (v == null) return otherwise;
        long parsed = TypeState.parseVersion(v);
        return parsed == TypeIndex.ABSENT ? TypeIndex.UNKNOWN : parsed;
    }

    /** Moves a SotW subscription to a new wildcard flag and name set. */
    private static void updateSubscription(TypeState ts, boolean wildcard, BitSet requested, long clientVersion) {
        TypeIndex idx = ts.index;
        int role = ts.stream.role;
        BitSet candidates = (BitSet) ts.names.clone();
        candidates.or(requested);
        if (wildcard != ts.wildcard) idx.forEachWildcard(role, candidates::set);
        boolean[] before = new boolean[candidates.length()];
        for (int id = candidates.nextSetBit(0); id >= 0; id = candidates.nextSetBit(id + 1)) {
            before[id] = ts.subscribes(id);
        }
        // drop with the old subscription in place (sentVersion needs it), add with the new one
        for (int id = candidates.nextSetBit(0); id >= 0; id = candidates.nextSetBit(id + 1)) {
            boolean after = (wildcard && idx.wildcardVisible(id, role)) || requested.get(id);
            if (before[id] && !after) ts.dropped(id);
        }
        ts.wildcard(wildcard);
        ts.names(requested);
        for (int id = candidates.nextSetBit(0); id >= 0; id = candidates.nextSetBit(id + 1)) {
            if (!before[id] && ts.subscribes(id)) ts.added(id, clientVersion);
        }
    }

    /** The view sum the subscription would have if the client held every current version. */
    private static long currentViewSum(TypeState ts) {
        TypeIndex idx = ts.index;
        int role = ts.stream.role;
        long sum = ts.wildcard ? idx.wildcardSum(role) : 0;
        for (int id = ts.names.nextSetBit(0); id >= 0; id = ts.names.nextSetBit(id + 1)) {
            if (ts.wildcard && idx.wildcardVisible(id, role)) continue;
            sum += idx.contribution(id, idx.version(id));
        }
        return sum;
    }

    private static void forEachSubscribed(TypeState ts, IntConsumer action) {
        TypeIndex idx = ts.index;
        int role = ts.stream.role;
        if (ts.wildcard) idx.forEachWildcard(role, action);
        for (int id = ts.names.nextSetBit(0); id >= 0; id = ts.names.nextSetBit(id + 1)) {
            if (ts.wildcard && idx.wildcardVisible(id, role)) continue;
            action.accept(id);
        }
    }

    // ------------------------------------------------------------------ pushes

    void markDirty(AdsStream st) {
        if (st.closed) return;
        if (!st.dirty) {
            st.dirty = true;
            dirty.add(st);
        }
        scheduleFlush();
    }

    /**
     * Queues a flush in the queue of the running task, unless one is queued there already: a change's push does not
     * wait for a flush queued behind the clients' requests, and a request's answer does not count on a flush in the
     * producers' queue (the server's {@code idle()} follows each queue).
     */
    private void scheduleFlush() {
        if (dirty.isEmpty() || !ready) return;
        if (inClientTask.getAsBoolean()) {
            if (lateFlushScheduled) return;
            lateFlushScheduled = true;
            executor.execute(lateFlushTask);
            return;
        }
        if (flushScheduled) return;
        flushScheduled = true;
        executor.execute(flushTask);
    }

    /** Tells the engine when the serving thread runs a client's task (see {@link #inClientTask}). */
    void clientTasks(java.util.function.BooleanSupplier inClientTask) {
        this.inClientTask = Objects.requireNonNull(inClientTask, "inClientTask");
    }

    /** Sends what is pending to every dirty stream whose transport is ready (nothing while answers are held). */
    void flushDirty() {
        if (dirty.isEmpty() || !ready) return;
        List<AdsStream> batch = new ArrayList<>(dirty);
        dirty.clear();
        long now = paceMillis > 0 ? clock.millis() : 0;
        for (AdsStream st : batch) {
            st.dirty = false;
            if (st.closed) continue;
            if (paceMillis > 0 && paced(st, now)) continue;
            try {
                flush(st);
            } catch (RuntimeException e) {
                log.warn("{} {} push failed; closing the stream", server, st.describe(), e);
                unregister(st, e);
                try {
                    st.fail(Status.INTERNAL.withDescription("push failed: " + e.getMessage()));
                } catch (RuntimeException ignored) {
                    // already gone
                }
            }
        }
        wrappers.clear();
        anys.clear();
        if (blocked == 0) {
            // every stream was told of every removal: the bodies kept for make-before-break can go
            for (TypeIndex idx : indexes) idx.clearRetired();
        }
    }

    /** True when the stream's last push is too recent: the push waits, and what changes meanwhile merges into it. */
    private boolean paced(AdsStream st, long now) {
        if (st.lastPushAt == 0) return false;
        if (st.paceReleased) {
            st.paceReleased = false;
            return false;
        }
        long due = st.lastPushAt + paceMillis;
        if (now >= due) return false;
        boolean[] owed = {false};
        st.forEachState(ts -> owed[0] |= ts.respond);
        if (owed[0]) return false;
        if (!st.paceScheduled) {
            st.paceScheduled = true;
            metrics.paced();
            executor.schedule(
                    () -> {
                        // the interval has passed on the scheduler's clock: push what merged meanwhile
                        st.paceScheduled = false;
                        st.paceReleased = true;
                        markDirty(st);
                    },
                    due - now,
                    TimeUnit.MILLISECONDS);
        }
        return true;
    }

    private void flush(AdsStream st) {
        long before = pushes;
        boolean complete = flushPasses(st);
        // changes that needed no response (the client held them already) are owed no ACK
        for (TypeState ts : st.states()) {
            if (ts != null && ts.pending.isEmpty() && ts.owed.hasPending()) ts.owed.releasePending(propagation);
        }
        if (!st.unknown.isEmpty()) {
            for (TypeState ts : st.unknown.values()) {
                if (ts.pending.isEmpty() && ts.owed.hasPending()) ts.owed.releasePending(propagation);
            }
        }
        if (complete && st.blocked) {
            st.blocked = false;
            blocked--;
        } else if (!complete && !st.blocked) {
            st.blocked = true; // the ready callback marks the stream dirty again
            blocked++;
        }
        if (pushes != before && paceMillis > 0) st.lastPushAt = clock.millis();
    }

    /**
     * Additions and changes in push order, then removals in removal order; false when the transport filled up. A push
     * that touches one type only goes out as one response.
     */
    private boolean flushPasses(AdsStream st) {
        // once per stream and flush (10,000 times for a change to 10,000 streams): no lambda, no iterator
        TypeState only = null;
        int touched = 0;
        for (TypeState ts : st.states()) {
            if (ts != null && ts.requested && (!ts.pending.isEmpty() || ts.respond)) {
                touched++;
                only = ts;
            }
        }
        if (!st.unknown.isEmpty()) {
            for (TypeState ts : st.unknown.values()) {
                if (ts.requested && (!ts.pending.isEmpty() || ts.respond)) {
                    touched++;
                    only = ts;
                }
            }
        }
        if (touched == 0) return true;
        if (touched == 1) return flushRest(st, only);
        for (ResourceType t : types.pushOrder()) {
            for (int u : types.urlOrdinalsOf(t)) {
                TypeState ts = st.state(u);
                if (ts != null && ts.requested && !flushAdditions(st, ts)) return false;
            }
        }
        for (TypeState ts : st.unknown.values()) {
            if (ts.requested && !flushAdditions(st, ts)) return false;
        }
        for (ResourceType t : types.removalOrder()) {
            for (int u : types.urlOrdinalsOf(t)) {
                TypeState ts = st.state(u);
                if (ts != null && ts.requested && !flushRest(st, ts)) return false;
            }
        }
        return true;
    }

    /** Counts the pending entries of a subscription into {@link #puts} and {@link #removals}. */
    private void classify(TypeState ts) {
        puts = 0;
        removals = 0;
        ts.pending.forEach((id, was) -> {
            long current = ts.currentVersion(id);
            if (current == TypeIndex.ABSENT) {
                if (was != TypeIndex.ABSENT) removals++;
            } else if (current != was) {
                puts++;
            }
        });
    }

    private boolean flushAdditions(AdsStream st, TypeState ts) {
        if (ts.pending.isEmpty() && !ts.respond) return true;
        classify(ts);
        if (puts == 0 && !(ts.respond && removals == 0)) {
            if (removals == 0) {
                // only entries the client already holds: nothing to send
                ts.pending.forEach(ts::sent);
                ts.clearPending();
            }
            return true; // removals go out in the second pass
        }
        if (!st.isReady()) return false;
        TypeIndex idx = ts.index;
        done.clear();
        if (st.mode == AdsStream.Mode.SOTW) {
            SotwResponse.Builder b = new SotwResponse.Builder(ts.typeUrl);
            boolean full = ts.type().fullState();
            ts.pending.forEach((id, was) -> {
                long current = ts.currentVersion(id);
                if (current == TypeIndex.ABSENT) {
                    if (full && was != TypeIndex.ABSENT && was != TypeIndex.UNKNOWN) {
                        // removed in this push: still carried until the removal pass (make before break)
                        Resource held = idx.get(id) != null ? idx.get(id) : idx.retired(id);
                        if (held != null) carry(b, held);
                    }
                    if (was == TypeIndex.ABSENT) done.add(id);
                    return;
                }
                done.add(id);
                if (!full) carry(b, idx.get(id));
            });
            finish(ts);
            if (full) {
                forEachSubscribed(ts, id -> {
                    Resource r = idx.get(id);
                    if (r != null) carry(b, r);
                });
            }
            sendSotw(st, ts, b);
        } else {
            DeltaDiscoveryResponse.Builder b =
                    DeltaDiscoveryResponse.newBuilder().setTypeUrl(ts.typeUrl);
            ts.pending.forEach((id, was) -> {
                long current = ts.currentVersion(id);
                if (current == TypeIndex.ABSENT) {
                    if (was == TypeIndex.ABSENT) done.add(id);
                    return;
                }
                done.add(id);
                if (current != was) b.addResources(deltaOf(idx.get(id)));
            });
            finish(ts);
            sendDelta(st, ts, b);
        }
        return true;
    }

    /** A resource's Delta wrapper, shared by every response of the current flush that carries this version. */
    private io.envoyproxy.envoy.service.discovery.v3.Resource deltaOf(Resource r) {
        return wrappers.of(r);
    }

    /**
     * Adds a resource to a SotW response: held packed, as itself (unpacked only when the response is written); else as
     * its Any, shared by every response of the current flush that carries this version.
     */
    private void carry(SotwResponse.Builder b, Resource r) {
        if (r.packedValue() != null) b.addPacked(r);
        else b.add(anyOf(r));
    }

    /** A resource's {@code Any}, shared by every SotW response of the current flush that carries this version. */
    private com.google.protobuf.Any anyOf(Resource r) {
        return anys.of(r);
    }

    /** What one flush made from a resource version, made once and shared by every stream; at most the cap. */
    private static final class PerFlush<V> {
        private final java.util.IdentityHashMap<Resource, V> made = new java.util.IdentityHashMap<>();
        private final java.util.function.Function<Resource, V> make;

        PerFlush(java.util.function.Function<Resource, V> make) {
            this.make = make;
        }

        V of(Resource r) {
            V v = made.get(r);
            if (v != null) return v;
            v = make.apply(r);
            if (made.size() < MAX_SHARED_WRAPPERS) made.put(r, v);
            return v;
        }

        void clear() {
            made.clear();
        }
    }

    /** Marks the entries in {@link #done} as sent and takes them off the pending set. */
    private void finish(TypeState ts) {
        for (int i = 0; i < done.size; i++) {
            int id = done.values[i];
            ts.sent(id, ts.pending.get(id, TypeIndex.ABSENT));
            ts.unpend(id);
        }
        done.clear();
    }

    /** Sends everything still pending on a subscription: its removals, and whatever else is left. */
    private boolean flushRest(AdsStream st, TypeState ts) {
        if (ts.pending.isEmpty() && !ts.respond) return true;
        if (!st.isReady()) return false;
        TypeIndex idx = ts.index;
        if (st.mode == AdsStream.Mode.SOTW) {
            SotwResponse.Builder b = new SotwResponse.Builder(ts.typeUrl);
            boolean full = ts.type().fullState();
            ts.pending.forEach((id, was) -> {
                long current = ts.currentVersion(id);
                if (!full && current != TypeIndex.ABSENT) carry(b, idx.get(id));
                ts.sent(id, was);
            });
            ts.clearPending();
            if (full) {
                forEachSubscribed(ts, id -> {
                    Resource r = idx.get(id);
                    if (r != null) carry(b, r);
                });
            } else if (b.count() == 0 && !ts.respond) {
                return true; // a partial-state client drops what nothing names any more
            }
            sendSotw(st, ts, b);
        } else {
            DeltaDiscoveryResponse.Builder b =
                    DeltaDiscoveryResponse.newBuilder().setTypeUrl(ts.typeUrl);
            ts.pending.forEach((id, was) -> {
                long current = ts.currentVersion(id);
                if (current == TypeIndex.ABSENT) {
                    if (was != TypeIndex.ABSENT) b.addRemovedResources(idx.name(id));
                } else if (current != was) {
                    b.addResources(deltaOf(idx.get(id)));
                }
                ts.sent(id, was);
            });
            ts.clearPending();
            if (b.getResourcesCount() == 0 && b.getRemovedResourcesCount() == 0 && !ts.respond) return true;
            sendDelta(st, ts, b);
        }
        return true;
    }

    private void sendSotw(AdsStream st, TypeState ts, SotwResponse.Builder b) {
        String nonce = st.nextNonce();
        String version = ts.viewVersion();
        SotwResponse response = b.build(version, nonce);
        st.send(response);
        sent(st, ts, nonce, version, response.serializedSize(), response.resourceCount(), 0);
    }

    private void sendDelta(AdsStream st, TypeState ts, DeltaDiscoveryResponse.Builder b) {
        String nonce = st.nextNonce();
        String version = ts.viewVersion();
        DeltaDiscoveryResponse response =
                b.setSystemVersionInfo(version).setNonce(nonce).build();
        st.send(response);
        sent(
                st,
                ts,
                nonce,
                version,
                response.getSerializedSize(),
                response.getResourcesCount(),
                response.getRemovedResourcesCount());
    }

    private void sent(AdsStream st, TypeState ts, String nonce, String version, int bytes, int resources, int removed) {
        ts.respond = false;
        ts.owed.sent(propagation, ts.recordSent(nonce, version, clock.instant()));
        metrics.pushed(ts, st.mode, bytes);
        pushes++;
        if (log.isDebugEnabled()) {
            log.debug(
                    "{} push {} mode={} type={} version={} nonce={} resources={} removed={} bytes={}",
                    server,
                    st.describe(),
                    st.mode.tag(),
                    Printable.of(ts.typeUrl),
                    version,
                    nonce,
                    resources,
                    removed,
                    bytes);
        }
    }

    // ------------------------------------------------------------------ debug

    /** The most clients a debug page lists (narrow it with a node filter). */
    public static final int MAX_DEBUG_CLIENTS = 1_000;

    /**
     * The connected clients, optionally only those whose node id contains {@code nodeFilter}, at most {@link
     * #MAX_DEBUG_CLIENTS} of them, in the order they connected (serving thread).
     */
    public List<AdsClientView> clients(String nodeFilter, String typeFilter) {
        List<AdsClientView> out = new ArrayList<>();
        for (AdsStream st : streams) {
            if (out.size() >= MAX_DEBUG_CLIENTS) break;
            if (!nodeFilter.isEmpty() && !st.nodeId.contains(nodeFilter)) continue;
            Map<String, AdsClientView.TypeStatus> byType = new LinkedHashMap<>();
            st.forEachState(ts -> {
                if (!ts.requested) return;
                String key = ts.unknown
                        ? ts.typeUrl
                        : ts.typeUrl.equals(ts.type().typeUrl())
                                ? ts.type().name()
                                : ts.type().name() + " (" + ts.typeUrl + ")";
                if (!typeFilter.isEmpty() && !key.equalsIgnoreCase(typeFilter)) return;
                byType.put(key, AdsClientView.TypeStatus.of(ts));
            });
            Map<String, String> meta = new LinkedHashMap<>();
            if (st.node != null && st.node.hasMetadata()) {
                for (Map.Entry<String, Value> f :
                        st.node.getMetadata().getFieldsMap().entrySet()) {
                    if (meta.size() >= 20) break;
                    if (f.getValue().hasStringValue())
                        meta.put(
                                Printable.cut(f.getKey(), 256),
                                Printable.cut(f.getValue().getStringValue(), 256));
                }
            }
            out.add(new AdsClientView(
                    st.id,
                    st.nodeId,
                    st.nodeCluster,
                    st.userAgent,
                    st.role < roleNames.size() ? roleNames.get(st.role) : Integer.toString(st.role),
                    meta,
                    st.peer,
                    st.api(),
                    st.mode.tag(),
                    st.connectedAt.toString(),
                    byType));
        }
        return out;
    }

    /**
     * Counts the streams that have a response unacknowledged since before {@code cutoff} (a client that stopped
     * answering, or one whose transport is stuck), into the {@code streams.stale} gauge; serving thread.
     */
    public int refreshStale(Instant cutoff) {
        int stale = 0;
        for (AdsStream st : streams) {
            boolean[] late = {false};
            st.forEachState(ts -> late[0] |= ts.requested
                    && ts.lastSentNonce != null
                    && !ts.lastSentAcked
                    && ts.lastSentAt != null
                    && ts.lastSentAt.isBefore(cutoff));
            if (late[0]) stale++;
        }
        metrics.stale(stale);
        return stale;
    }

    /** Open streams (serving thread). */
    public int streamCount() {
        return streams.size();
    }

    /** A growable int array, for the flush's scratch. */
    private static final class IntList {
        int[] values = new int[16];
        int size;

        void add(int v) {
            if (size == values.length) values = java.util.Arrays.copyOf(values, size * 2);
            values[size++] = v;
        }

        void clear() {
            size = 0;
        }
    }
}
