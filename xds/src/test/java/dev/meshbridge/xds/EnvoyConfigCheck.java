package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Value;
import dev.meshbridge.envoy.validation.EnvoyValidators;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Checks a set of xDS resources the way Envoy (v3 API of java-control-plane 1.0.49) does when it takes them, so a
 * test can prove an Envoy would accept the whole configuration and could route with it, without running one:
 *
 * <ol>
 *   <li>every resource parses as its type, and every rule of the API's {@code .proto} files holds (Envoy's
 *       protoc-gen-validate validators, generated from those files: {@link EnvoyValidators}, into every packed typed
 *       config), and the semantic checks Envoy adds ({@link EnvoySemantics});
 *   <li>listeners: unique names and addresses; each filter chain ends in an HTTP connection manager whose last HTTP
 *       filter is the router and whose RDS route configuration exists, a Dubbo proxy whose Dubbo route configuration
 *       exists and whose clusters exist, or a TCP proxy whose cluster exists; filter chain matches are unique within a
 *       listener; SNI matching has a TLS inspector; every SDS secret a TLS context names exists and holds a
 *       certificate and key;
 *   <li>route configurations: domains unique across virtual hosts and well formed (one wildcard, at either end);
 *       every cluster a route or weighted cluster names exists; weights add up to more than 0; a metadata match is
 *       on keys the target cluster's subset selectors list; regex rewrites compile;
 *   <li>clusters: an EDS cluster's load assignment (its service name) exists; DNS and static clusters carry their own.
 * </ol>
 */
final class EnvoyConfigCheck {

    private final Map<String, Cluster> clusters = new TreeMap<>();
    private final Map<String, ClusterLoadAssignment> endpoints = new TreeMap<>();
    private final Map<String, Listener> listeners = new TreeMap<>();
    private final Map<String, RouteConfiguration> routes = new TreeMap<>();
    private final Map<String, Secret> secrets = new TreeMap<>();
    private final Map<String, MultipleRouteConfiguration> dubboRoutes = new TreeMap<>();
    private final List<String> problems = new ArrayList<>();

    /** Checks what a client holds: by type, resource name to resource. */
    static List<String> check(Map<XdsType, Map<String, Any>> resources) {
        EnvoyConfigCheck c = new EnvoyConfigCheck();
        resources.forEach((type, byName) -> byName.forEach((name, any) -> c.add(type, name, any)));
        c.crossCheck();
        return c.problems;
    }

    private void add(XdsType type, String name, Any any) {
        if (!any.getTypeUrl().equals(type.typeUrl())) {
            problems.add(type.shortName() + " " + name + ": type " + any.getTypeUrl());
            return;
        }
        try {
            Message m = switch (type) {
                case CLUSTER -> put(clusters, name, Cluster.parseFrom(any.getValue()), Cluster::getName);
                case ENDPOINT ->
                    put(
                            endpoints,
                            name,
                            ClusterLoadAssignment.parseFrom(any.getValue()),
                            ClusterLoadAssignment::getClusterName);
                case LISTENER -> put(listeners, name, Listener.parseFrom(any.getValue()), Listener::getName);
                case ROUTE ->
                    put(routes, name, RouteConfiguration.parseFrom(any.getValue()), RouteConfiguration::getName);
                case SECRET -> put(secrets, name, Secret.parseFrom(any.getValue()), Secret::getName);
                case DUBBO_ROUTE ->
                    put(
                            dubboRoutes,
                            name,
                            MultipleRouteConfiguration.parseFrom(any.getValue()),
                            MultipleRouteConfiguration::getName);
            };
            for (String p : EnvoyValidators.validate(m)) problems.add(type.shortName() + " " + name + ": " + p);
            XdsResource r = EnvoyTranslator.resource(type, name, m, false);
            for (String p : EnvoySemantics.check(r)) problems.add(type.shortName() + " " + name + ": " + p);
        } catch (InvalidProtocolBufferException e) {
            problems.add(type.shortName() + " " + name + ": does not parse: " + e.getMessage());
        }
    }

    private <T extends Message> T put(
            Map<String, T> into, String name, T m, java.util.function.Function<T, String> nameOf) {
        if (!nameOf.apply(m).equals(name)) problems.add(name + ": its resource is named " + nameOf.apply(m));
        into.put(name, m);
        return m;
    }

    private void crossCheck() {
        Set<String> addresses = new HashSet<>();
        listeners.values().forEach(l -> listener(l, addresses));
        routes.values().forEach(this::routeConfiguration);
        clusters.values().forEach(this::cluster);
        secrets.values().forEach(s -> {
            if (!s.getTlsCertificate().hasCertificateChain()
                    || !s.getTlsCertificate().hasPrivateKey())
                problems.add("secret " + s.getName() + ": no certificate and key");
        });
    }

    private void listener(Listener l, Set<String> addresses) {
        String where = "listener " + l.getName();
        if (l.hasApiListener()) {
            hcm(where, l.getApiListener().getApiListener());
            return;
        }
        var sa = l.getAddress().getSocketAddress();
        if (!addresses.add(sa.getAddress() + ":" + sa.getPortValue()))
            problems.add(where + ": address " + sa.getAddress() + ":" + sa.getPortValue() + " used twice");
        if (l.getFilterChainsCount() == 0) problems.add(where + ": no filter chain");
        Set<String> matches = new HashSet<>();
        boolean sni = false;
        for (FilterChain fc : l.getFilterChainsList()) {
            String chain = where + " chain " + fc.getName();
            List<String> names = new ArrayList<>(fc.getFilterChainMatch().getServerNamesList());
            sni |= !names.isEmpty();
            if (names.isEmpty()) names.add("");
            for (String n : names) {
                if (!matches.add(n)) problems.add(chain + ": server name '" + n + "' is matched by two chains");
            }
            if (fc.getFiltersCount() == 0) {
                problems.add(chain + ": no filter");
                continue;
            }
            Filter last = fc.getFilters(fc.getFiltersCount() - 1);
            switch (last.getName()) {
                case EnvoyIngressTranslator.HCM_FILTER -> hcm(chain, last.getTypedConfig());
                case EnvoySidecarTranslator.DUBBO_FILTER -> dubbo(chain, last.getTypedConfig());
                case EnvoySidecarTranslator.TCP_FILTER -> tcp(chain, last.getTypedConfig());
                default -> problems.add(chain + ": does not end in a connection manager or proxy");
            }
            if (fc.hasTransportSocket()) tls(chain, fc.getTransportSocket().getTypedConfig());
        }
        if (sni
                && l.getListenerFiltersList().stream()
                        .noneMatch(f -> f.getName().equals(EnvoyIngressTranslator.TLS_INSPECTOR)))
            problems.add(where + ": matches server names without a TLS inspector");
    }

    private void hcm(String where, Any config) {
        HttpConnectionManager hcm;
        try {
            hcm = config.unpack(HttpConnectionManager.class);
        } catch (InvalidProtocolBufferException e) {
            problems.add(where + ": no HttpConnectionManager: " + e.getMessage());
            return;
        }
        if (hcm.getHttpFiltersCount() == 0
                || !hcm.getHttpFilters(hcm.getHttpFiltersCount() - 1).getName().equals(EnvoyTranslator.ROUTER_FILTER))
            problems.add(where + ": the router is not the last HTTP filter");
        if (hcm.hasRds() && !routes.containsKey(hcm.getRds().getRouteConfigName()))
            problems.add(where + ": route configuration " + hcm.getRds().getRouteConfigName() + " does not exist");
        if (hcm.hasRouteConfig()) routeConfiguration(hcm.getRouteConfig());
    }

    private void dubbo(String where, Any config) {
        DubboProxy proxy;
        try {
            proxy = config.unpack(DubboProxy.class);
        } catch (InvalidProtocolBufferException e) {
            problems.add(where + ": no DubboProxy: " + e.getMessage());
            return;
        }
        if (!proxy.getDrds().getConfigSource().hasAds()) problems.add(where + ": Dubbo routes are not over ADS");
        MultipleRouteConfiguration routes = dubboRoutes.get(proxy.getDrds().getRouteConfigName());
        if (routes == null) {
            problems.add(
                    where + ": Dubbo route configuration " + proxy.getDrds().getRouteConfigName() + " does not exist");
            return;
        }
        for (var rc : routes.getRouteConfigList()) {
            for (var r : rc.getRoutesList()) {
                // Envoy's dubbo route matcher needs a method matcher (an unset StringMatcher matches nothing)
                if (r.getMatch().getMethod().getName().getMatchPatternCase()
                        == io.envoyproxy.envoy.type.matcher.v3.StringMatcher.MatchPatternCase.MATCHPATTERN_NOT_SET)
                    problems.add(where + ": Dubbo route " + rc.getName() + " has no method matcher");
                if (!clusters.containsKey(r.getRoute().getCluster()))
                    problems.add(where + ": Dubbo route " + rc.getName() + ": cluster "
                            + r.getRoute().getCluster() + " does not exist");
            }
        }
    }

    private void tcp(String where, Any config) {
        try {
            TcpProxy proxy = config.unpack(TcpProxy.class);
            if (!clusters.containsKey(proxy.getCluster()))
                problems.add(where + ": cluster " + proxy.getCluster() + " does not exist");
        } catch (InvalidProtocolBufferException e) {
            problems.add(where + ": no TcpProxy: " + e.getMessage());
        }
    }

    private void tls(String where, Any config) {
        DownstreamTlsContext tls;
        try {
            tls = config.unpack(DownstreamTlsContext.class);
        } catch (InvalidProtocolBufferException e) {
            problems.add(where + ": no DownstreamTlsContext: " + e.getMessage());
            return;
        }
        var common = tls.getCommonTlsContext();
        if (common.getTlsCertificatesCount() == 0 && common.getTlsCertificateSdsSecretConfigsCount() == 0)
            problems.add(where + ": no certificate");
        for (SdsSecretConfig s : common.getTlsCertificateSdsSecretConfigsList()) {
            if (!s.getSdsConfig().hasAds()) problems.add(where + ": secret " + s.getName() + " is not over ADS");
            if (!secrets.containsKey(s.getName())) problems.add(where + ": secret " + s.getName() + " does not exist");
        }
    }

    private void routeConfiguration(RouteConfiguration rc) {
        String where = "route configuration " + rc.getName();
        // domains (unique, one "*") are EnvoySemantics' checks, run on every resource in add()
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            for (Route r : vh.getRoutesList()) route(where + " vhost " + vh.getName() + " route " + r.getName(), r);
        }
    }

    private void route(String where, Route r) {
        if (r.hasDirectResponse()) return;
        if (!r.hasRoute()) {
            problems.add(where + ": neither a route nor a direct response");
            return;
        }
        RouteAction a = r.getRoute();
        switch (a.getClusterSpecifierCase()) {
            case CLUSTER -> target(where, a.getCluster(), a.getMetadataMatch());
            case WEIGHTED_CLUSTERS -> {
                long sum = 0;
                for (WeightedCluster.ClusterWeight cw : a.getWeightedClusters().getClustersList()) {
                    sum += Integer.toUnsignedLong(cw.getWeight().getValue());
                    var meta = cw.hasMetadataMatch() ? cw.getMetadataMatch() : a.getMetadataMatch();
                    target(where, cw.getName(), meta);
                }
                if (sum == 0) problems.add(where + ": the weights add up to 0");
            }
            default -> problems.add(where + ": no cluster");
        }
        if (a.hasRegexRewrite()) {
            try {
                Pattern.compile(a.getRegexRewrite().getPattern().getRegex());
            } catch (PatternSyntaxException e) {
                problems.add(
                        where + ": regex " + a.getRegexRewrite().getPattern().getRegex() + " does not compile");
            }
        }
    }

    private void target(String where, String clusterName, io.envoyproxy.envoy.config.core.v3.Metadata match) {
        Cluster c = clusters.get(clusterName);
        if (c == null) {
            problems.add(where + ": cluster " + clusterName + " does not exist");
            return;
        }
        var labels = match.getFilterMetadataMap().get(EnvoyTranslator.LB_METADATA);
        if (labels == null) return;
        Set<String> keys = new java.util.TreeSet<>(labels.getFieldsMap().keySet());
        boolean selected = c.getLbSubsetConfig().getSubsetSelectorsList().stream()
                .anyMatch(s -> new java.util.TreeSet<>(s.getKeysList()).equals(keys));
        if (!selected) problems.add(where + ": cluster " + clusterName + " has no subset selector for " + keys);
        for (Value v : labels.getFieldsMap().values()) {
            if (!v.hasStringValue()) problems.add(where + ": metadata match value " + v + " is not a string");
        }
    }

    private void cluster(Cluster c) {
        String where = "cluster " + c.getName();
        switch (c.getType()) {
            case EDS -> {
                String service = c.getEdsClusterConfig().getServiceName().isEmpty()
                        ? c.getName()
                        : c.getEdsClusterConfig().getServiceName();
                if (!c.getEdsClusterConfig().getEdsConfig().hasAds()) problems.add(where + ": EDS not over ADS");
                if (!endpoints.containsKey(service))
                    problems.add(where + ": load assignment " + service + " does not exist");
            }
            case STRICT_DNS, LOGICAL_DNS, STATIC -> {
                if (!c.hasLoadAssignment()) problems.add(where + ": no load assignment");
            }
            default -> problems.add(where + ": type " + c.getType());
        }
    }
}
