package dev.meshbridge.xds;

import java.util.List;
import java.util.Map;

/**
 * What {@code /debug/xds} shows: the catalog being served, resource counts, every connected client with its status
 * per type (as {@code istioctl proxy-status} does), and what was left out.
 *
 * @param catalog the snapshot being served
 * @param resources resources served, per type
 * @param clients connected streams
 * @param skipped endpoints and resources currently left out, with the reason
 * @param ingress what the Ingress routes give Envoy
 */
public record XdsDebugView(
        Catalog catalog,
        Map<String, Integer> resources,
        List<Client> clients,
        List<ServiceResources.Skipped> skipped,
        Ingress ingress) {

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
     * One connected stream.
     *
     * @param stream the server's id for the stream
     * @param nodeId the client's node id
     * @param cluster the client's node cluster
     * @param userAgent the client's user agent name and version
     * @param peer the client's address
     * @param api {@code ADS}, or the per-type service ({@code CDS}, {@code EDS}...)
     * @param protocol {@code sotw} or {@code delta}
     * @param connectedAt when the stream opened (ISO-8601)
     * @param types per subscribed type ({@code cds}, {@code eds}, {@code lds}, {@code rds})
     */
    public record Client(
            long stream,
            String nodeId,
            String cluster,
            String userAgent,
            String peer,
            String api,
            String protocol,
            String connectedAt,
            Map<String, TypeStatus> types) {}

    /**
     * One type of one stream.
     *
     * @param status {@code SYNCED} (the last response is acknowledged and nothing is pending), {@code NOT SENT}
     *     (nothing sent yet), {@code STALE} (sent but not acknowledged, rejected, or changes pending)
     * @param wildcard whether the client subscribed to every resource of the type
     * @param names how many resources it subscribed to by name
     * @param sampleNames up to 10 of those names
     * @param pending resources changed but not yet sent to it
     * @param lastSentVersion the version of the last response
     * @param lastSentNonce its nonce
     * @param lastSentAt when it was sent
     * @param lastAckedVersion the last version the client acknowledged
     * @param lastAckedAt when
     * @param responses responses sent on this stream
     * @param nacks NACKs received on this stream
     * @param lastNack the last NACK: rejected version, nonce, error detail, time
     */
    public record TypeStatus(
            String status,
            boolean wildcard,
            int names,
            List<String> sampleNames,
            int pending,
            String lastSentVersion,
            String lastSentNonce,
            String lastSentAt,
            String lastAckedVersion,
            String lastAckedAt,
            long responses,
            long nacks,
            Nack lastNack) {

        static TypeStatus of(TypeState ts) {
            List<String> sample = new java.util.ArrayList<>();
            for (int id = ts.names.nextSetBit(0); id >= 0 && sample.size() < 10; id = ts.names.nextSetBit(id + 1)) {
                sample.add(ts.index.name(id));
            }
            TypeState.Nack n = ts.lastNack;
            return new TypeStatus(
                    ts.status(),
                    ts.wildcard,
                    ts.names.cardinality(),
                    sample,
                    ts.pending.size(),
                    ts.lastSentVersion,
                    ts.lastSentNonce,
                    ts.lastSentAt == null ? null : ts.lastSentAt.toString(),
                    ts.lastAckedVersion,
                    ts.lastAckedAt == null ? null : ts.lastAckedAt.toString(),
                    ts.responses,
                    ts.nacks,
                    n == null ? null : new Nack(n.version(), n.nonce(), n.message(), n.at().toString()));
        }
    }

    /** A rejected response: its version and nonce, the client's error detail, and when. */
    public record Nack(String version, String nonce, String error, String at) {}

    /** The client of a node id, or null. */
    public Client client(String nodeId) {
        for (Client c : clients) {
            if (c.nodeId().equals(nodeId)) return c;
        }
        return null;
    }
}
