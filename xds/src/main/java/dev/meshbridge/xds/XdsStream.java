package dev.meshbridge.xds;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Instant;

/**
 * One client stream (ADS or a per-type service, SotW or Delta) and what it has asked for and been sent. Owned by the
 * server's thread, which alone calls its observer.
 */
final class XdsStream {

    enum Mode {
        SOTW,
        DELTA;

        String tag() {
            return this == SOTW ? "sotw" : "delta";
        }
    }

    final long id;
    final Mode mode;
    /** The one type a per-type service (CDS, EDS, LDS, RDS, SDS) serves; null for ADS. */
    final XdsType fixedType;

    final String peer;
    final Instant connectedAt;
    private final ServerCallStreamObserver<DiscoveryResponse> sotw;
    private final ServerCallStreamObserver<DeltaDiscoveryResponse> delta;
    private final TypeState[] states = new TypeState[XdsType.all().length];
    private long nonces;
    String nodeId = "";
    String nodeCluster = "";
    String userAgent = "";
    boolean closed;
    boolean dirty;
    String lastUnknownType;

    private XdsStream(
            long id,
            Mode mode,
            XdsType fixedType,
            String peer,
            Instant connectedAt,
            ServerCallStreamObserver<DiscoveryResponse> sotw,
            ServerCallStreamObserver<DeltaDiscoveryResponse> delta) {
        this.id = id;
        this.mode = mode;
        this.fixedType = fixedType;
        this.peer = peer;
        this.connectedAt = connectedAt;
        this.sotw = sotw;
        this.delta = delta;
    }

    static XdsStream sotw(
            long id, XdsType fixedType, String peer, Instant at, ServerCallStreamObserver<DiscoveryResponse> o) {
        return new XdsStream(id, Mode.SOTW, fixedType, peer, at, o, null);
    }

    static XdsStream delta(
            long id, XdsType fixedType, String peer, Instant at, ServerCallStreamObserver<DeltaDiscoveryResponse> o) {
        return new XdsStream(id, Mode.DELTA, fixedType, peer, at, null, o);
    }

    /** The API this stream came in on: {@code ADS}, or {@code CDS}, {@code EDS}... */
    String api() {
        return fixedType == null ? "ADS" : fixedType.shortName().toUpperCase(java.util.Locale.ROOT);
    }

    /** Every type's state it has, for leaving the subscriber sets when it closes. */
    void forEachState(java.util.function.Consumer<TypeState> action) {
        for (TypeState s : states) {
            if (s != null) action.accept(s);
        }
    }

    TypeState state(XdsType type) {
        return states[type.ordinal()];
    }

    TypeState stateOrCreate(TypeIndex index) {
        TypeState s = states[index.type.ordinal()];
        if (s == null) {
            s = new TypeState(index, this);
            states[index.type.ordinal()] = s;
        }
        return s;
    }

    void node(Node node) {
        if (node == null) return;
        if (!node.getId().isEmpty()) nodeId = node.getId();
        if (!node.getCluster().isEmpty()) nodeCluster = node.getCluster();
        String ua = node.getUserAgentName();
        if (!ua.isEmpty()) {
            String v = node.hasUserAgentVersion() ? node.getUserAgentVersion() : "";
            userAgent = v.isEmpty() ? ua : ua + " " + v;
        }
    }

    String nextNonce() {
        return Long.toString(++nonces, 36);
    }

    boolean isReady() {
        return mode == Mode.SOTW ? sotw.isReady() : delta.isReady();
    }

    void send(DiscoveryResponse r) {
        sotw.onNext(r);
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
        return "stream=" + id + " node=" + (nodeId.isEmpty() ? "?" : nodeId) + " peer=" + peer;
    }
}
