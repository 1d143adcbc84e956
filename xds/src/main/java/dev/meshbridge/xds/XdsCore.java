package dev.meshbridge.xds;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The xDS server's state and protocol logic, run on one thread: the resource index, every stream's subscriptions and
 * pending changes, requests, and pushes. gRPC callback threads and the aggregator only enqueue work for it.
 *
 * <p>How a change flows:
 *
 * <ol>
 *   <li>a snapshot that follows the last one seen ({@code sequence - 1}) is applied incrementally: only its changed
 *       and removed hosts are translated and diffed against the index; any other snapshot is applied as a rebuild that
 *       still re-translates only services whose version differs;
 *   <li>each resource whose version changed is marked pending on the streams subscribed to it, with the version that
 *       stream was last sent;
 *   <li>pending streams are flushed, type by type (CDS, EDS, LDS, RDS, SDS): SotW sends the changed EDS, RDS and SDS resources,
 *       or every subscribed LDS and CDS resource; Delta sends the changed resources and the names of removed ones;
 *   <li>a stream whose transport is not ready keeps its pending changes, coalesced, until it is.
 * </ol>
 */
final class XdsCore {

    private static final Logger log = LoggerFactory.getLogger(XdsCore.class);
    private static final int MAX_WARNED = 10_000;

    private final EnvoyTranslator translator;
    private final EnvoyIngressTranslator ingressTranslator;
    private final ProtoRules protoRules = new ProtoRules(ENVOY_ANY_TYPES);
    private final XdsMetrics metrics;
    private final Clock clock;
    private final ResourceIndex index = new ResourceIndex();
    private final List<XdsStream> streams = new ArrayList<>();
    private final List<XdsStream> dirty = new ArrayList<>();
    private final Set<String> warned = new HashSet<>();
    private final ResourceIndex.ChangeSink changeSink = this::changed;
    private final Runnable flushTask = this::flushDirty;
    private final Executor executor;
    private boolean flushScheduled;
    private long lastSequence = -1;
    /** The last translation of the Ingress routes, served or refused: what decides whether to translate again. */
    private IngressResources lastIngressTranslation =
            IngressResources.empty(RouteTable.empty().version());

    /** Per host, the label keys the Ingress routes select subsets on: put under {@code envoy.lb} for that host. */
    private Map<String, ? extends Set<String>> routeLabelKeys = Map.of();
    /** The route table version {@link #routeLabelKeys} was computed from. */
    private String routeLabelKeysVersion = RouteTable.empty().version();

    private MeshSnapshot snapshot = MeshSnapshot.empty();
    private int skippedNow;
    private final int[] changes = new int[XdsType.all().length];

    /** The types the resources the bridge makes pack into {@code Any} fields, for {@link ProtoRules}. */
    static final List<com.google.protobuf.Message> ENVOY_ANY_TYPES = List.of(
            io.envoyproxy.envoy.config.cluster.v3.Cluster.getDefaultInstance(),
            io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.getDefaultInstance(),
            io.envoyproxy.envoy.config.listener.v3.Listener.getDefaultInstance(),
            io.envoyproxy.envoy.config.route.v3.RouteConfiguration.getDefaultInstance(),
            io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret.getDefaultInstance(),
            io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                    .getDefaultInstance(),
            io.envoyproxy.envoy.extensions.filters.http.router.v3.Router.getDefaultInstance(),
            io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector.getDefaultInstance(),
            io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.getDefaultInstance(),
            io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.getDefaultInstance());

    XdsCore(EnvoyTranslator translator, XdsMetrics metrics, Clock clock, Executor executor) {
        this(translator, new EnvoyIngressTranslator(translator, XdsOptions.Ingress.DEFAULTS), metrics, clock, executor);
    }

    /** @param ingressTranslator null serves no resources for the Ingress routes */
    XdsCore(
            EnvoyTranslator translator,
            EnvoyIngressTranslator ingressTranslator,
            XdsMetrics metrics,
            Clock clock,
            Executor executor) {
        this.translator = translator;
        this.ingressTranslator = ingressTranslator;
        this.metrics = metrics;
        this.clock = clock;
        this.executor = executor;
    }

    ResourceIndex index() {
        return index;
    }

    MeshSnapshot snapshot() {
        return snapshot;
    }

    long lastSequence() {
        return lastSequence;
    }

    List<XdsStream> streams() {
        return streams;
    }

    // ------------------------------------------------------------------ catalog

    /** Loads the Envoy message classes before the first snapshot needs them (about a second on a small box). */
    void warmUp() {
        MeshService probe = new MeshService(
                "warm-up.invalid",
                List.of(new ServicePort("grpc", 1, Protocol.GRPC)),
                List.of(Endpoint.builder("127.0.0.1")
                        .port("grpc", 1)
                        .label("a", "b")
                        .build()),
                new TreeMap<>(),
                new TreeSet<>(List.of(ServiceKey.of("none", "none", "warm-up"))),
                "0");
        translator.translate(probe);
        DeltaDiscoveryResponse.getDefaultInstance().getSerializedSize();
        DiscoveryResponse.getDefaultInstance().getSerializedSize();
    }

    /** Applies a snapshot: incrementally when it follows the last one seen, as a rebuild otherwise. */
    void applySnapshot(MeshSnapshot next) {
        long start = System.nanoTime();
        Arrays.fill(changes, 0);
        int dirtyBefore = dirty.size();
        boolean incremental = lastSequence >= 0 && next.sequence() == lastSequence + 1;
        Set<String> relabeled = updateRouteLabelKeys(next.routes());
        int translated = 0;
        if (incremental) {
            for (String host : next.removed()) {
                updateService(host, null);
            }
            for (String host : next.changed()) {
                MeshService s = next.service(host);
                if (s != null) {
                    updateService(host, translate(s));
                    translated++;
                }
            }
            for (String host : relabeled) {
                MeshService s = next.service(host);
                if (s != null && !next.changed().contains(host)) {
                    updateService(host, translate(s));
                    translated++;
                }
            }
        } else {
            Set<String> gone = new HashSet<>(index.services().keySet());
            for (MeshService s : next.services().values()) {
                gone.remove(s.host());
                ServiceResources current = index.service(s.host());
                if (current != null && current.serviceVersion().equals(s.version()) && !relabeled.contains(s.host()))
                    continue;
                updateService(s.host(), translate(s));
                translated++;
            }
            for (String host : gone) updateService(host, null);
            log.info(
                    "xds rebuilt from snapshot sequence={} (last seen {}): services={} translated={}",
                    next.sequence(),
                    lastSequence,
                    next.serviceCount(),
                    translated);
        }
        if (ingressTranslator != null) applyIngress(next, incremental);
        lastSequence = next.sequence();
        snapshot = next;
        long nanos = System.nanoTime() - start;
        metrics.applied(index, skippedNow, nanos);
        if (Arrays.stream(changes).sum() > 0) {
            log.info(
                    "xds push sequence={} services changed={} removed={} routes changed={} resources changed cds={}"
                            + " eds={} lds={} rds={} sds={} streams={} in {} us",
                    next.sequence(),
                    next.changed().size(),
                    next.removed().size(),
                    next.routesChanged(),
                    changes[XdsType.CLUSTER.ordinal()],
                    changes[XdsType.ENDPOINT.ordinal()],
                    changes[XdsType.LISTENER.ordinal()],
                    changes[XdsType.ROUTE.ordinal()],
                    changes[XdsType.SECRET.ordinal()],
                    dirty.size() - dirtyBefore,
                    nanos / 1000);
        }
        scheduleFlush();
    }

    private ServiceResources translate(MeshService s) {
        Set<String> keys = routeLabelKeys.get(s.host());
        return translator.translate(s, index.service(s.host()), keys == null ? Set.of() : keys);
    }

    /**
     * Takes the label keys the routes select subsets on from a new route table; returns the hosts whose keys changed,
     * whose load assignments must be made again (an endpoint change does not change them).
     */
    private Set<String> updateRouteLabelKeys(RouteTable routes) {
        if (routes.version().equals(routeLabelKeysVersion)) return Set.of();
        Map<String, ? extends Set<String>> next = routes.subsetLabelKeys();
        Set<String> changed = new HashSet<>();
        for (Map.Entry<String, ? extends Set<String>> e : next.entrySet()) {
            if (!e.getValue().equals(routeLabelKeys.get(e.getKey()))) changed.add(e.getKey());
        }
        for (String host : routeLabelKeys.keySet()) {
            if (!next.containsKey(host)) changed.add(host);
        }
        routeLabelKeys = next;
        routeLabelKeysVersion = routes.version();
        if (!changed.isEmpty()) log.info("xds envoy.lb label keys from Ingress subsets changed for hosts {}", changed);
        return changed;
    }

    private void updateService(String host, ServiceResources next) {
        ServiceResources old = index.service(host);
        index.apply(host, next, changeSink);
        trackSkipped(host, old == null ? List.of() : old.skipped(), next == null ? List.of() : next.skipped());
    }

    private void trackSkipped(String host, List<ServiceResources.Skipped> old, List<ServiceResources.Skipped> next) {
        skippedNow += next.size() - old.size();
        if (next.isEmpty()) return;
        Set<String> known = new HashSet<>();
        for (ServiceResources.Skipped s : old) known.add(s.item() + '\n' + s.reason());
        for (ServiceResources.Skipped s : next) {
            if (known.contains(s.item() + '\n' + s.reason())) continue;
            metrics.skipped(s.reason());
            String key = host + '\n' + s.item() + '\n' + s.reason();
            if (warned.size() < MAX_WARNED && warned.add(key)) {
                log.warn("xds left out host={} item={} reason={}: {}", host, s.item(), s.reason(), s.detail());
            }
        }
    }

    // ------------------------------------------------------------------ Ingress routes

    /**
     * Translates the snapshot's Ingress routes again when they changed, or when a host they name appeared, went, or
     * changed its served ports; an endpoint change costs nothing here. A translation Envoy would refuse is not
     * served: the last good one stays, and the problem is reported.
     */
    private void applyIngress(MeshSnapshot next, boolean incremental) {
        IngressResources current = index.ingress();
        IngressResources last = lastIngressTranslation;
        RouteTable table = next.routes();
        boolean redo = next.routesChanged() || !table.version().equals(last.routesVersion());
        if (!redo && !last.dependencies().isEmpty()) {
            redo = incremental
                    ? dependencyChanged(next.changed(), last) || dependencyChanged(next.removed(), last)
                    : dependencyChanged(last.dependencies().keySet(), last);
        }
        if (!redo) return;
        IngressResources translated = ingressTranslator.translate(table, this::servedPorts);
        lastIngressTranslation = translated;
        metrics.ingressTranslated(translated.unavailable().size());
        List<String> problems = new ArrayList<>();
        for (XdsResource r : translated.resources()) {
            // a resource with the version already served was checked when it was first made
            TypeIndex served = index.type(r.type());
            int id = served.find(r.name());
            if (id >= 0 && served.version(id) == r.versionHash()) continue;
            for (String p : protoRules.check(r.any())) problems.add(r.type().shortName() + " " + r.name() + ": " + p);
        }
        if (!problems.isEmpty()) {
            // never sent: Envoy would NACK it; what was served stays
            metrics.skipped("invalid-resource");
            log.error(
                    "xds Ingress routes version={} not served, Envoy would refuse them; the last good ones stay: {}",
                    table.version(),
                    problems);
            return;
        }
        index.applyIngress(translated, changeSink);
        trackSkipped(EnvoyIngressTranslator.OWNER, current.skipped(), translated.skipped());
        Set<String> before = new HashSet<>(current.unavailable());
        for (String u : translated.unavailable()) {
            if (!before.contains(u)) log.info("xds Ingress route answers 503: {}", u);
        }
        log.info(
                "xds Ingress routes version={} translated: resources={} hosts depended on={} answering 503={}",
                table.version(),
                translated.resources().size(),
                translated.dependencies().size(),
                translated.unavailable().size());
    }

    private boolean dependencyChanged(Set<String> hosts, IngressResources current) {
        Map<String, Long> deps = current.dependencies();
        Set<String> smaller = hosts.size() <= deps.size() ? hosts : deps.keySet();
        for (String h : smaller) {
            Long was = deps.get(h);
            if (was != null && hosts.contains(h) && was != EnvoyIngressTranslator.signature(servedPorts(h)))
                return true;
        }
        return false;
    }

    /** The ports of a catalog host that have a cluster, or null when the host is not served. */
    private List<ServicePort> servedPorts(String host) {
        ServiceResources r = index.service(host);
        return r == null ? null : EnvoyTranslator.servedPorts(r);
    }

    private void changed(TypeIndex type, int id, long oldVersion, boolean wildcard) {
        changes[type.type.ordinal()]++;
        // only the subscribers of this resource: a change costs O(its subscribers), not O(streams)
        Subscribers subs = type.subscribers;
        if (wildcard) {
            for (TypeState ts : subs.wildcard()) changedFor(ts, id, oldVersion);
        }
        for (TypeState ts : subs.naming(id)) {
            if (!(wildcard && ts.wildcard)) changedFor(ts, id, oldVersion);
        }
    }

    private void changedFor(TypeState ts, int id, long oldVersion) {
        if (!ts.requested || ts.stream.closed) return;
        ts.changed(id, oldVersion);
        markDirty(ts.stream);
    }

    // ------------------------------------------------------------------ streams

    void register(XdsStream st) {
        streams.add(st);
        metrics.streamOpened(st);
        log.debug("xds {} opened api={} mode={}", st.describe(), st.api(), st.mode.tag());
    }

    void unregister(XdsStream st, Throwable error) {
        if (!streams.remove(st)) return;
        st.closed = true;
        st.forEachState(TypeState::unsubscribeAll);
        metrics.streamClosed(st);
        if (error == null) {
            log.info("xds {} closed by the client", st.describe());
        } else {
            log.info("xds {} ended: {}", st.describe(), Status.fromThrowable(error));
        }
    }

    void onSotwRequest(XdsStream st, DiscoveryRequest req) {
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
        if (!nonce.isEmpty() && ts.lastSentNonce != null && !nonce.equals(ts.lastSentNonce)) return;
        boolean first = !ts.requested;
        ts.requested = true;
        // clients repeat their whole subscription on every ACK (an Envoy: every cluster's name): skip it unchanged
        long namesHash = namesHash(req);
        if (!first && namesHash == ts.namesHash) return;
        ts.namesHash = namesHash;
        List<String> names = req.getResourceNamesList();
        boolean star = names.contains("*");
        boolean wildcard = star || (names.isEmpty() && (first || ts.legacyWildcard));
        TypeIndex idx = ts.index;
        BitSet requested = new BitSet();
        for (String n : names) {
            if (!n.equals("*")) requested.set(idx.id(n));
        }
        if (first) {
            metrics.typeRequested(st, ts.type());
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
                        "xds {} type={} resumes at version={}",
                        st.describe(),
                        ts.type().shortName(),
                        version);
                return;
            }
            forEachSubscribed(ts, id -> ts.added(id, TypeIndex.ABSENT));
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

    void onDeltaRequest(XdsStream st, DeltaDiscoveryRequest req) {
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
        ts.requested = true;
        TypeIndex idx = ts.index;
        Map<String, String> initial = first ? req.getInitialResourceVersionsMap() : Map.of();
        List<String> subscribe = req.getResourceNamesSubscribeList();
        List<String> unsubscribe = req.getResourceNamesUnsubscribeList();
        boolean wildcard = ts.wildcard;
        if (first && subscribe.isEmpty()) wildcard = true;
        if (subscribe.contains("*")) wildcard = true;
        if (unsubscribe.contains("*")) wildcard = false;
        if (first) metrics.typeRequested(st, ts.type());

        if (wildcard && !ts.wildcard) {
            ts.wildcard(true);
            idx.forEachWildcard(id -> {
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
            if (!(ts.wildcard && idx.wildcardVisible(id))) ts.dropped(id);
        }
        if (!wildcard && ts.wildcard) {
            ts.wildcard(false);
            idx.forEachWildcard(id -> {
                if (!ts.names.get(id)) ts.dropped(id);
            });
        }
        if (first && ts.wildcard) {
            // what the client holds that no longer exists: tell it, as removals
            for (Map.Entry<String, String> e : initial.entrySet()) {
                int id = idx.id(e.getKey());
                if (idx.get(id) == null && !ts.names.get(id) && !ts.pending.containsKey(id)) {
                    ts.added(id, clientVersion(initial, e.getKey(), TypeIndex.UNKNOWN));
                }
            }
        }
        if (first && initial.isEmpty()) ts.respond = true;
        if (first && !initial.isEmpty() && ts.pending.isEmpty()) {
            // a reconnecting client that already holds every subscribed version: nothing to resend
            ts.resumed(ts.viewVersion(), now);
        }
        markDirty(st);
    }

    private static long namesHash(DiscoveryRequest req) {
        Hash64 h = new Hash64().putInt(req.getResourceNamesCount());
        for (int i = 0; i < req.getResourceNamesCount(); i++) {
            EnvoyTranslator.putBytes(h, req.getResourceNamesBytes(i));
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
            XdsStream st,
            Node node,
            String typeUrl,
            String nonce,
            com.google.rpc.Status error,
            String ackedVersion,
            Instant now) {
        if (st.closed) return null;
        st.node(node);
        TypeState ts = typeState(st, typeUrl);
        if (ts == null || nonce.isEmpty()) return ts;
        if (error != null) {
            nack(st, ts, nonce, error.getMessage(), now);
        } else {
            ts.recordAck(nonce, ackedVersion != null ? ackedVersion : ts.versionOfNonce(nonce), now);
        }
        return ts;
    }

    private TypeState typeState(XdsStream st, String typeUrl) {
        if (typeUrl.isEmpty() && st.fixedType != null) typeUrl = st.fixedType.typeUrl();
        XdsType type = XdsType.ofTypeUrl(typeUrl);
        if (type == null) {
            if (!typeUrl.equals(st.lastUnknownType)) {
                st.lastUnknownType = typeUrl;
                log.warn("xds {} asked for type={}, which the bridge does not serve; ignored", st.describe(), typeUrl);
            }
            return null;
        }
        if (st.fixedType != null && type != st.fixedType) {
            log.warn("xds {} asked for type={} on the {} service; closing it", st.describe(), typeUrl, st.api());
            unregister(st, null);
            st.fail(Status.INVALID_ARGUMENT.withDescription(
                    "this is the " + st.api() + " service; it serves only " + st.fixedType.typeUrl()));
            return null;
        }
        return st.stateOrCreate(index.type(type));
    }

    private void nack(XdsStream st, TypeState ts, String nonce, String message, Instant now) {
        String rejected = ts.versionOfNonce(nonce);
        boolean repeated = ts.lastNack != null && message.equals(ts.lastNack.message());
        ts.recordNack(nonce, rejected, message, now);
        metrics.nack(ts.type());
        if (repeated) {
            log.debug(
                    "xds NACK again node={} type={} version={}",
                    st.nodeId,
                    ts.type().shortName(),
                    rejected);
        } else {
            log.warn(
                    "xds NACK node={} cluster={} type={} version={} nonce={} error={}; the client keeps its last"
                            + " accepted state",
                    st.nodeId,
                    st.nodeCluster,
                    ts.type().shortName(),
                    rejected,
                    nonce,
                    message);
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
        BitSet candidates = (BitSet) ts.names.clone();
        candidates.or(requested);
        if (wildcard != ts.wildcard) idx.forEachWildcard(candidates::set);
        boolean[] before = new boolean[candidates.length()];
        for (int id = candidates.nextSetBit(0); id >= 0; id = candidates.nextSetBit(id + 1)) {
            before[id] = ts.subscribes(id);
        }
        // drop with the old subscription in place (sentVersion needs it), add with the new one
        for (int id = candidates.nextSetBit(0); id >= 0; id = candidates.nextSetBit(id + 1)) {
            boolean after = (wildcard && idx.wildcardVisible(id)) || requested.get(id);
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
        long sum = ts.wildcard ? idx.wildcardSum() : 0;
        for (int id = ts.names.nextSetBit(0); id >= 0; id = ts.names.nextSetBit(id + 1)) {
            if (ts.wildcard && idx.wildcardVisible(id)) continue;
            sum += idx.contribution(id, idx.version(id));
        }
        return sum;
    }

    private static void forEachSubscribed(TypeState ts, IntConsumer action) {
        TypeIndex idx = ts.index;
        if (ts.wildcard) idx.forEachWildcard(action);
        for (int id = ts.names.nextSetBit(0); id >= 0; id = ts.names.nextSetBit(id + 1)) {
            if (ts.wildcard && idx.wildcardVisible(id)) continue;
            action.accept(id);
        }
    }

    // ------------------------------------------------------------------ pushes

    void markDirty(XdsStream st) {
        if (st.dirty || st.closed) return;
        st.dirty = true;
        dirty.add(st);
        scheduleFlush();
    }

    private void scheduleFlush() {
        if (flushScheduled || dirty.isEmpty()) return;
        flushScheduled = true;
        executor.execute(flushTask);
    }

    /** Sends what is pending to every dirty stream whose transport is ready. */
    void flushDirty() {
        flushScheduled = false;
        if (dirty.isEmpty()) return;
        List<XdsStream> batch = new ArrayList<>(dirty);
        dirty.clear();
        for (XdsStream st : batch) {
            st.dirty = false;
            if (st.closed) continue;
            try {
                flush(st);
            } catch (RuntimeException e) {
                log.warn("xds {} push failed; closing the stream", st.describe(), e);
                unregister(st, e);
                try {
                    st.fail(Status.INTERNAL.withDescription("push failed: " + e.getMessage()));
                } catch (RuntimeException ignored) {
                    // already gone
                }
            }
        }
    }

    private void flush(XdsStream st) {
        for (XdsType type : XdsType.all()) {
            TypeState ts = st.state(type);
            if (ts == null || !ts.requested || (ts.pending.isEmpty() && !ts.respond)) continue;
            if (!st.isReady()) return; // the ready callback marks the stream dirty again
            if (st.mode == XdsStream.Mode.SOTW) {
                flushSotw(st, ts);
            } else {
                flushDelta(st, ts);
            }
        }
    }

    private void flushSotw(XdsStream st, TypeState ts) {
        TypeIndex idx = ts.index;
        XdsType type = ts.type();
        DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder().setTypeUrl(type.typeUrl());
        ts.pending.forEach((id, was) -> {
            ts.sent(id, was);
            if (!type.fullState()) {
                XdsResource r = idx.get(id);
                if (r != null) b.addResources(r.any());
            }
        });
        ts.pending.clear();
        if (type.fullState()) {
            forEachSubscribed(ts, id -> {
                XdsResource r = idx.get(id);
                if (r != null) b.addResources(r.any());
            });
        } else if (b.getResourcesCount() == 0 && !ts.respond) {
            return;
        }
        String nonce = st.nextNonce();
        String version = ts.viewVersion();
        DiscoveryResponse response = b.setVersionInfo(version).setNonce(nonce).build();
        st.send(response);
        sent(st, ts, nonce, version, response.getSerializedSize(), response.getResourcesCount(), 0);
    }

    private void flushDelta(XdsStream st, TypeState ts) {
        TypeIndex idx = ts.index;
        DeltaDiscoveryResponse.Builder b =
                DeltaDiscoveryResponse.newBuilder().setTypeUrl(ts.type().typeUrl());
        ts.pending.forEach((id, was) -> {
            XdsResource r = idx.get(id);
            if (r == null) {
                if (was != TypeIndex.ABSENT) b.addRemovedResources(idx.name(id));
            } else if (r.versionHash() != was) {
                b.addResources(r.delta());
            }
            ts.sent(id, was);
        });
        ts.pending.clear();
        if (b.getResourcesCount() == 0 && b.getRemovedResourcesCount() == 0 && !ts.respond) return;
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

    private void sent(XdsStream st, TypeState ts, String nonce, String version, int bytes, int resources, int removed) {
        ts.respond = false;
        ts.recordSent(nonce, version, clock.instant());
        metrics.pushed(ts.type(), st.mode, bytes);
        if (log.isDebugEnabled()) {
            log.debug(
                    "xds push {} mode={} type={} version={} nonce={} resources={} removed={} bytes={}",
                    st.describe(),
                    st.mode.tag(),
                    ts.type().shortName(),
                    version,
                    nonce,
                    resources,
                    removed,
                    bytes);
        }
    }

    // ------------------------------------------------------------------ debug

    XdsDebugView debugView(Map<String, String> query) {
        String nodeFilter = query.getOrDefault("node", "");
        XdsType typeFilter = query.containsKey("type") ? XdsType.ofShortName(query.get("type")) : null;
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (XdsType t : XdsType.all()) counts.put(t.shortName(), index.type(t).size());
        List<XdsDebugView.Client> clients = new ArrayList<>();
        for (XdsStream st : streams) {
            if (!nodeFilter.isEmpty() && !st.nodeId.contains(nodeFilter)) continue;
            Map<String, XdsDebugView.TypeStatus> types = new LinkedHashMap<>();
            for (XdsType t : XdsType.all()) {
                TypeState ts = st.state(t);
                if (ts == null || !ts.requested || (typeFilter != null && t != typeFilter)) continue;
                types.put(t.shortName(), XdsDebugView.TypeStatus.of(ts));
            }
            clients.add(new XdsDebugView.Client(
                    st.id,
                    st.nodeId,
                    st.nodeCluster,
                    st.userAgent,
                    st.peer,
                    st.api(),
                    st.mode.tag(),
                    st.connectedAt.toString(),
                    types));
        }
        List<ServiceResources.Skipped> skipped = new ArrayList<>();
        for (ServiceResources r : new TreeMap<>(index.services()).values()) skipped.addAll(r.skipped());
        IngressResources ingress = index.ingress();
        skipped.addAll(ingress.skipped());
        List<String> ingressResources = new ArrayList<>();
        for (XdsResource r : ingress.resources()) ingressResources.add(r.type().shortName() + " " + r.name());
        return new XdsDebugView(
                new XdsDebugView.Catalog(
                        snapshot.sequence(), snapshot.version(), snapshot.serviceCount(), snapshot.endpointCount()),
                counts,
                clients,
                skipped,
                new XdsDebugView.Ingress(
                        ingressTranslator != null,
                        snapshot.routes().version(),
                        ingress.routesVersion(),
                        ingressResources,
                        ingress.unavailable()));
    }
}
