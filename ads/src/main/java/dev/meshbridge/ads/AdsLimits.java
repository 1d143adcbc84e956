package dev.meshbridge.ads;

import dev.meshbridge.core.config.ConfigNode;
import java.time.Duration;

/**
 * What one ADS server grants its clients: the {@code limits:} section of the {@code xds:} and {@code mcp:} sections.
 * Every limit has a safe default; a client that passes one is told so with {@code RESOURCE_EXHAUSTED} naming the
 * limit (or, for connections, is refused at the socket), the server counts it in {@code meshbridge.<server>.limits}
 * with the limit's name as tag, and logs it (rate-limited).
 *
 * @param maxConnections open client connections; a connection past it is closed as soon as it is accepted
 * @param maxStreamsPerConnection concurrent ADS (and per-type xDS) streams on one connection
 * @param maxNamesPerSubscription resource names one stream may subscribe to for one type URL
 * @param maxNamesPerStream resource names one stream may subscribe to over all its types
 * @param maxSubscribedNames (stream, name) subscriptions the whole server holds
 * @param maxUnknownTypesPerStream type URLs the server does not serve one stream may ask for (answered empty)
 * @param maxRequestsPerSecond requests one stream may send per second (with a burst of as many); past it the server
 *     stops reading the stream until the rate allows (the client's writes back up; nothing is queued)
 * @param maxInboundMessageSize the largest request accepted, in bytes
 * @param idleTimeout a connection with no stream for this long is closed (0 never)
 * @param handshakeTimeout a connection that has not finished its HTTP/2 handshake by then is closed
 */
public record AdsLimits(
        int maxConnections,
        int maxStreamsPerConnection,
        int maxNamesPerSubscription,
        int maxNamesPerStream,
        int maxSubscribedNames,
        int maxUnknownTypesPerStream,
        int maxRequestsPerSecond,
        int maxInboundMessageSize,
        Duration idleTimeout,
        Duration handshakeTimeout) {

    public static final AdsLimits DEFAULTS = new AdsLimits(
            10_000,
            16,
            100_000,
            200_000,
            1_000_000,
            64,
            100,
            8 * 1024 * 1024,
            Duration.ofMinutes(5),
            Duration.ofSeconds(10));

    public AdsLimits {
        if (maxConnections < 1
                || maxStreamsPerConnection < 1
                || maxNamesPerSubscription < 1
                || maxNamesPerStream < 1
                || maxSubscribedNames < 1
                || maxUnknownTypesPerStream < 0
                || maxRequestsPerSecond < 1
                || maxInboundMessageSize < 1024) {
            throw new IllegalArgumentException("limits must be positive (maxInboundMessageSize at least 1024)");
        }
        if (idleTimeout == null || idleTimeout.isNegative()) throw new IllegalArgumentException("idleTimeout");
        if (handshakeTimeout == null || handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout must be positive");
        }
    }

    /**
     * Parses a {@code limits:} section; problems are recorded on the node (line and field) and the defaults used.
     */
    public static AdsLimits parse(ConfigNode s) {
        AdsLimits d = DEFAULTS;
        int max = Integer.MAX_VALUE;
        Duration idle = s.duration("idleTimeout", d.idleTimeout());
        if (idle.isNegative()) {
            s.problem("idleTimeout", "must not be negative");
            idle = d.idleTimeout();
        }
        Duration handshake = s.duration("handshakeTimeout", d.handshakeTimeout());
        if (handshake.isNegative() || handshake.isZero()) {
            s.problem("handshakeTimeout", "must be positive");
            handshake = d.handshakeTimeout();
        }
        return new AdsLimits(
                s.integer("maxConnections", d.maxConnections(), 1, max),
                s.integer("maxStreamsPerConnection", d.maxStreamsPerConnection(), 1, max),
                s.integer("maxNamesPerSubscription", d.maxNamesPerSubscription(), 1, max),
                s.integer("maxNamesPerStream", d.maxNamesPerStream(), 1, max),
                s.integer("maxSubscribedNames", d.maxSubscribedNames(), 1, max),
                s.integer("maxUnknownTypesPerStream", d.maxUnknownTypesPerStream(), 0, max),
                s.integer("maxRequestsPerSecond", d.maxRequestsPerSecond(), 1, max),
                s.integer("maxInboundMessageSize", d.maxInboundMessageSize(), 1024, max),
                idle,
                handshake);
    }

    public AdsLimits withMaxConnections(int n) {
        return new AdsLimits(
                n,
                maxStreamsPerConnection,
                maxNamesPerSubscription,
                maxNamesPerStream,
                maxSubscribedNames,
                maxUnknownTypesPerStream,
                maxRequestsPerSecond,
                maxInboundMessageSize,
                idleTimeout,
                handshakeTimeout);
    }

    public AdsLimits withNames(int perSubscription, int perStream, int perServer) {
        return new AdsLimits(
                maxConnections,
                maxStreamsPerConnection,
                perSubscription,
                perStream,
                perServer,
                maxUnknownTypesPerStream,
                maxRequestsPerSecond,
                maxInboundMessageSize,
                idleTimeout,
                handshakeTimeout);
    }

    public AdsLimits withMaxRequestsPerSecond(int n) {
        return new AdsLimits(
                maxConnections,
                maxStreamsPerConnection,
                maxNamesPerSubscription,
                maxNamesPerStream,
                maxSubscribedNames,
                maxUnknownTypesPerStream,
                n,
                maxInboundMessageSize,
                idleTimeout,
                handshakeTimeout);
    }

    public AdsLimits withTimeouts(Duration idle, Duration handshake) {
        return new AdsLimits(
                maxConnections,
                maxStreamsPerConnection,
                maxNamesPerSubscription,
                maxNamesPerStream,
                maxSubscribedNames,
                maxUnknownTypesPerStream,
                maxRequestsPerSecond,
                maxInboundMessageSize,
                idle,
                handshake);
    }
}
