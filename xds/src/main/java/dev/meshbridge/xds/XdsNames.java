package dev.meshbridge.xds;

/**
 * The bridge's one naming scheme for xDS resources, familiar to Istio users.
 *
 * <ul>
 *   <li>Cluster and ClusterLoadAssignment: {@code outbound|<port>||<host>}, one per service port, e.g. {@code
 *       outbound|50051||orders.dubbo} (Istio's {@code direction|port|subset|host} with no subset);
 *   <li>Listener for proxyless gRPC: {@code <host>} (the service's default gRPC port) and {@code <host>:<port>}
 *       (each HTTP-family port), so {@code xds:///orders.dubbo} and {@code xds:///orders.dubbo:50051} both resolve;
 *   <li>RouteConfiguration: {@code <host>}, one per service, with one virtual host per port.
 * </ul>
 *
 * <p>Host names are DNS-1123 and never contain {@code :} or {@code |}, so the names of different services never
 * collide.
 */
public final class XdsNames {

    private XdsNames() {}

    public static String cluster(String host, int port) {
        return "outbound|" + port + "||" + host;
    }

    /** The ClusterLoadAssignment of a cluster has the cluster's name (and is its EDS service name). */
    public static String endpoints(String host, int port) {
        return cluster(host, port);
    }

    public static String listener(String host) {
        return host;
    }

    public static String listener(String host, int port) {
        return host + ":" + port;
    }

    public static String route(String host) {
        return host;
    }

    /** The name of a virtual host in a service's route configuration. */
    public static String virtualHost(String host, int port) {
        return host + ":" + port;
    }
}
