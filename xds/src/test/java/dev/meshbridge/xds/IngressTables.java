package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.PathRewrite;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteMatch;
import dev.meshbridge.core.route.SecretRef;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.TlsMaterial;
import dev.meshbridge.core.route.WeightedDestination;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Route tables built from the route model as the ingress module builds them, and readers that render what Envoy gets
 * from them as short lines for assertions.
 */
final class IngressTables {

    static final Instant T0 = Instant.parse("2024-05-01T10:00:00Z");
    static final ServicePort TRI = new ServicePort("tri", 50051, Protocol.TRIPLE);
    static final ServicePort DUBBO = new ServicePort("dubbo", 20880, Protocol.DUBBO);
    static final ServicePort HTTP = new ServicePort("http", 80, Protocol.HTTP);

    private IngressTables() {}

    static IngressRef ref(String namespace, String name, int minutesAfterT0) {
        return new IngressRef("directory", namespace, name, T0.plusSeconds(60L * minutesAfterT0));
    }

    static HttpRoute route(IngressRef owner, String host, PathType type, String path, WeightedDestination... ds) {
        return new HttpRoute(owner, new RouteMatch(host, type, path), List.of(ds));
    }

    static HttpRoute rewritten(HttpRoute r, PathRewrite rewrite) {
        return new HttpRoute(r.owner(), r.match(), r.destinations(), Optional.of(rewrite));
    }

    static HttpRoute defaultBackend(IngressRef owner, WeightedDestination... ds) {
        return new HttpRoute(owner, IngressRoutes.DEFAULT_BACKEND_MATCH, List.of(ds));
    }

    static WeightedDestination registry(String host, int weight) {
        return new WeightedDestination(RegistryDestination.of(host), weight);
    }

    static WeightedDestination registry(String host, int port, int weight) {
        return new WeightedDestination(RegistryDestination.of(host, port), weight);
    }

    static WeightedDestination subset(String host, int weight, String key, String value) {
        TreeMap<String, String> labels = new TreeMap<>(Map.of(key, value));
        return new WeightedDestination(new RegistryDestination(host, 0, key + "-" + value, labels), weight);
    }

    static WeightedDestination service(String namespace, String name, int port) {
        return new WeightedDestination(
                new KubernetesServiceDestination(
                        namespace,
                        name,
                        KubernetesServiceDestination.hostOf(name, namespace, "cluster.local"),
                        port,
                        ""),
                100);
    }

    static TlsEntry tls(IngressRef owner, String secret, boolean material, String... hosts) {
        return new TlsEntry(
                owner,
                List.of(hosts),
                new SecretRef(owner.namespace(), secret),
                material ? Optional.of(material(secret)) : Optional.empty());
    }

    /** A certificate and key in PEM form (not a real key pair: Envoy's parsing of it is not what is tested). */
    static TlsMaterial material(String id) {
        return new TlsMaterial(
                "-----BEGIN CERTIFICATE-----\nY2VydC0" + id + "\n-----END CERTIFICATE-----\n",
                "-----BEGIN PRIVATE KEY-----\na2V5LQ" + id + "\n-----END PRIVATE KEY-----\n");
    }

    static IngressRoutes contribution(IngressRef owner, List<HttpRoute> routes, HttpRoute def, TlsEntry... tls) {
        return new IngressRoutes(owner, routes, Optional.ofNullable(def), List.of(tls));
    }

    // ------------------------------------------------------------------ readers

    static <T extends com.google.protobuf.Message> T unpack(Any any, Class<T> type) {
        try {
            return any.unpack(type);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * One line per route of each virtual host: {@code <vhost> <match> -> <action>}, where a match reads {@code
     * path=/x}, {@code prefix=/} or {@code sep=/x} (path_separated_prefix), and an action {@code cluster}, {@code
     * 90 a, 10 b} (weighted), {@code 503 "body"} (direct response), with {@code {k=v}} for a metadata match and
     * {@code rewrite ...} for a rewrite.
     */
    static List<String> routeLines(RouteConfiguration rc) {
        List<String> out = new ArrayList<>();
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            for (Route r : vh.getRoutesList()) out.add(vh.getName() + " " + match(r) + " -> " + action(r));
        }
        return out;
    }

    static String match(Route r) {
        var m = r.getMatch();
        return switch (m.getPathSpecifierCase()) {
            case PATH -> "path=" + m.getPath();
            case PREFIX -> "prefix=" + m.getPrefix();
            case PATH_SEPARATED_PREFIX -> "sep=" + m.getPathSeparatedPrefix();
            default -> m.getPathSpecifierCase().toString();
        };
    }

    static String action(Route r) {
        if (r.hasDirectResponse()) {
            return r.getDirectResponse().getStatus() + " \""
                    + r.getDirectResponse().getBody().getInlineString().strip() + "\"";
        }
        RouteAction a = r.getRoute();
        StringBuilder sb = new StringBuilder();
        if (a.hasWeightedClusters()) {
            for (WeightedCluster.ClusterWeight cw : a.getWeightedClusters().getClustersList()) {
                if (!sb.isEmpty()) sb.append(", ");
                sb.append(cw.getWeight().getValue()).append(' ').append(cw.getName());
                if (cw.hasMetadataMatch()) sb.append(labels(cw.getMetadataMatch()));
            }
        } else {
            sb.append(a.getCluster());
            if (a.hasMetadataMatch()) sb.append(labels(a.getMetadataMatch()));
        }
        if (!a.getPrefixRewrite().isEmpty()) sb.append(" rewrite prefix ").append(a.getPrefixRewrite());
        if (a.hasRegexRewrite()) {
            sb.append(" rewrite regex ")
                    .append(a.getRegexRewrite().getPattern().getRegex())
                    .append(" ")
                    .append(a.getRegexRewrite().getSubstitution());
        }
        return sb.toString();
    }

    private static String labels(io.envoyproxy.envoy.config.core.v3.Metadata m) {
        Map<String, String> out = new TreeMap<>();
        m.getFilterMetadataMap()
                .get(EnvoyTranslator.LB_METADATA)
                .getFieldsMap()
                .forEach((k, v) -> out.put(k, v.getStringValue()));
        return out.toString();
    }

    /** {@code <name> <type> ...}: EDS clusters with their service name, DNS clusters with their address. */
    static String clusterLine(Cluster c) {
        StringBuilder sb = new StringBuilder(c.getName()).append(' ').append(c.getType());
        if (c.getType() == Cluster.DiscoveryType.EDS)
            sb.append(" eds=").append(c.getEdsClusterConfig().getServiceName());
        if (c.hasLoadAssignment()) {
            c.getLoadAssignment()
                    .getEndpointsList()
                    .forEach(l -> l.getLbEndpointsList()
                            .forEach(e -> sb.append(' ')
                                    .append(e.getEndpoint()
                                            .getAddress()
                                            .getSocketAddress()
                                            .getAddress())
                                    .append(':')
                                    .append(e.getEndpoint()
                                            .getAddress()
                                            .getSocketAddress()
                                            .getPortValue())));
        }
        c.getLbSubsetConfig()
                .getSubsetSelectorsList()
                .forEach(s -> sb.append(" subset-keys=").append(s.getKeysList()));
        return sb.toString();
    }

    /** {@code <listener> <address>:<port> [<chain> sni=<names> sds=<secret>]...}. */
    static String listenerLine(Listener l) {
        var sa = l.getAddress().getSocketAddress();
        StringBuilder sb = new StringBuilder(l.getName())
                .append(' ')
                .append(sa.getAddress())
                .append(':')
                .append(sa.getPortValue());
        for (var fc : l.getFilterChainsList()) {
            sb.append(" [");
            if (fc.hasTransportSocket()) {
                var tls = unpack(
                        fc.getTransportSocket().getTypedConfig(),
                        io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.class);
                sb.append("sni=")
                        .append(fc.getFilterChainMatch().getServerNamesList())
                        .append(" sds=")
                        .append(tls.getCommonTlsContext()
                                .getTlsCertificateSdsSecretConfigs(0)
                                .getName());
            } else {
                sb.append("plain");
            }
            var hcm = unpack(
                    fc.getFilters(0).getTypedConfig(),
                    io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                            .class);
            sb.append(" rds=").append(hcm.getRds().getRouteConfigName()).append(']');
        }
        return sb.toString();
    }
}
