package dev.meshbridge.xds;

import dev.meshbridge.ads.ResourceType;
import dev.meshbridge.ads.ResourceTypes;
import java.util.Locale;

/**
 * The xDS resource types the bridge serves, in the order a client receives them when several change at once (clusters
 * before their endpoints, listeners before their routes; secrets, which listeners name, last: Envoy asks for a
 * secret when a listener names it and warms the listener until it arrives).
 */
public enum XdsType {
    CLUSTER("cds", "type.googleapis.com/envoy.config.cluster.v3.Cluster", true),
    ENDPOINT("eds", "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment", false),
    LISTENER("lds", "type.googleapis.com/envoy.config.listener.v3.Listener", true),
    ROUTE("rds", "type.googleapis.com/envoy.config.route.v3.RouteConfiguration", false),
    /** The Dubbo route configurations of the sidecar's {@code dubbo_proxy} listener (its "DRDS", over ADS). */
    DUBBO_ROUTE(
            "drds",
            "type.googleapis.com/envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration",
            false),
    SECRET("sds", "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret", false);

    private static final XdsType[] VALUES = values();

    /**
     * The engine's view of these types: additions in the order above; removals after them, listeners first, then
     * routes, clusters, their endpoints and last the secrets, so nothing the client holds names a removed resource.
     */
    public static final ResourceTypes TYPES = ResourceTypes.of(
            java.util.Arrays.stream(VALUES).map(XdsType::resourceType).toList(),
            java.util.stream.Stream.of(LISTENER, ROUTE, DUBBO_ROUTE, CLUSTER, ENDPOINT, SECRET)
                    .map(XdsType::resourceType)
                    .toList());

    private final String shortName;
    private final String typeUrl;
    private final boolean fullState;
    private final ResourceType resourceType;

    XdsType(String shortName, String typeUrl, boolean fullState) {
        this.shortName = shortName;
        this.typeUrl = typeUrl;
        this.fullState = fullState;
        this.resourceType = ResourceType.of(shortName, typeUrl, fullState);
    }

    /** The type as the ADS engine knows it. */
    public ResourceType resourceType() {
        return resourceType;
    }

    /** {@code cds}, {@code eds}, {@code lds}, {@code rds}, {@code drds} or {@code sds}: used in metrics tags and the debug page. */
    public String shortName() {
        return shortName;
    }

    public String typeUrl() {
        return typeUrl;
    }

    /**
     * True for LDS and CDS: a state-of-the-world response must carry every subscribed resource, and a resource left
     * out of it is deleted by the client. EDS, RDS and SDS responses carry only what changed.
     */
    public boolean fullState() {
        return fullState;
    }

    /** The type of a v3 type URL, or null when the bridge does not serve it. */
    public static XdsType ofTypeUrl(String typeUrl) {
        for (XdsType t : VALUES) {
            if (t.typeUrl.equals(typeUrl)) return t;
        }
        return null;
    }

    public static XdsType ofShortName(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (XdsType t : VALUES) {
            if (t.shortName.equals(n)) return t;
        }
        return null;
    }

    static XdsType[] all() {
        return VALUES;
    }
}
