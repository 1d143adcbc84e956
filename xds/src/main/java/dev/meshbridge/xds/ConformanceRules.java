package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meshbridge.core.naming.IpAddresses;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.cluster.v3.OutlierDetection;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The one list of rules every resource the bridge sends must satisfy, beyond the {@code .proto} annotations (which
 * the tests check with Envoy's generated validators, module {@code envoy-validation}): what Envoy and every proxyless gRPC client check when they take a resource, the strictest
 * of them where they differ. The translator runs them before anything is sent (a resource that breaks one is left out
 * and reported), and the tests run them on every resource the translator makes (golden files, generated catalogs).
 *
 * <p>Each rule says where it comes from:
 *
 * <ul>
 *   <li><b>grpc-java</b>: {@code io.grpc.xds} XdsClusterResource, XdsEndpointResource, XdsListenerResource,
 *       XdsRouteConfigureResource of grpc-xds 1.85.1 (the version this build tests);
 *   <li><b>grpc-go</b>: {@code xds/internal/xdsclient/xdsresource} unmarshal_cds.go, unmarshal_eds.go,
 *       unmarshal_lds.go, unmarshal_rds.go;
 *   <li><b>grpc-js</b>: {@code @grpc/grpc-js-xds} 1.14.1 {@code src/xds-resource-type/} cluster-, endpoint-,
 *       listener- and route-config-resource-type (the version this build tests);
 *   <li><b>C-core</b> (C++, Python, Ruby, PHP, C#): {@code src/core/xds/grpc/} xds_cluster_parser.cc,
 *       xds_endpoint_parser.cc, xds_listener_parser.cc, xds_route_config_parser.cc;
 *   <li><b>A27, A28, A29, A36, A37, A39, A41, A42, A44, A47, A50, A52, A58</b>: the gRFCs of xDS load balancing,
 *       routing, TLS, xDS servers, aggregate clusters, HTTP filters, RBAC's HCM rules, ring hash, retries, federation
 *       names, outlier detection, custom LB policies and weighted round robin;
 *   <li><b>Envoy</b>: what Envoy refuses beyond its proto annotations;
 *   <li><b>bridge</b>: an invariant of the bridge's own translation (weights, health), so that what a client does with
 *       a resource is what the registry says.
 * </ul>
 *
 * <p>Out of scope by construction, and refused here if ever made: server-side Listeners (A36: the bridge sends only
 * API listeners), aggregate and LOGICAL_DNS clusters (A37: only EDS clusters), TLS transport sockets (A29), and any
 * {@code load_balancing_policy} (A52, A58: the bridge relies on {@code lb_policy} ROUND_ROBIN, which every gRPC
 * implementation turns into {@code xds_wrr_locality} over {@code round_robin}).
 */
final class ConformanceRules {

    static final String HCM_TYPE =
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
    static final String ROUTER_TYPE = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
    static final long MAX_UINT32 = 0xFFFF_FFFFL;
    /** A42: the largest ring a ring_hash cluster may ask for. */
    static final long RING_SIZE_LIMIT = 8L * 1024 * 1024;

    private ConformanceRules() {}

    // ------------------------------------------------------------------ Cluster

    /** The rules of a Cluster, for Envoy and every gRPC client. */
    static List<String> cluster(Cluster c) {
        List<String> out = new ArrayList<>();
        String at = "cluster " + c.getName();
        // Envoy (PGV min_len 1), grpc-java extractResourceName: a resource is known by its name
        if (c.getName().isEmpty()) out.add("cluster has no name");
        // A27, A37; grpc-java "unsupported built-in discovery type", grpc-go "unsupported cluster type", grpc-js
        // "Unsupported type", C-core: EDS, LOGICAL_DNS and aggregate only; the bridge makes EDS clusters only
        if (c.getType() != Cluster.DiscoveryType.EDS || c.hasClusterType())
            out.add(at + ": is not of type EDS (the bridge makes no LOGICAL_DNS or aggregate cluster)");
        // A27; grpc-java "field eds_cluster_config must be set to indicate to use EDS over ADS or self
        // ConfigSource", grpc-go "CDS's EDS config source is not ADS or Self", grpc-js "eds_config.ads and
        // eds_config.self both unset", C-core
        if (!adsOrSelf(c.getEdsClusterConfig().getEdsConfig()))
            out.add(at + ": its EDS config source is neither ADS nor self");
        // A47; grpc-java "EDS service_name must be set when Cluster resource has an xdstp name", grpc-js
        if (c.getName().startsWith("xdstp:")
                && c.getEdsClusterConfig().getServiceName().isEmpty())
            out.add(at + ": an xdstp: name needs an EDS service_name");
        // A27, A42; grpc-go "unexpected lbPolicy", grpc-js "unsupported lb_policy", grpc-java and C-core: only
        // ROUND_ROBIN, RING_HASH (and LEAST_REQUEST in grpc-java and grpc-go alone)
        switch (c.getLbPolicy()) {
            case ROUND_ROBIN -> {}
            case RING_HASH -> ringHash(c, at, out);
            default -> out.add(at + ": lb_policy " + c.getLbPolicy() + " is not supported by every gRPC client");
        }
        // A52, A58: the bridge leaves load_balancing_policy unset (see the class comment)
        if (c.hasLoadBalancingPolicy()) out.add(at + ": sets load_balancing_policy");
        // A27; grpc-java "only support LRS for the same management server", grpc-js "lrs_server set but
        // lrs_server.self unset", C-core
        if (c.hasLrsServer() && !c.getLrsServer().hasSelf()) out.add(at + ": lrs_server is not self");
        // A29; grpc-java "transport-socket-matches not supported", grpc-go "unsupport transport_socket_matches";
        // a TLS transport socket needs certificate providers in the client's bootstrap, which the bridge cannot know
        if (c.getTransportSocketMatchesCount() > 0) out.add(at + ": has transport_socket_matches");
        if (c.hasTransportSocket()) out.add(at + ": has a transport_socket");
        // A50; grpc-java "malformed outlier_detection", grpc-js: durations >= 0, percentages <= 100
        if (c.hasOutlierDetection()) outlierDetection(c.getOutlierDetection(), at, out);
        // Envoy (PGV duration gt 0): a cluster connects within a positive timeout
        if (c.getConnectTimeout().getSeconds() < 0
                || (c.getConnectTimeout().getSeconds() == 0
                        && c.getConnectTimeout().getNanos() <= 0)) out.add(at + ": has no positive connect timeout");
        return out;
    }

    private static void ringHash(Cluster c, String at, List<String> out) {
        Cluster.RingHashLbConfig r = c.getRingHashLbConfig();
        // A42; grpc-go "unsupported ring_hash hash function", grpc-js, C-core: XX_HASH only
        if (r.getHashFunction() != Cluster.RingHashLbConfig.HashFunction.XX_HASH)
            out.add(at + ": ring hash function " + r.getHashFunction() + " is not XX_HASH");
        // A42; grpc-go, grpc-js, C-core: ring sizes at most 8M, minimum not above maximum
        long min = r.hasMinimumRingSize() ? r.getMinimumRingSize().getValue() : 1024;
        long max = r.hasMaximumRingSize() ? r.getMaximumRingSize().getValue() : RING_SIZE_LIMIT;
        if (min > RING_SIZE_LIMIT || max > RING_SIZE_LIMIT || min > max)
            out.add(at + ": ring sizes " + min + ".." + max + " are outside 1.." + RING_SIZE_LIMIT);
    }

    private static void outlierDetection(OutlierDetection o, String at, List<String> out) {
        for (Duration d : List.of(o.getInterval(), o.getBaseEjectionTime(), o.getMaxEjectionTime())) {
            if (d.getSeconds() < 0 || d.getNanos() < 0) out.add(at + ": outlier_detection has a negative duration");
        }
        for (var p : List.of(
                o.getMaxEjectionPercent(),
                o.getEnforcingSuccessRate(),
                o.getFailurePercentageThreshold(),
                o.getEnforcingFailurePercentage())) {
            if (Integer.toUnsignedLong(p.getValue()) > 100) out.add(at + ": outlier_detection percentage above 100");
        }
    }

    private static boolean adsOrSelf(ConfigSource s) {
        return s.hasAds() || s.hasSelf();
    }

    // ------------------------------------------------------------------ ClusterLoadAssignment

    /** The rules of a ClusterLoadAssignment, for Envoy and every gRPC client. */
    static List<String> loadAssignment(ClusterLoadAssignment cla) {
        List<String> out = new ArrayList<>();
        String at = "load assignment " + cla.getClusterName();
        // grpc-java extractResourceName, grpc-go, grpc-js: a load assignment is known by its cluster_name
        if (cla.getClusterName().isEmpty()) out.add("load assignment has no cluster_name");
        Map<Integer, Long> weightByPriority = new TreeMap<>();
        Map<Integer, Set<Object>> localitiesByPriority = new HashMap<>();
        Set<AddressPort> addresses = new HashSet<>();
        for (int i = 0; i < cla.getEndpointsCount(); i++) {
            LocalityLbEndpoints l = cla.getEndpoints(i);
            // the messages are made only for a problem: a change checks every endpoint of the changed service
            final int index = i;
            java.util.function.Supplier<String> where = () -> at + " endpoints[" + index + "]";
            // A27; grpc-go "EDS response contains a locality without ID", grpc-js "endpoints[i].locality unset",
            // C-core ".locality field not present": every LocalityLbEndpoints names its locality (empty strings
            // where there is none)
            if (!l.hasLocality()) out.add(where.get() + ": has no locality");
            var loc = l.getLocality();
            java.util.function.Supplier<String> locality =
                    () -> loc.getRegion() + "/" + loc.getZone() + "/" + loc.getSubZone();
            // A27; grpc-java, grpc-go, grpc-js, C-core skip a locality whose weight is unset or 0 without a word:
            // its endpoints would be lost
            long weight = Integer.toUnsignedLong(l.getLoadBalancingWeight().getValue());
            if (!l.hasLoadBalancingWeight() || weight == 0)
                out.add(where.get() + ": locality " + locality.get() + " has no weight");
            // grpc-java "ClusterLoadAssignment has duplicate locality", grpc-go "duplicate locality", grpc-js "is a
            // duplicate of another locality", C-core "duplicate locality": a locality appears once per priority
            if (!localitiesByPriority
                    .computeIfAbsent(l.getPriority(), p -> new HashSet<>())
                    .add(loc))
                out.add(where.get() + ": locality " + locality.get() + " appears twice in priority " + l.getPriority());
            weightByPriority.merge(l.getPriority(), weight, Long::sum);
            long sum = 0;
            for (int k = 0; k < l.getLbEndpointsCount(); k++) {
                LbEndpoint e = l.getLbEndpoints(k);
                final int endpointIndex = k;
                sum += endpoint(e, () -> where.get() + ".lb_endpoints[" + endpointIndex + "]", addresses, out);
            }
            // Envoy (32-bit weight sums), A27: a locality's weight is a uint32
            if (sum > MAX_UINT32)
                out.add(where.get() + ": weight sum " + sum + " of locality " + locality.get() + " is above "
                        + MAX_UINT32);
            // bridge: a locality weighs the sum of its endpoints' weights, so picking a locality by weight and then
            // an endpoint in it (gRPC) splits traffic as the endpoints' weights do (Envoy)
            else if (sum != weight)
                out.add(where.get() + ": locality weight " + weight + " is not its endpoints' sum " + sum);
        }
        for (Map.Entry<Integer, Long> p : weightByPriority.entrySet()) {
            // A27; grpc-go "sum of weights of localities at the same priority exceeded maximal value", grpc-js
            // "total weight greater than UINT32_MAX", C-core "sum of locality weights ... exceeds uint32 max"
            if (p.getValue() > MAX_UINT32)
                out.add(at + ": weight sum " + p.getValue() + " of priority " + p.getKey() + " is above " + MAX_UINT32);
        }
        // grpc-java "ClusterLoadAssignment has sparse priorities", grpc-go "priority missing", grpc-js "Endpoints
        // have priority N but not N-1", C-core "priority N empty": priorities run from 0 without a gap
        int expected = 0;
        for (int p : weightByPriority.keySet()) {
            if (p != expected++) {
                out.add(at + ": priorities " + weightByPriority.keySet() + " do not run from 0 without a gap");
                break;
            }
        }
        return out;
    }

    /** Checks one endpoint; returns its weight (0 when it has none, which is reported). */
    /** An address and port, for the duplicate check. */
    private record AddressPort(String address, int port) {}

    private static long endpoint(
            LbEndpoint e, java.util.function.Supplier<String> at, Set<AddressPort> addresses, List<String> out) {
        // grpc-java "LbEndpoint with no endpoint/address", grpc-js "socket_address not set", C-core ".endpoint field
        // not present": an endpoint has a socket address
        if (!e.hasEndpoint() || !e.getEndpoint().getAddress().hasSocketAddress()) {
            out.add(at.get() + ": has no socket address");
        } else {
            SocketAddress sa = e.getEndpoint().getAddress().getSocketAddress();
            // grpc-js "Unsupported port_specifier", C-core: a port number, not a named port
            if (sa.getPortSpecifierCase() != SocketAddress.PortSpecifierCase.PORT_VALUE)
                out.add(at.get() + ": has no port_value");
            // Envoy (PGV lte 65535) and every client: a port that can be dialled
            if (sa.getPortValue() < 1 || sa.getPortValue() > 65535)
                out.add(at.get() + ": port " + sa.getPortValue() + " is out of range");
            // grpc-java "Address is not an IP", grpc-js "address is not a valid IPv4 or IPv6 address", C-core
            // ParseXdsAddress; Envoy's EDS resolves no names
            if (!IpAddresses.isBare(sa.getAddress()))
                out.add(at.get() + ": address '" + sa.getAddress() + "' is not an IP address");
            // C-core: no custom resolver
            if (!sa.getResolverName().isEmpty()) out.add(at.get() + ": names a resolver");
            // grpc-go "duplicate endpoint with the same address", grpc-js "duplicate of another address", C-core
            // "duplicate endpoint address": an address and port appear once in a whole load assignment
            if (!addresses.add(new AddressPort(sa.getAddress(), sa.getPortValue())))
                out.add(at.get() + ": " + sa.getAddress() + ":" + sa.getPortValue() + " appears twice");
        }
        // grpc-go "EDS response contains an endpoint with zero weight", C-core "must be greater than 0"; the bridge
        // always sets the weight (an unset one means 1 to gRPC and to Envoy)
        long w = Integer.toUnsignedLong(e.getLoadBalancingWeight().getValue());
        if (!e.hasLoadBalancingWeight() || w == 0) out.add(at.get() + ": has no weight of at least 1");
        return w;
    }

    /**
     * The rules of a load assignment made for proxyless gRPC clients: those of {@link #loadAssignment} and the form
     * that makes their locality-weighted pick follow the endpoints' weights.
     */
    static List<String> grpcLoadAssignment(ClusterLoadAssignment cla) {
        List<String> out = loadAssignment(cla);
        String at = "load assignment " + cla.getClusterName();
        for (int i = 0; i < cla.getEndpointsCount(); i++) {
            LocalityLbEndpoints l = cla.getEndpoints(i);
            boolean mixed = false;
            for (LbEndpoint e : l.getLbEndpointsList()) {
                mixed |= e.getLoadBalancingWeight().getValue()
                        != l.getLbEndpoints(0).getLoadBalancingWeight().getValue();
                // A27: gRPC uses HEALTHY and UNKNOWN endpoints only; a locality's weight counts only what gRPC uses
                if (e.getHealthStatus() != HealthStatus.HEALTHY)
                    out.add(at + " endpoints[" + i + "]: holds an endpoint that is not HEALTHY");
            }
            // A27 ("the load_balancing_weight of LbEndpoint is ignored" under round_robin), A52 (xds_wrr_locality
            // picks a locality by weight, then round_robin within it): endpoints of one locality weigh the same
            if (mixed) {
                Set<Integer> weights = new java.util.TreeSet<>();
                for (LbEndpoint e : l.getLbEndpointsList())
                    weights.add(e.getLoadBalancingWeight().getValue());
                out.add(at + " endpoints[" + i + "]: endpoints of different weights " + weights + " share a locality");
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ Listener

    /** The rules of an API listener for proxyless gRPC clients (the only Listener the bridge makes for them). */
    static List<String> listener(Listener l) {
        List<String> out = new ArrayList<>();
        String at = "listener " + l.getName();
        if (l.getName().isEmpty()) out.add("listener has no name");
        // A27, A36: a client-side listener is an api_listener; the bridge makes no server-side listener
        if (!l.hasApiListener()) {
            out.add(at + ": has no api_listener");
            return out;
        }
        // grpc-js "listener_filters populated", "use_original_dst.value == true" (checked on every listener)
        if (l.getListenerFiltersCount() > 0) out.add(at + ": has listener_filters");
        if (l.getUseOriginalDst().getValue()) out.add(at + ": sets use_original_dst");
        Any api = l.getApiListener().getApiListener();
        // A27; grpc-go "unexpected resource type", grpc-js "api_listener.api_listener.type_url != ...", grpc-java
        // "Could not parse HttpConnectionManager config from ApiListener"
        if (!api.getTypeUrl().equals(HCM_TYPE)) {
            out.add(at + ": api_listener holds " + api.getTypeUrl() + ", not an HttpConnectionManager");
            return out;
        }
        HttpConnectionManager hcm;
        try {
            hcm = HttpConnectionManager.parseFrom(api.getValue());
        } catch (InvalidProtocolBufferException e) {
            out.add(at + ": api_listener does not parse as an HttpConnectionManager");
            return out;
        }
        // A41; grpc-java "HttpConnectionManager with xff_num_trusted_hops unsupported", "... with
        // original_ip_detection_extensions unsupported", grpc-go
        if (hcm.getXffNumTrustedHops() != 0) out.add(at + ": sets xff_num_trusted_hops");
        if (hcm.getOriginalIpDetectionExtensionsCount() > 0) out.add(at + ": sets original_ip_detection_extensions");
        switch (hcm.getRouteSpecifierCase()) {
            case RDS -> {
                // A27; grpc-java "HttpConnectionManager contains invalid RDS: must specify ADS or self ConfigSource",
                // grpc-go "LDS's RDS configSource is not ADS or Self", grpc-js, C-core
                if (!adsOrSelf(hcm.getRds().getConfigSource()))
                    out.add(at + ": its RDS config source is neither ADS nor self");
                // grpc-go "empty route_config_name"
                if (hcm.getRds().getRouteConfigName().isEmpty()) out.add(at + ": names no route configuration");
            }
            case ROUTE_CONFIG -> out.addAll(route(hcm.getRouteConfig()));
            // grpc-java "HttpConnectionManager neither has inlined route_config nor RDS", grpc-go "no RouteSpecifier"
            default -> out.add(at + ": has neither RDS nor an inline route configuration");
        }
        httpFilters(hcm, at, out);
        return out;
    }

    private static void httpFilters(HttpConnectionManager hcm, String at, List<String> out) {
        // A39; grpc-java "Missing HttpFilter in HttpConnectionManager.", grpc-go "http filters list is empty"
        if (hcm.getHttpFiltersCount() == 0) {
            out.add(at + ": has no HTTP filter");
            return;
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < hcm.getHttpFiltersCount(); i++) {
            HttpFilter f = hcm.getHttpFilters(i);
            boolean last = i == hcm.getHttpFiltersCount() - 1;
            // grpc-go "filter missing name field"
            if (f.getName().isEmpty()) out.add(at + ": HTTP filter " + i + " has no name");
            // grpc-java "HttpConnectionManager contains duplicate HttpFilter", grpc-go "duplicate filter name",
            // grpc-js "duplicate HTTP filter name"
            if (!names.add(f.getName())) out.add(at + ": HTTP filter name " + f.getName() + " appears twice");
            // grpc-java "is not optional and has no typed config", grpc-go "no filter implementation found",
            // C-core: a filter every client implements; the router is the one filter the bridge uses
            if (!f.getIsOptional() && !ROUTER_TYPE.equals(f.getTypedConfig().getTypeUrl()))
                out.add(at + ": HTTP filter " + f.getName() + " of type "
                        + f.getTypedConfig().getTypeUrl() + " is not known to every gRPC client");
            // A39; grpc-java "A terminal HttpFilter must be the last filter", "The last HttpFilter must be a
            // terminal filter", grpc-go, grpc-js "router filter is before the end of the list": the router, and
            // only it, comes last
            boolean router = ROUTER_TYPE.equals(f.getTypedConfig().getTypeUrl());
            if (router != last)
                out.add(at + (last ? ": the last HTTP filter is not the router" : ": the router is not last"));
        }
    }

    // ------------------------------------------------------------------ RouteConfiguration

    /** The rules of a route configuration for proxyless gRPC clients, and Envoy's rules on domains. */
    static List<String> route(RouteConfiguration rc) {
        List<String> out = new ArrayList<>();
        String at = "route configuration " + rc.getName();
        if (rc.getName().isEmpty()) out.add("route configuration has no name");
        // grpc-go, grpc-java: a cluster specifier plugin (RLS) needs a plugin every client has; the bridge uses none
        if (rc.getClusterSpecifierPluginsCount() > 0) out.add(at + ": has cluster_specifier_plugins");
        Set<String> domains = new HashSet<>();
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            String vat = at + " virtual host " + vh.getName();
            // Envoy: every virtual host has a domain, and a domain belongs to one virtual host
            if (vh.getDomainsCount() == 0) out.add(vat + ": has no domain");
            for (String d : vh.getDomainsList()) {
                if (!domains.add(d)) out.add(vat + ": domain " + d + " appears in two virtual hosts");
                // A28; grpc-js "domains entry has multiple wildcards", "has wildcard in the middle"
                int star = d.indexOf('*');
                if (star >= 0 && (star != d.lastIndexOf('*') || (star != 0 && star != d.length() - 1)))
                    out.add(vat + ": domain " + d + " has a wildcard elsewhere than at one end");
            }
            // grpc-go, grpc-java, grpc-js: per-filter overrides need a filter every client has; the bridge sets none
            if (vh.getTypedPerFilterConfigCount() > 0) out.add(vat + ": has typed_per_filter_config");
            if (vh.hasRetryPolicy()) retry(vh.getRetryPolicy(), vat, out);
            for (int i = 0; i < vh.getRoutesCount(); i++) routeEntry(vh.getRoutes(i), vat + " route " + i, out);
        }
        return out;
    }

    private static void routeEntry(Route r, String at, List<String> out) {
        // A28; grpc-go "doesn't have a match", grpc-js "match unset"
        if (!r.hasMatch()) out.add(at + ": has no match");
        RouteMatch m = r.getMatch();
        // A28; grpc-go "doesn't have a path specifier", grpc-js "unsupported path_specifier" (prefix, path and
        // safe_regex only), grpc-java "Unknown path match type"
        switch (m.getPathSpecifierCase()) {
            case PREFIX, PATH -> {}
            case SAFE_REGEX -> regex(m.getSafeRegex().getRegex(), at, out);
            default -> out.add(at + ": path match " + m.getPathSpecifierCase() + " is not supported by every client");
        }
        for (var h : m.getHeadersList()) {
            // grpc-go "unrecognized header matcher", grpc-js: exact, safe_regex, range, present, prefix, suffix and
            // string matches only; regexes must compile
            switch (h.getHeaderMatchSpecifierCase()) {
                case EXACT_MATCH, RANGE_MATCH, PRESENT_MATCH, PREFIX_MATCH, SUFFIX_MATCH -> {}
                case SAFE_REGEX_MATCH -> regex(h.getSafeRegexMatch().getRegex(), at, out);
                default -> out.add(at + ": header match on " + h.getName() + " is not supported by every client");
            }
        }
        // grpc-js "unsupported action" refuses the whole route configuration for a redirect or direct response
        // (grpc-go and grpc-java ignore the route): every route forwards
        if (r.getActionCase() != Route.ActionCase.ROUTE) {
            out.add(at + ": action " + r.getActionCase() + " is not route");
            return;
        }
        // grpc-go, grpc-java, grpc-js: per-filter overrides need a filter every client has; the bridge sets none
        if (r.getTypedPerFilterConfigCount() > 0) out.add(at + ": has typed_per_filter_config");
        RouteAction a = r.getRoute();
        switch (a.getClusterSpecifierCase()) {
            // Envoy (PGV min_len 1): a route names its cluster
            case CLUSTER -> {
                if (a.getCluster().isEmpty()) out.add(at + ": names no cluster");
            }
            case WEIGHTED_CLUSTERS -> {
                // A28; grpc-java "Sum of cluster weights should be above 0", "... less than the maximum unsigned
                // integer", grpc-go, grpc-js: weights add up to 1..2^32-1
                long sum = 0;
                for (WeightedCluster.ClusterWeight w : a.getWeightedClusters().getClustersList()) {
                    sum += Integer.toUnsignedLong(w.getWeight().getValue());
                    if (w.getName().isEmpty()) out.add(at + ": a weighted cluster has no name");
                }
                if (sum == 0 || sum > MAX_UINT32) out.add(at + ": weighted cluster weights add up to " + sum);
            }
            default -> out.add(at + ": cluster specifier " + a.getClusterSpecifierCase() + " is not a cluster");
        }
        if (a.hasRetryPolicy()) retry(a.getRetryPolicy(), at, out);
    }

    private static void retry(io.envoyproxy.envoy.config.route.v3.RetryPolicy p, String at, List<String> out) {
        // A44; grpc-go "retry_policy.num_retries must be >= 1", grpc-java "base_interval in retry_backoff must be
        // positive", "max_interval in retry_backoff cannot be less than base_interval"
        if (p.hasNumRetries() && p.getNumRetries().getValue() < 1) out.add(at + ": retry_policy.num_retries < 1");
        if (p.hasRetryBackOff()) {
            Duration base = p.getRetryBackOff().getBaseInterval();
            if (base.getSeconds() <= 0 && (base.getSeconds() < 0 || base.getNanos() <= 0))
                out.add(at + ": retry back-off base_interval is not positive");
            if (p.getRetryBackOff().hasMaxInterval()
                    && compare(p.getRetryBackOff().getMaxInterval(), base) < 0)
                out.add(at + ": retry back-off max_interval is below base_interval");
        }
    }

    private static int compare(Duration a, Duration b) {
        return a.getSeconds() != b.getSeconds()
                ? Long.compare(a.getSeconds(), b.getSeconds())
                : Integer.compare(a.getNanos(), b.getNanos());
    }

    private static void regex(String re, String at, List<String> out) {
        // grpc-go "contains an invalid regex", grpc-java "Malformed safe regex pattern"
        try {
            Pattern.compile(re);
        } catch (PatternSyntaxException e) {
            out.add(at + ": regex " + re + " does not compile");
        }
    }

    // ------------------------------------------------------------------ a whole configuration

    /**
     * Every rule on what a proxyless gRPC client holds, by type and name, plus what makes a call possible: each
     * listener's route configuration exists and has a virtual host whose domain is the listener's name (the target's
     * authority, A28), each cluster a route names exists, and each cluster's load assignment exists. The load
     * assignments of clusters named {@code grpc|...} are checked in their proxyless form.
     */
    static List<String> proxyless(Map<XdsType, Map<String, Any>> resources) {
        List<String> out = new ArrayList<>();
        Map<String, Listener> listeners = parse(resources, XdsType.LISTENER, Listener.getDefaultInstance(), out);
        Map<String, RouteConfiguration> routes =
                parse(resources, XdsType.ROUTE, RouteConfiguration.getDefaultInstance(), out);
        Map<String, Cluster> clusters = parse(resources, XdsType.CLUSTER, Cluster.getDefaultInstance(), out);
        Map<String, ClusterLoadAssignment> endpoints =
                parse(resources, XdsType.ENDPOINT, ClusterLoadAssignment.getDefaultInstance(), out);
        listeners.forEach((name, l) -> {
            if (!l.getName().equals(name)) out.add("listener " + name + ": the resource is named " + l.getName());
            out.addAll(listener(l));
            String routeName = hcmRoute(l);
            RouteConfiguration rc = routeName == null ? null : routes.get(routeName);
            if (rc == null) {
                out.add("listener " + name + ": its route configuration " + routeName + " is not there");
            } else if (rc.getVirtualHostsList().stream()
                    .noneMatch(vh -> vh.getDomainsList().contains(name))) {
                out.add("listener " + name + ": no virtual host of " + routeName + " has the domain " + name);
            }
        });
        routes.forEach((name, rc) -> {
            if (!rc.getName().equals(name)) out.add("route " + name + ": the resource is named " + rc.getName());
            out.addAll(route(rc));
            for (VirtualHost vh : rc.getVirtualHostsList()) {
                for (Route r : vh.getRoutesList()) {
                    List<String> named = new ArrayList<>();
                    if (r.getRoute().hasWeightedClusters()) {
                        r.getRoute().getWeightedClusters().getClustersList().forEach(w -> named.add(w.getName()));
                    } else {
                        named.add(r.getRoute().getCluster());
                    }
                    for (String c : named) {
                        if (!clusters.containsKey(c)) out.add("route " + name + ": cluster " + c + " is not there");
                    }
                }
            }
        });
        clusters.forEach((name, c) -> {
            if (!c.getName().equals(name)) out.add("cluster " + name + ": the resource is named " + c.getName());
            out.addAll(cluster(c));
            String service = c.getEdsClusterConfig().getServiceName().isEmpty()
                    ? name
                    : c.getEdsClusterConfig().getServiceName();
            if (!endpoints.containsKey(service))
                out.add("cluster " + name + ": its load assignment " + service + " is not there");
        });
        endpoints.forEach((name, cla) -> {
            if (!cla.getClusterName().equals(name))
                out.add("load assignment " + name + ": the resource is named " + cla.getClusterName());
            out.addAll(name.startsWith("grpc|") ? grpcLoadAssignment(cla) : loadAssignment(cla));
        });
        return out;
    }

    private static String hcmRoute(Listener l) {
        try {
            HttpConnectionManager hcm = HttpConnectionManager.parseFrom(
                    l.getApiListener().getApiListener().getValue());
            return hcm.hasRds() ? hcm.getRds().getRouteConfigName() : null;
        } catch (InvalidProtocolBufferException e) {
            return null;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Message> Map<String, T> parse(
            Map<XdsType, Map<String, Any>> resources, XdsType type, T prototype, List<String> out) {
        Map<String, T> parsed = new TreeMap<>();
        resources.getOrDefault(type, Map.of()).forEach((name, any) -> {
            // every client: a resource of a type holds that type
            if (!any.getTypeUrl().equals(type.typeUrl())) {
                out.add(type.shortName() + " " + name + ": holds " + any.getTypeUrl());
                return;
            }
            try {
                parsed.put(name, (T) prototype.getParserForType().parseFrom(any.getValue()));
            } catch (InvalidProtocolBufferException e) {
                out.add(type.shortName() + " " + name + ": does not parse");
            }
        });
        return parsed;
    }
}
