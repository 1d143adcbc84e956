package dev.meshbridge.xds;

/**
 * The bridge's one naming scheme for xDS resources, familiar to Istio users.
 *
 * <ul>
 *   <li>Cluster and ClusterLoadAssignment: {@code outbound|<port>||<host>}, one per service port, e.g. {@code
 *       outbound|50051||orders.dubbo} (Istio's {@code direction|port|subset|host} with no subset);
 *   <li>the proxyless gRPC form of them: {@code grpc|<port>||<host>}, one per HTTP-family port, named only by the
 *       proxyless routes (their endpoints are grouped for gRPC's locality-weighted pick, see {@link EnvoyTranslator});
 *   <li>Listener for proxyless gRPC: {@code <host>} (the service's default gRPC port) and {@code <host>:<port>}
 *       (each HTTP-family port), so {@code xds:///orders.dubbo} and {@code xds:///orders.dubbo:50051} both resolve;
 *   <li>RouteConfiguration: {@code <host>}, one per service, with one virtual host per port.
 * </ul>
 *
 * <p>For the Ingress routes:
 *
 * <ul>
 *   <li>Listener: {@code <bind address>_<port>}, e.g. {@code 0.0.0.0_8080} (Istio's gateway listener names);
 *   <li>RouteConfiguration: {@code meshbridge_ingress}, shared by the HTTP and HTTPS listeners;
 *   <li>Cluster: a registry service's own cluster; {@code outbound|<port>|<subset>|<host>} for a label subset of it;
 *       {@code outbound|<port>||<name>.<namespace>.svc.<domain>} for a Kubernetes Service; {@code
 *       meshbridge_unavailable} (no endpoint) for the share of a weighted route whose destination is missing;
 *   <li>Secret: {@code kubernetes://<namespace>/<name>}, the TLS Secret an Ingress names.
 * </ul>
 *
 * <p>Host names are DNS-1123 and never contain {@code :}, {@code |} or {@code _}, so the names of different services
 * never collide with each other or with the Ingress names.
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

    /** The proxyless gRPC cluster of a port, and its ClusterLoadAssignment (its EDS service name). */
    public static String grpcCluster(String host, int port) {
        return "grpc|" + port + "||" + host;
    }

    /** The sidecar cluster of the port of a proxyless gRPC cluster ({@link #grpcCluster}); null for another name. */
    static String sidecarOfGrpcCluster(String name) {
        return name.startsWith("grpc|") ? "outbound|" + name.substring("grpc|".length()) : null;
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

    /** The Ingress routes' RouteConfiguration. */
    public static final String INGRESS_ROUTE = "meshbridge_ingress";

    /** A cluster without endpoints: the share of a weighted Ingress route whose destination is missing. */
    public static final String UNAVAILABLE_CLUSTER = "meshbridge_unavailable";

    public static String subsetCluster(String host, int port, String subset) {
        return "outbound|" + port + "|" + subset + "|" + host;
    }

    public static String ingressListener(String bindAddress, int port) {
        return bindAddress + "_" + port;
    }

    public static String secret(String namespace, String name) {
        return "kubernetes://" + namespace + "/" + name;
    }

    /** The name of a virtual host in a service's route configuration. */
    public static String virtualHost(String host, int port) {
        return host + ":" + port;
    }
}
