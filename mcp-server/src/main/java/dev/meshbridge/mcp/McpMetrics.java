package dev.meshbridge.mcp;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The MCP producer's own meters; the protocol's ({@code meshbridge.mcp.pushes}, {@code push.bytes}, {@code push.size}
 * (bytes per push to istiod; its {@code _count} rate is pushes per second), {@code pushes.paced}, {@code acks},
 * {@code nacks}, {@code clients}, {@code streams}, {@code resources}, {@code holding}) are the ADS engine's, in the
 * vocabulary both servers share, with the kind in the {@code type} tag:
 *
 * <ul>
 *   <li>{@code meshbridge.mcp.services.skipped}: catalog services not served because istiod would refuse them;
 *   <li>{@code meshbridge.mcp.skipped}: count of such refusals (each time a service is found invalid);
 *   <li>{@code meshbridge.mcp.endpoints.dropped}: instances of served services left out (no IP address, ...);
 *   <li>{@code meshbridge.mcp.routes.skipped}: Ingress hosts whose Gateway and VirtualService are not served;
 *   <li>{@code meshbridge.mcp.routes.unavailable}: route destinations that answer 503 on Istio gateways;
 *   <li>{@code meshbridge.mcp.apply}: time to apply one catalog snapshot.
 * </ul>
 *
 */
final class McpMetrics {

    private final MeterRegistry registry;
    final AtomicInteger skippedServices = new AtomicInteger();
    final AtomicLong droppedEndpoints = new AtomicLong();
    final AtomicInteger routesSkipped = new AtomicInteger();
    final AtomicInteger routesUnavailable = new AtomicInteger();
    private final Counter skipped;
    private final Timer apply;
    final Counter pacedSnapshots;

    McpMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("meshbridge.mcp.services.skipped", skippedServices, AtomicInteger::get)
                .description("catalog services not served because istiod would refuse their ServiceEntry")
                .register(registry);
        Gauge.builder("meshbridge.mcp.endpoints.dropped", droppedEndpoints, AtomicLong::get)
                .description("instances of served services that could not be sent (no IP address, unknown port)")
                .register(registry);
        Gauge.builder("meshbridge.mcp.routes.skipped", routesSkipped, AtomicInteger::get)
                .description("Ingress hosts whose Gateway and VirtualService istiod would refuse, not served")
                .register(registry);
        Gauge.builder("meshbridge.mcp.routes.unavailable", routesUnavailable, AtomicInteger::get)
                .description("route destinations served to istiod as 503 (not in the catalog, not served, no port)")
                .register(registry);
        skipped = Counter.builder("meshbridge.mcp.skipped")
                .description("times a catalog service was found invalid for istiod and not served")
                .register(registry);
        pacedSnapshots = Counter.builder("meshbridge.mcp.snapshots.paced")
                .description("catalog snapshots whose application waited for minPushInterval since the last one, to be"
                        + " applied together with the ones after them")
                .register(registry);
        apply = Timer.builder("meshbridge.mcp.apply")
                .description("time to translate and apply one catalog snapshot")
                .register(registry);
    }

    void skipped() {
        skipped.increment();
    }

    Timer apply() {
        return apply;
    }
}
