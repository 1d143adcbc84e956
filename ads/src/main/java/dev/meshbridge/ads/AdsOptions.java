package dev.meshbridge.ads;

import java.time.Duration;
import java.util.Objects;

/**
 * How one ADS server listens and serves. Immutable; the xDS and MCP servers make theirs from their own sections of
 * {@code bridge.yaml}.
 *
 * @param server the server's name in metric names, logs and its thread's name ({@code xds}, {@code mcp})
 * @param bindAddress the address to bind (an IP literal or {@code localhost})
 * @param port the port; 0 picks a free one
 * @param keepaliveTime how often the server pings an idle client connection to find dead peers (0 turns it off)
 * @param maxConnectionAge after this long a client connection is asked to reconnect (0 never)
 * @param limits what the server grants its clients (connections, streams, names, request rate, message size)
 * @param initialSyncTimeout how long first answers are held when {@link AdsServer#markReady} is not called (0 answers
 *     at once)
 * @param minPushInterval the least time between two pushes of changes to one stream (0 pushes every change at once)
 */
public record AdsOptions(
        String server,
        String bindAddress,
        int port,
        Duration keepaliveTime,
        Duration maxConnectionAge,
        AdsLimits limits,
        Duration initialSyncTimeout,
        Duration minPushInterval) {

    public AdsOptions {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(keepaliveTime, "keepaliveTime");
        Objects.requireNonNull(maxConnectionAge, "maxConnectionAge");
        Objects.requireNonNull(initialSyncTimeout, "initialSyncTimeout");
        Objects.requireNonNull(minPushInterval, "minPushInterval");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port must be 0..65535");
        if (keepaliveTime.isNegative()
                || maxConnectionAge.isNegative()
                || initialSyncTimeout.isNegative()
                || minPushInterval.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative");
        }
        Objects.requireNonNull(limits, "limits");
    }

    /** The largest request accepted, in bytes. */
    public int maxInboundMessageSize() {
        return limits.maxInboundMessageSize();
    }
}
