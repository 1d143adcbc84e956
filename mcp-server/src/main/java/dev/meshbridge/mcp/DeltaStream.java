package dev.meshbridge.mcp;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An incremental (Delta) ADS stream: each response carries only the resources whose version the client does not have
 * and the names it must drop. A first request with no names (or {@code *}) subscribes to everything of its type;
 * {@code initial_resource_versions} spares a reconnecting client what it already has.
 */
final class DeltaStream extends McpStream {

    private static final Logger log = LoggerFactory.getLogger(DeltaStream.class);

    private static final class Sub extends TypeState {
        boolean wildcard;
        final Set<String> names = new HashSet<>();
        /** What the client has: name to version. */
        final Map<String, String> known = new HashMap<>();
        /** Names that may differ from what the client has; all of them when {@code fullDiff}. */
        final Set<String> dirty = new HashSet<>();

        boolean fullDiff = true;
        boolean responded;

        Sub(String typeUrl, Instant now) {
            super(typeUrl, now);
        }

        boolean wants(String name) {
            return wildcard || names.contains(name);
        }
    }

    private final Map<String, Sub> subs = new LinkedHashMap<>();

    DeltaStream(long id, String peer, ServerCallStreamObserver<DeltaDiscoveryResponse> observer, Context ctx) {
        super(id, peer, observer, ctx);
    }

    @Override
    String protocol() {
        return "delta";
    }

    void onRequest(DeltaDiscoveryRequest req) {
        if (req.hasNode()) rememberNode(req.getNode());
        String typeUrl = req.getTypeUrl();
        if (typeUrl.isEmpty()) {
            log.warn("delta client={} node={} sent a request without type_url; ignored", id, nodeId());
            return;
        }
        Sub sub = subs.get(typeUrl);
        if (sub == null) {
            sub = new Sub(typeUrl, ctx.now());
            subs.put(typeUrl, sub);
            sub.wildcard = req.getResourceNamesSubscribeCount() == 0
                    || req.getResourceNamesSubscribeList().contains("*");
            for (String n : req.getResourceNamesSubscribeList()) {
                if (!n.equals("*")) sub.names.add(n);
            }
            sub.known.putAll(req.getInitialResourceVersionsMap());
            pushOne(sub);
            return;
        }
        if (!req.getResponseNonce().isEmpty() && req.getResponseNonce().equals(sub.lastSentNonce)) {
            answered(
                    sub,
                    sub.lastSentVersion,
                    req.hasErrorDetail() ? req.getErrorDetail() : null,
                    req.getResponseNonce());
        }
        boolean changed = false;
        for (String n : req.getResourceNamesSubscribeList()) {
            if (n.equals("*")) {
                changed |= !sub.wildcard;
                sub.wildcard = true;
                sub.fullDiff = true;
            } else if (sub.names.add(n)) {
                sub.dirty.add(n);
                changed = true;
            }
        }
        for (String n : req.getResourceNamesUnsubscribeList()) {
            if (n.equals("*")) {
                sub.wildcard = false;
                sub.known.keySet().retainAll(sub.names);
            } else {
                sub.names.remove(n);
                if (!sub.wildcard) sub.known.remove(n);
            }
        }
        if (changed) pushOne(sub);
    }

    @Override
    void push(Set<McpKind> kinds, Map<McpKind, Set<String>> changedNames) {
        for (Sub sub : subs.values()) {
            if (kinds != null && (sub.kind == null || !kinds.contains(sub.kind))) continue;
            Set<String> changed = changedNames == null || sub.kind == null ? null : changedNames.get(sub.kind);
            if (changed == null) {
                sub.fullDiff = true;
            } else if (!sub.fullDiff) {
                sub.dirty.addAll(changed);
                ResourceTable table = ctx.table(sub.kind);
                if (sub.dirty.size() > Math.max(64, table.size())) {
                    sub.fullDiff = true;
                    sub.dirty.clear();
                }
            }
            pushOne(sub);
        }
    }

    @Override
    void resume() {
        for (Sub sub : subs.values()) pushOne(sub);
    }

    private void pushOne(Sub sub) {
        if (!ctx.ready() || isClosed() || !writable()) return;
        ResourceTable table = sub.kind == null ? null : ctx.table(sub.kind);
        Set<String> candidates;
        if (sub.fullDiff) {
            candidates = new TreeSet<>(sub.known.keySet());
            if (table != null) candidates.addAll(table.names());
        } else {
            candidates = new TreeSet<>(sub.dirty);
        }
        DeltaDiscoveryResponse.Builder response =
                DeltaDiscoveryResponse.newBuilder().setTypeUrl(sub.typeUrl);
        List<String> removed = new ArrayList<>();
        for (String name : candidates) {
            ResourceTable.Served s = table == null ? null : table.get(name);
            if (s != null && sub.wants(name)) {
                if (!s.version().equals(sub.known.get(name))) {
                    response.addResources(Resource.newBuilder()
                            .setName(name)
                            .setVersion(s.version())
                            .setResource(s.wire()));
                }
            } else if (sub.known.containsKey(name)) {
                removed.add(name);
            }
        }
        sub.dirty.clear();
        sub.fullDiff = false;
        if (sub.responded && response.getResourcesCount() == 0 && removed.isEmpty()) return;
        String version = table == null ? ResourceTable.EMPTY_VERSION : table.version();
        String nonce = nextNonce();
        response.setSystemVersionInfo(version).setNonce(nonce).addAllRemovedResources(removed);
        DeltaDiscoveryResponse built = response.build();
        if (!send(built)) return;
        for (Resource r : built.getResourcesList()) sub.known.put(r.getName(), r.getVersion());
        for (String r : removed) sub.known.remove(r);
        sub.responded = true;
        int bytes = built.getSerializedSize();
        sent(sub, version, nonce, built.getResourcesCount(), bytes);
        log.debug(
                "pushed delta type={} changed={} removed={} bytes={} to client={} node={}",
                sub.typeUrl,
                built.getResourcesCount(),
                removed.size(),
                bytes,
                id,
                nodeId());
    }

    @Override
    Collection<Sub> types() {
        return subs.values();
    }
}
