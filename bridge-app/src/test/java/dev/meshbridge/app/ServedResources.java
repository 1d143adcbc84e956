package dev.meshbridge.app;

import dev.meshbridge.ads.AdsTestClient;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Everything one server serves, as two raw ADS clients see it: per type URL, the state-of-the-world {@code
 * version_info} and every resource's bytes (a wildcard SotW subscription), and every resource's Delta version and
 * bytes (a wildcard Delta subscription). Two replicas agree when their {@code ServedResources} are equal.
 *
 * @param sotwVersions type URL to the SotW version of the wildcard view
 * @param resources {@code <type URL> <name>} to {@code <Delta version> <hex of the bytes>}
 */
record ServedResources(Map<String, String> sotwVersions, Map<String, String> resources) {

    static final List<String> XDS_TYPES = List.of(
            "type.googleapis.com/envoy.config.cluster.v3.Cluster",
            "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
            "type.googleapis.com/envoy.config.listener.v3.Listener",
            "type.googleapis.com/envoy.config.route.v3.RouteConfiguration");
    static final List<String> MCP_TYPES = List.of(
            "networking.istio.io/v1alpha3/ServiceEntry",
            "networking.istio.io/v1/ServiceEntry",
            "networking.istio.io/v1alpha3/WorkloadEntry",
            "networking.istio.io/v1/WorkloadEntry");

    /**
     * Reads every resource of these types from the ADS server on {@code port}, as node {@code nodeId} of role {@code
     * role} (its {@code meshbridge.role} metadata; null for none).
     */
    static ServedResources read(int port, List<String> typeUrls, String nodeId, String role) {
        return read(port, typeUrls, nodeId, role, List.of());
    }

    /**
     * As {@link #read(int, List, String, String)}, asking for these listeners by name (a proxyless gRPC client asks
     * for the listener named by its target, {@code xds:///<host>}) instead of every listener.
     */
    static ServedResources read(int port, List<String> typeUrls, String nodeId, String role, List<String> listeners) {
        Node.Builder node = Node.newBuilder().setId(nodeId).setCluster("replica-check");
        if (role != null) {
            node.setMetadata(com.google.protobuf.Struct.newBuilder()
                    .putFields(
                            "meshbridge.role",
                            com.google.protobuf.Value.newBuilder()
                                    .setStringValue(role)
                                    .build()));
        }
        return read(port, typeUrls, node.build(), listeners);
    }

    private static ServedResources read(int port, List<String> typeUrls, Node node, List<String> listeners) {
        Map<String, String> versions = new TreeMap<>();
        Map<String, String> resources = new TreeMap<>();
        TreeSet<String> sotwBodies = new TreeSet<>();
        try (AdsTestClient sotw = new AdsTestClient(port, node).openSotw();
                AdsTestClient delta = new AdsTestClient(port, node).openDelta()) {
            java.util.Set<String> named = new TreeSet<>();
            for (String type : typeUrls) {
                // EDS and RDS are asked for by name (what CDS and LDS name), as Envoy and gRPC ask for them
                List<String> names = PARTIAL.contains(type)
                        ? namesOf(type, named)
                        : type.equals(LDS) ? List.copyOf(listeners) : List.of();
                if (PARTIAL.contains(type) && names.isEmpty()) continue;
                sotw.sotw(type, names, "", "");
                DiscoveryResponse r = sotw.next();
                r.getResourcesList().forEach(a -> named.addAll(referencedNames(a)));
                versions.put(type, r.getVersionInfo());
                r.getResourcesList()
                        .forEach(a -> sotwBodies.add(type + " " + HexFormat.of().formatHex(a.toByteArray())));
                sotw.ack(r, names);

                delta.deltaSubscribe(type, names.isEmpty() ? List.of("*") : names, Map.of());
                DeltaDiscoveryResponse d = delta.nextDelta();
                for (io.envoyproxy.envoy.service.discovery.v3.Resource res : d.getResourcesList()) {
                    String body = HexFormat.of().formatHex(res.getResource().toByteArray());
                    resources.put(type + " " + res.getName(), res.getVersion() + " " + body);
                    if (!sotwBodies.contains(type + " " + body)) {
                        throw new AssertionError("Delta and SotW differ on " + type + " " + res.getName());
                    }
                }
                delta.deltaAck(d);
            }
        }
        return new ServedResources(versions, resources);
    }

    private static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    private static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    private static final String LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
    private static final String RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    private static final java.util.Set<String> PARTIAL = java.util.Set.of(EDS, RDS);

    /** The names a cluster or listener refers to, prefixed by the type they name. */
    private static List<String> referencedNames(com.google.protobuf.Any any) {
        try {
            if (any.is(io.envoyproxy.envoy.config.cluster.v3.Cluster.class)) {
                io.envoyproxy.envoy.config.cluster.v3.Cluster c =
                        any.unpack(io.envoyproxy.envoy.config.cluster.v3.Cluster.class);
                if (!c.hasEdsClusterConfig()) return List.of();
                String service = c.getEdsClusterConfig().getServiceName();
                return List.of(EDS + " " + (service.isEmpty() ? c.getName() : service));
            }
            if (any.is(io.envoyproxy.envoy.config.listener.v3.Listener.class)) {
                io.envoyproxy.envoy.config.listener.v3.Listener l =
                        any.unpack(io.envoyproxy.envoy.config.listener.v3.Listener.class);
                List<com.google.protobuf.Any> managers = new java.util.ArrayList<>();
                if (l.hasApiListener()) managers.add(l.getApiListener().getApiListener());
                l.getFilterChainsList()
                        .forEach(fc -> fc.getFiltersList().forEach(f -> managers.add(f.getTypedConfig())));
                List<String> out = new java.util.ArrayList<>();
                for (com.google.protobuf.Any m : managers) {
                    if (!m.is(HttpConnectionManager.class)) continue;
                    HttpConnectionManager hcm = m.unpack(HttpConnectionManager.class);
                    if (hcm.hasRds()) out.add(RDS + " " + hcm.getRds().getRouteConfigName());
                }
                return out;
            }
            return List.of();
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    private static List<String> namesOf(String type, java.util.Set<String> named) {
        return named.stream()
                .filter(n -> n.startsWith(type + " "))
                .map(n -> n.substring(type.length() + 1))
                .toList();
    }

    int count() {
        return resources.size();
    }
}
