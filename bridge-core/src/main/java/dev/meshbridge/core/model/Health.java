package dev.meshbridge.core.model;

/** Health of one endpoint as its registry reports it, in the bridge's uniform terms. */
public enum Health {
    /** Passing health checks; gets traffic when it is also enabled and has a weight. */
    HEALTHY,
    /** Failing health checks: kept in the catalog and marked, so proxies can see it, but sent no traffic. */
    UNHEALTHY,
    /** Going away (for example Eureka's OUT_OF_SERVICE): no new traffic. */
    DRAINING;

    public boolean healthy() {
        return this == HEALTHY;
    }
}
