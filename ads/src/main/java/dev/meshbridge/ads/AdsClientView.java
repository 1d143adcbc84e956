package dev.meshbridge.ads;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One connected stream as the debug pages of both servers show it ({@code /debug/xds}, {@code /debug/mcp}), with its
 * sync status per subscribed type as {@code istioctl proxy-status} shows it.
 *
 * @param stream the server's id for the stream
 * @param nodeId the client's node id
 * @param cluster the client's node cluster
 * @param userAgent the client's user agent name and version
 * @param role the node role the server gave it ({@code gateway}, {@code sidecar}, {@code proxyless}, {@code istiod})
 * @param metadata the node's metadata fields that are strings (at most 20)
 * @param peer the client's address
 * @param api {@code ADS}, or the per-type service ({@code CDS}, {@code EDS}...)
 * @param protocol {@code sotw} or {@code delta}
 * @param connectedAt when the stream opened (ISO-8601)
 * @param types per subscribed type: by type name ({@code cds}, {@code ServiceEntry}), or by type URL for one the
 *     server does not serve
 */
public record AdsClientView(
        long stream,
        String nodeId,
        String cluster,
        String userAgent,
        String role,
        Map<String, String> metadata,
        String peer,
        String api,
        String protocol,
        String connectedAt,
        Map<String, TypeStatus> types) {

    /**
     * One type of one stream.
     *
     * @param typeUrl the type URL the client asked for
     * @param status {@code SYNCED} (the last response is acknowledged and nothing is pending), {@code NOT SENT}
     *     (nothing sent yet, e.g. while first answers are held), {@code STALE} (sent but not acknowledged, rejected,
     *     or changes pending)
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
            String typeUrl,
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
            List<String> sample = new ArrayList<>();
            for (int id = ts.names.nextSetBit(0); id >= 0 && sample.size() < 10; id = ts.names.nextSetBit(id + 1)) {
                sample.add(Printable.cut(ts.index.name(id), 1024));
            }
            TypeState.Nack n = ts.lastNack;
            return new TypeStatus(
                    ts.typeUrl,
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
}
