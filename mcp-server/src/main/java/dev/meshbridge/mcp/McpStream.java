package dev.meshbridge.mcp;

import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connected client stream (SotW or Delta). Every method runs on the server's thread; gRPC threads only enqueue.
 *
 * <p>What every stream does, as istiod's MCP client expects:
 *
 * <ol>
 *   <li>a new subscription is recognised by its type URL, not by an empty nonce (istiod's first request on a type
 *       carries a timestamp as nonce), and is answered with the complete current set, empty for kinds the bridge does
 *       not produce;
 *   <li>a request whose nonce is the last one sent on that type is an ACK, or a NACK when it carries an error; a NACK
 *       is reported and the rejected version is not sent again;
 *   <li>a request with any other nonce answers an older response and is ignored;
 *   <li>the node is taken from the first request that has one (istiod sends it on the first request and on ACKs);
 *   <li>nothing is sent before the catalog is ready, and nothing while gRPC's buffer for the client is full: such a
 *       push waits and sends the state of that moment.
 * </ol>
 */
abstract class McpStream {

    private static final Logger log = LoggerFactory.getLogger(McpStream.class);

    /** What a stream needs from the server. */
    interface Context {
        ResourceTable table(McpKind kind);

        boolean ready();

        McpMetrics metrics();

        Instant now();
    }

    /** What every stream keeps per subscribed type. */
    abstract static class TypeState {
        final String typeUrl;
        final McpKind kind;
        final Instant subscribedAt;
        String lastSentVersion;
        String lastSentNonce;
        Instant lastSentAt;
        int resourcesSent;
        String lastAckedVersion;
        Instant lastAckedAt;
        long acks;
        long nacks;
        McpServer.Nack lastNack;

        TypeState(String typeUrl, Instant now) {
            this.typeUrl = typeUrl;
            this.kind = McpKind.ofTypeUrl(typeUrl).orElse(null);
            this.subscribedAt = now;
        }

        McpServer.TypeView view() {
            return new McpServer.TypeView(
                    typeUrl,
                    kind == null ? "" : kind.kind(),
                    subscribedAt,
                    resourcesSent,
                    lastSentVersion,
                    lastSentNonce,
                    lastSentAt,
                    lastAckedVersion,
                    lastAckedAt,
                    lastSentVersion != null && lastSentVersion.equals(lastAckedVersion),
                    acks,
                    nacks,
                    lastNack);
        }
    }

    final long id;
    final String peer;
    final Instant connectedAt;
    final Context ctx;
    private final ServerCallStreamObserver<?> observer;
    Node node;
    private long nonces;
    private boolean closed;

    McpStream(long id, String peer, ServerCallStreamObserver<?> observer, Context ctx) {
        this.id = id;
        this.peer = peer;
        this.observer = observer;
        this.ctx = ctx;
        this.connectedAt = ctx.now();
    }

    abstract String protocol();

    /** Sends whatever changed for the kinds given (null: every subscribed type), if the client can take it. */
    abstract void push(Set<McpKind> kinds, Map<McpKind, Set<String>> changedNames);

    /** Sends what waited while gRPC's buffer for the client was full. */
    abstract void resume();

    abstract Collection<? extends TypeState> types();

    String nodeId() {
        return node == null ? "" : node.getId();
    }

    void rememberNode(Node n) {
        if (node == null && n != null && !n.getId().isEmpty()) {
            node = n;
            log.info("istiod client={} peer={} node={} protocol={} connected", id, peer, n.getId(), protocol());
        } else if (n != null && !n.getId().isEmpty()) {
            node = n;
        }
    }

    /** Records the client's answer to the last response on a type: an ACK, or a NACK when it carries an error. */
    void answered(TypeState t, String ackedVersion, com.google.rpc.Status error, String nonce) {
        if (error != null) {
            t.nacks++;
            t.lastNack = new McpServer.Nack(nonce, t.lastSentVersion, error.getMessage(), ctx.now());
            ctx.metrics().nack(t.kind);
            log.warn(
                    "istiod client={} node={} protocol={} rejected type={} version={} nonce={}: {}",
                    id,
                    nodeId(),
                    protocol(),
                    t.typeUrl,
                    t.lastSentVersion,
                    nonce,
                    error.getMessage());
        } else {
            t.acks++;
            t.lastAckedVersion = ackedVersion;
            t.lastAckedAt = ctx.now();
            ctx.metrics().ack(t.kind);
        }
    }

    /** Records a response sent on a type. */
    void sent(TypeState t, String version, String nonce, int resources, int bytes) {
        t.lastSentVersion = version;
        t.lastSentNonce = nonce;
        t.lastSentAt = ctx.now();
        t.resourcesSent = resources;
        ctx.metrics().pushed(t.kind, protocol(), bytes);
    }

    String nextNonce() {
        return Long.toString(++nonces);
    }

    /** True when gRPC can take another message now; otherwise the push waits for the stream's onReady. */
    boolean writable() {
        return !closed && observer.isReady();
    }

    @SuppressWarnings("unchecked")
    <T> boolean send(T message) {
        if (closed) return false;
        try {
            ((ServerCallStreamObserver<T>) observer).onNext(message);
            return true;
        } catch (RuntimeException e) {
            log.info("istiod client={} node={}: send failed ({}); closing the stream", id, nodeId(), e.toString());
            closed = true;
            return false;
        }
    }

    void markClosed() {
        closed = true;
    }

    boolean isClosed() {
        return closed;
    }

    void complete(Status status) {
        if (closed) return;
        closed = true;
        try {
            if (status.isOk()) observer.onCompleted();
            else observer.onError(status.asRuntimeException());
        } catch (RuntimeException ignored) {
            // already cancelled by the client
        }
    }

    McpServer.ClientView view() {
        Map<String, String> meta = new LinkedHashMap<>();
        if (node != null && node.hasMetadata()) {
            for (Map.Entry<String, Value> f : node.getMetadata().getFieldsMap().entrySet()) {
                Value v = f.getValue();
                meta.put(
                        f.getKey(),
                        v.hasStringValue() ? v.getStringValue() : v.toString().trim());
            }
        }
        return new McpServer.ClientView(
                id,
                protocol(),
                peer,
                nodeId(),
                meta,
                connectedAt,
                types().stream().map(TypeState::view).toList());
    }
}
