package dev.meshbridge.xds;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.util.HashSet;
import java.util.Set;

/**
 * The checks Envoy and grpc-java apply to the resources the bridge makes, run before anything is sent. Each method
 * returns null when the resource is acceptable, or what is wrong with it.
 */
final class ResourceValidator {

    private static final long MAX_UINT32 = 0xFFFF_FFFFL;

    private ResourceValidator() {}

    static String cluster(Cluster c) {
        if (c.getName().isEmpty()) return "cluster has no name";
        if (c.getType() != Cluster.DiscoveryType.EDS) return "cluster " + c.getName() + " is not of type EDS";
        if (!c.getEdsClusterConfig().getEdsConfig().hasAds()) return "cluster " + c.getName() + " is not fed over ADS";
        long nanos = c.getConnectTimeout().getSeconds() * 1_000_000_000L
                + c.getConnectTimeout().getNanos();
        if (nanos <= 0) return "cluster " + c.getName() + " has no positive connect timeout";
        return null;
    }

    static String loadAssignment(ClusterLoadAssignment cla) {
        if (cla.getClusterName().isEmpty()) return "load assignment has no cluster name";
        long total = 0;
        Set<String> addresses = new HashSet<>();
        for (LocalityLbEndpoints l : cla.getEndpointsList()) {
            long sum = 0;
            for (LbEndpoint e : l.getLbEndpointsList()) {
                long w = Integer.toUnsignedLong(e.getLoadBalancingWeight().getValue());
                if (w < 1) return "endpoint weight 0 in " + cla.getClusterName();
                sum += w;
                var sa = e.getEndpoint().getAddress().getSocketAddress();
                if (!InetLiterals.isIpLiteral(sa.getAddress())) {
                    return "endpoint address " + sa.getAddress() + " is not an IP in " + cla.getClusterName();
                }
                if (sa.getPortValue() < 1 || sa.getPortValue() > 65535) {
                    return "endpoint port " + sa.getPortValue() + " is out of range in " + cla.getClusterName();
                }
                if (!addresses.add(sa.getAddress() + "|" + sa.getPortValue())) {
                    return "endpoint " + sa.getAddress() + ":" + sa.getPortValue() + " appears twice in "
                            + cla.getClusterName();
                }
            }
            if (sum > MAX_UINT32) {
                return "weight sum " + sum + " of locality " + l.getLocality().getRegion() + "/"
                        + l.getLocality().getZone() + "/" + l.getLocality().getSubZone() + " in " + cla.getClusterName()
                        + " is above " + MAX_UINT32;
            }
            if (Integer.toUnsignedLong(l.getLoadBalancingWeight().getValue()) != sum) {
                return "locality weight does not match its endpoints in " + cla.getClusterName();
            }
            total += sum;
        }
        if (total > MAX_UINT32) {
            return "weight sum " + total + " of " + cla.getClusterName() + " is above " + MAX_UINT32;
        }
        return null;
    }

    static String listener(Listener l) {
        if (l.getName().isEmpty()) return "listener has no name";
        if (!l.hasApiListener()) return "listener " + l.getName() + " has no api_listener";
        HttpConnectionManager hcm;
        try {
            hcm = l.getApiListener().getApiListener().unpack(HttpConnectionManager.class);
        } catch (InvalidProtocolBufferException e) {
            return "listener " + l.getName() + " does not hold an HttpConnectionManager";
        }
        if (hcm.getHttpFiltersCount() == 0) return "listener " + l.getName() + " has no HTTP filter";
        if (!hcm.getHttpFilters(hcm.getHttpFiltersCount() - 1).getName().equals(EnvoyTranslator.ROUTER_FILTER)) {
            return "listener " + l.getName() + ": the router filter is not last";
        }
        if (!hcm.hasRds() || hcm.getRds().getRouteConfigName().isEmpty()) {
            return "listener " + l.getName() + " names no route configuration";
        }
        return null;
    }

    static String route(RouteConfiguration rc) {
        if (rc.getName().isEmpty()) return "route configuration has no name";
        Set<String> domains = new HashSet<>();
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            if (vh.getDomainsCount() == 0) return "virtual host " + vh.getName() + " has no domain";
            for (String d : vh.getDomainsList()) {
                if (!domains.add(d)) return "domain " + d + " appears in two virtual hosts of " + rc.getName();
            }
            for (Route r : vh.getRoutesList()) {
                if (r.getRoute().getCluster().isEmpty()) return "a route of " + vh.getName() + " names no cluster";
            }
        }
        return null;
    }
}
