package dev.meshbridge.mcp;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A state-of-the-world ADS stream: every response carries the complete set of its type (what istiod's MCP client
 * uses). A client that names resources gets only those; istiod names none and gets all.
 */
final class SotwStream extends McpStream {

    private static final Logger log = LoggerFactory.getLogger(SotwStream.class);

    private static final class Sub extends TypeState {
        Set<String> names;

        Sub(String typeUrl, Set<String> names, Instant now) {
            super(typeUrl, now);
            this.names = names;
        }
    }

    private final Map<String, Sub> subs = new LinkedHashMap<>();

    SotwStream(long id, String peer, ServerCallStreamObserver<DiscoveryResponse> observer, Context ctx) {
        super(id, peer, observer, ctx);
    }

    @Override
    String protocol() {
        return "sotw";
    }

    void onRequest(DiscoveryRequest req) {
        if (req.hasNode()) rememberNode(req.getNode());
        String typeUrl = req.getTypeUrl();
        if (typeUrl.isEmpty()) {
            log.warn("istiod client={} node={} sent a request without type_url; ignored", id, nodeId());
            return;
        }
        Set<String> names = names(req);
        Sub sub = subs.get(typeUrl);
        if (sub == null) {
            sub = new Sub(typeUrl, names, ctx.now());
            subs.put(typeUrl, sub);
            log.debug("istiod client={} node={} subscribed type={}", id, nodeId(), typeUrl);
            pushOne(sub, false);
            return;
        }
        if (sub.lastSentNonce == null) {
            sub.names = names; // not answered yet (catalog not ready): the first answer will use these
            return;
        }
        if (!sub.lastSentNonce.equals(req.getResponseNonce())) {
            log.debug(
                    "istiod client={} type={} answered nonce={} but the last sent is {}; ignored",
                    id,
                    typeUrl,
                    req.getResponseNonce(),
                    sub.lastSentNonce);
            return;
        }
        answered(sub, req.getVersionInfo(), req.hasErrorDetail() ? req.getErrorDetail() : null, req.getResponseNonce());
        if (!names.equals(sub.names)) {
            sub.names = names;
            pushOne(sub, true);
        }
    }

    @Override
    void push(Set<McpKind> kinds, Map<McpKind, Set<String>> changedNames) {
        for (Sub sub : subs.values()) {
            if (kinds == null || (sub.kind != null && kinds.contains(sub.kind))) pushOne(sub, false);
        }
    }

    @Override
    void resume() {
        for (Sub sub : subs.values()) pushOne(sub, false);
    }

    private void pushOne(Sub sub, boolean force) {
        if (!ctx.ready() || isClosed()) return;
        ResourceTable table = sub.kind == null ? null : ctx.table(sub.kind);
        String version = table == null
                ? ResourceTable.EMPTY_VERSION
                : sub.names.isEmpty() ? table.version() : table.version(sub.names);
        if (!force && version.equals(sub.lastSentVersion)) return;
        if (!writable()) return; // sent from onReady with the state of that moment
        List<Any> resources = new ArrayList<>();
        if (table != null) {
            if (sub.names.isEmpty()) {
                for (ResourceTable.Served s : table.all()) resources.add(s.wire());
            } else {
                for (String n : sub.names) {
                    ResourceTable.Served s = table.get(n);
                    if (s != null) resources.add(s.wire());
                }
            }
        }
        String nonce = nextNonce();
        DiscoveryResponse response = DiscoveryResponse.newBuilder()
                .setTypeUrl(sub.typeUrl)
                .setVersionInfo(version)
                .setNonce(nonce)
                .addAllResources(resources)
                .build();
        if (!send(response)) return;
        int bytes = response.getSerializedSize();
        sent(sub, version, nonce, resources.size(), bytes);
        if (sub.kind != null) {
            log.info(
                    "pushed type={} resources={} version={} bytes={} to istiod client={} node={}",
                    sub.typeUrl,
                    resources.size(),
                    version,
                    bytes,
                    id,
                    nodeId());
        } else {
            log.debug("answered type={} (not produced by the bridge) with no resources, client={}", sub.typeUrl, id);
        }
    }

    private static Set<String> names(DiscoveryRequest req) {
        Set<String> names = new TreeSet<>(req.getResourceNamesList());
        names.remove("*");
        return names;
    }

    @Override
    Collection<Sub> types() {
        return subs.values();
    }
}
