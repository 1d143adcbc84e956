package dev.meshbridge.xds;

import dev.meshbridge.ads.AdsClientView;
import dev.meshbridge.ads.ServerTls;
import java.util.List;
import java.util.Map;

/**
 * What {@code /debug/xds} shows: the catalog being served, resource counts, every connected client with its status
 * per type (as {@code istioctl proxy-status} does), and what was left out.
 *
 * @param catalog the snapshot being served
 * @param resources resources served, per type
 * @param clients connected streams, with their role and status per type
 * @param skipped endpoints and resources currently left out, with the reason
 * @param ingress what the Ingress routes give Envoy
 * @param sidecar what the sidecars' outbound listeners give Envoy, and what they leave out
 * @param tls the server's TLS mode, certificate (subject, serial, expiry) and refused clients; null before it is set
 */
public record XdsDebugView(
        Catalog catalog,
        Map<String, Integer> resources,
        List<AdsClientView> clients,
        List<ServiceResources.Skipped> skipped,
        Ingress ingress,
        Sidecar sidecar,
        ServerTls.View tls) {

    /** The same view with the server's TLS part. */
    public XdsDebugView withTls(ServerTls.View tls) {
        return new XdsDebugView(catalog, resources, clients, skipped, ingress, sidecar, tls);
    }

    /** The snapshot being served. */
    public record Catalog(long sequence, String version, int services, long endpoints) {}

    /**
     * The resources made for the Ingress routes.
     *
     * @param enabled whether {@code xds.ingress.enabled} is on
     * @param routesVersion the version of the snapshot's route table
     * @param servedVersion the version of the route table the served resources come from (differs when a table was
     *     not served because Envoy would refuse it; see the log)
     * @param resources type and name of each resource
     * @param unavailable destinations answering 503 and why
     */
    public record Ingress(
            boolean enabled,
            String routesVersion,
            String servedVersion,
            List<String> resources,
            List<String> unavailable) {}

    /**
     * The outbound listeners of sidecars and egress proxies.
     *
     * @param enabled whether {@code xds.sidecar.enabled} is on
     * @param resources type and name of each resource
     * @param notes what is not routed, and why (HTTPS ports, TCP ports without a mapping, ambiguous short names,
     *     Dubbo services without a known interface)
     */
    public record Sidecar(boolean enabled, List<String> resources, List<SidecarResources.Note> notes) {}

    /** The client of a node id, or null. */
    public AdsClientView client(String nodeId) {
        for (AdsClientView c : clients) {
            if (c.nodeId().equals(nodeId)) return c;
        }
        return null;
    }
}
