package dev.meshbridge.mcp;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The MCP server's meters, all named {@code meshbridge.mcp.*}:
 *
 * <ul>
 *   <li>{@code meshbridge.mcp.clients}: connected istiod streams;
 *   <li>{@code meshbridge.mcp.resources{kind}}: resources served;
 *   <li>{@code meshbridge.mcp.services.skipped}: catalog services not served because istiod would refuse them;
 *   <li>{@code meshbridge.mcp.skipped}: count of such refusals (each time a service is found invalid);
 *   <li>{@code meshbridge.mcp.endpoints.dropped}: instances of served services left out (no IP address, ...);
 *   <li>{@code meshbridge.mcp.routes.skipped}: Ingress hosts whose Gateway and VirtualService are not served;
 *   <li>{@code meshbridge.mcp.routes.unavailable}: route destinations that answer 503 on Istio gateways;
 *   <li>{@code meshbridge.mcp.pushes{kind,protocol}}, {@code meshbridge.mcp.push.size{protocol}} (bytes);
 *   <li>{@code meshbridge.mcp.acks{kind}}, {@code meshbridge.mcp.nacks{kind}};
 *   <li>{@code meshbridge.mcp.apply}: time to apply one catalog snapshot.
 * </ul>
 *
 * <p>{@code kind} is {@code ServiceEntry}, {@code WorkloadEntry}, {@code Gateway}, {@code VirtualService}, {@code
 * DestinationRule} or {@code other}; {@code protocol} is {@code sotw}
 * or {@code delta}.
 */
final class McpMetrics {

    private final MeterRegistry registry;
    final AtomicInteger clients = new AtomicInteger();
    final AtomicInteger skippedServices = new AtomicInteger();
    final AtomicLong droppedEndpoints = new AtomicLong();
    final AtomicInteger routesSkipped = new AtomicInteger();
    final AtomicInteger routesUnavailable = new AtomicInteger();
    private final Map<McpKind, AtomicLong> resources = new EnumMap<>(McpKind.class);
    private final Counter skipped;
    private final Timer apply;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, DistributionSummary> sizes = new ConcurrentHashMap<>();

    McpMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("meshbridge.mcp.clients", clients, AtomicInteger::get)
                .description("istiod streams connected to the MCP server")
                .register(registry);
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
        for (McpKind kind : McpKind.values()) {
            AtomicLong count = new AtomicLong();
            resources.put(kind, count);
            Gauge.builder("meshbridge.mcp.resources", count, AtomicLong::get)
                    .tag("kind", kind.kind())
                    .description("resources served to istiod")
                    .register(registry);
        }
        skipped = Counter.builder("meshbridge.mcp.skipped")
                .description("times a catalog service was found invalid for istiod and not served")
                .register(registry);
        apply = Timer.builder("meshbridge.mcp.apply")
                .description("time to translate and apply one catalog snapshot")
                .register(registry);
    }

    void resources(McpKind kind, long count) {
        resources.get(kind).set(count);
    }

    void skipped() {
        skipped.increment();
    }

    Timer apply() {
        return apply;
    }

    void pushed(McpKind kind, String protocol, int bytes) {
        counter("meshbridge.mcp.pushes", "responses sent to istiod", kind, protocol)
                .increment();
        sizes.computeIfAbsent(
                        protocol,
                        p -> DistributionSummary.builder("meshbridge.mcp.push.size")
                                .baseUnit("bytes")
                                .description("size of one response sent to istiod")
                                .tag("protocol", p)
                                .register(registry))
                .record(bytes);
    }

    void ack(McpKind kind) {
        counter("meshbridge.mcp.acks", "responses istiod accepted", kind, null).increment();
    }

    void nack(McpKind kind) {
        counter("meshbridge.mcp.nacks", "responses istiod rejected", kind, null).increment();
    }

    private Counter counter(String name, String description, McpKind kind, String protocol) {
        String kindTag = kind == null ? "other" : kind.kind();
        String key = name + "|" + kindTag + "|" + protocol;
        return counters.computeIfAbsent(key, k -> {
            Counter.Builder b = Counter.builder(name).description(description).tag("kind", kindTag);
            if (protocol != null) b.tag("protocol", protocol);
            return b.register(registry);
        });
    }
}
