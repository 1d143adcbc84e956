package dev.meshbridge.ads;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One client stream (ADS or a per-type service, SotW or Delta) and what it has asked for and been sent. Owned by the
 * serving thread, which alone calls its observer.
 */
final class AdsStream {

    /** The protocol variant of a stream. */
    enum Mode {
        SOTW,
        DELTA;

        String tag() {
            return this == SOTW ? "sotw" : "delta";
        }
    }

    final long id;
    final Mode mode;
    /** The one type a per-type service (CDS, EDS...) serves; null for ADS. */
    final ResourceType fixedType;

    final String peer;
    /** The client's address, for per-client rules ({@link AdsEngine#restrict}); null when not known. */
    java.net.InetAddress peerAddress;
    /** Run once when the stream leaves the engine (the server's per-connection count). */
    Runnable onClose;
    /** Resource names this stream subscribes to by name, over all its types (kept by {@link Subscribers}). */
    int named;

    final Instant connectedAt;
    private final ServerCallStreamObserver<DiscoveryResponse> sotw;
    private final ServerCallStreamObserver<DeltaDiscoveryResponse> delta;
    /** By type URL ordinal ({@link ResourceTypes#urlOrdinal}). */
    private final TypeState[] states;
    /** Subscriptions to type URLs the server does not serve, answered empty. */
    final Map<String, TypeState> unknown = new LinkedHashMap<>();

    private long nonces;
    Node node;
    String nodeId = "";
    String nodeCluster = "";
    String userAgent = "";
    /** The node's role ({@link AdsEngine.RoleClassifier}), fixed by its first request. */
    int role;

    boolean roleKnown;
    boolean closed;
    boolean dirty;
    /** True while changes wait for the transport to be ready. */
    boolean blocked;
    /** When the last push went out (clock millis), for pacing; 0 before. */
    long lastPushAt;
    /** True while a paced flush is scheduled. */
    boolean paceScheduled;
    /** True when the scheduled paced flush has come: the next flush goes out whatever the clock says. */
    boolean paceReleased;

    private AdsStream(
            long id,
            Mode mode,
            ResourceType fixedType,
            String peer,
            Instant connectedAt,
            int urlCount,
            ServerCallStreamObserver<DiscoveryResponse> sotw,
            ServerCallStreamObserver<DeltaDiscoveryResponse> delta) {
        this.id = id;
        this.mode = mode;
        this.fixedType = fixedType;
        this.peer = peer;
        this.connectedAt = connectedAt;
        this.states = new TypeState[urlCount];
        this.sotw = sotw;
        this.delta = delta;
    }

    static AdsStream sotw(
            long id,
            ResourceType fixedType,
            String peer,
            Instant at,
            int urlCount,
            ServerCallStreamObserver<DiscoveryResponse> o) {
        return new AdsStream(id, Mode.SOTW, fixedType, peer, at, urlCount, o, null);
    }

    static AdsStream delta(
            long id,
            ResourceType fixedType,
            String peer,
            Instant at,
            int urlCount,
            ServerCallStreamObserver<DeltaDiscoveryResponse> o) {
        return new AdsStream(id, Mode.DELTA, fixedType, peer, at, urlCount, null, o);
    }

    /** The API this stream came in on: {@code ADS}, or the type of a per-type service ({@code CDS}...). */
    String api() {
        return fixedType == null ? "ADS" : fixedType.name().toUpperCase(Locale.ROOT);
    }

    /** Every type's state it has, for leaving the subscriber sets when it closes. */
    void forEachState(Consumer<TypeState> action) {
        for (TypeState s : states) {
            if (s != null) action.accept(s);
        }
        if (!unknown.isEmpty()) {
            for (TypeState s : unknown.values()) action.accept(s);
        }
    }

    /** The states of the served types, by type URL ordinal (null where not asked for); the serving thread reads it. */
    TypeState[] states() {
        return states;
    }

    TypeState state(int urlOrdinal) {
        return states[urlOrdinal];
    }

    TypeState stateOrCreate(int urlOrdinal, TypeIndex index, String typeUrl) {
        TypeState s = states[urlOrdinal];
        if (s == null) {
            s = new TypeState(index, this, typeUrl, false);
            states[urlOrdinal] = s;
        }
        return s;
    }

    /** The largest node a stream keeps whole; a larger one is kept without its metadata and other extras. */
    static final int MAX_NODE_BYTES = 64 * 1024;

    /** The longest node id, cluster or user agent a stream keeps (Istio's node ids are about 100 characters). */
    static final int MAX_NODE_TEXT = 1024;

    void node(Node n) {
        if (n == null) return;
        if (node == null) node = bounded(n); // the first node a stream sends is the one it keeps
        if (!n.getId().isEmpty()) nodeId = Printable.cut(n.getId(), MAX_NODE_TEXT);
        if (!n.getCluster().isEmpty()) nodeCluster = Printable.cut(n.getCluster(), MAX_NODE_TEXT);
        String ua = n.getUserAgentName();
        if (!ua.isEmpty()) {
            String v = n.hasUserAgentVersion() ? n.getUserAgentVersion() : "";
            userAgent = Printable.cut(v.isEmpty() ? ua : ua + " " + v, MAX_NODE_TEXT);
        }
    }

    /** The node as kept for the stream's life: whole up to {@link #MAX_NODE_BYTES}, else its identity only. */
    static Node bounded(Node n) {
        if (n.getSerializedSize() <= MAX_NODE_BYTES) return n;
        return Node.newBuilder()
                .setId(Printable.cut(n.getId(), MAX_NODE_TEXT))
                .setCluster(Printable.cut(n.getCluster(), MAX_NODE_TEXT))
                .setUserAgentName(Printable.cut(n.getUserAgentName(), MAX_NODE_TEXT))
                .setUserAgentVersion(Printable.cut(n.getUserAgentVersion(), MAX_NODE_TEXT))
                .build();
    }

    String nextNonce() {
        return Long.toString(++nonces, 36);
    }

    /**
     * The number a nonce of {@link #nextNonce} was made from (above 0); 0 for anything else (empty, another server's
     * nonce, istiod's first request's timestamp), which matches no response.
     */
    static long nonceNumber(String nonce) {
        int n = nonce.length();
        // exactly what Long.toString(x, 36) writes for x > 0: lower case, no leading zero, at most 12 digits here
        if (n == 0 || n > 12 || nonce.charAt(0) == '0') return 0;
        long v = 0;
        for (int i = 0; i < n; i++) {
            char c = nonce.charAt(i);
            int d;
            if (c >= '0' && c <= '9') d = c - '0';
            else if (c >= 'a' && c <= 'z') d = c - 'a' + 10;
            else return 0;
            v = v * 36 + d;
        }
        return v;
    }

    boolean isReady() {
        return mode == Mode.SOTW ? sotw.isReady() : delta.isReady();
    }

    /**
     * Sends a SotW response. It goes through the observer in place of the {@code DiscoveryResponse} it stands for: gRPC
     * passes the message untouched to the method's response marshaller, {@link ResponseMarshaller}, which writes it
     * (the server binds every service through it, and no interceptor of the server looks at responses).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void send(SotwResponse r) {
        ((ServerCallStreamObserver) sotw).onNext(r);
    }

    void send(DeltaDiscoveryResponse r) {
        delta.onNext(r);
    }

    void fail(Status status) {
        closed = true;
        if (mode == Mode.SOTW) {
            sotw.onError(status.asRuntimeException());
        } else {
            delta.onError(status.asRuntimeException());
        }
    }

    void complete() {
        closed = true;
        if (mode == Mode.SOTW) {
            sotw.onCompleted();
        } else {
            delta.onCompleted();
        }
    }

    String describe() {
        return "stream=" + id + " node=" + (nodeId.isEmpty() ? "?" : Printable.of(nodeId)) + " peer=" + peer;
    }
}
