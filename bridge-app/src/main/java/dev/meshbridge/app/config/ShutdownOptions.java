package dev.meshbridge.app.config;

import dev.meshbridge.core.config.ConfigNode;
import java.time.Duration;
import java.util.Objects;

/**
 * The {@code shutdown:} section: how a replica leaves when it is asked to stop (SIGTERM, as Kubernetes sends it).
 * First {@code /ready} answers 503 so the Service stops sending new connections here; then, after the drain period,
 * the xDS and MCP servers send GOAWAY and end their streams, so every client reconnects to another replica holding
 * what it has; then the bridge stops.
 *
 * @param drainPeriod how long {@code /ready} answers 503 while everything is still served, before the clients are sent
 *     away: time for the Service's endpoints (kube-proxy, a load balancer) to drop this replica. Default 5s; keep the
 *     pod's {@code terminationGracePeriodSeconds} longer than it plus a few seconds
 */
public record ShutdownOptions(Duration drainPeriod) {

    public static final Duration DEFAULT_DRAIN_PERIOD = Duration.ofSeconds(5);
    public static final ShutdownOptions DEFAULTS = new ShutdownOptions(DEFAULT_DRAIN_PERIOD);
    private static final Duration MAX_DRAIN_PERIOD = Duration.ofMinutes(5);

    public ShutdownOptions {
        Objects.requireNonNull(drainPeriod, "drainPeriod");
        if (drainPeriod.isNegative()) throw new IllegalArgumentException("drainPeriod must not be negative");
    }

    public static ShutdownOptions parse(ConfigNode section) {
        Duration drain = section.duration("drainPeriod", DEFAULT_DRAIN_PERIOD);
        if (drain.isNegative() || drain.compareTo(MAX_DRAIN_PERIOD) > 0) {
            section.problem("drainPeriod", "must be between 0s and 5m");
            drain = DEFAULT_DRAIN_PERIOD;
        }
        return new ShutdownOptions(drain);
    }
}
