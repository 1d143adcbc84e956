package dev.meshbridge.app.admin;

import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code /debug/catalog}: the catalog as the servers see it. Filters: {@code registry} (services with a shard from that
 * registry), {@code service} (host or registry-native name contains the text), {@code host} (exact host).
 */
public final class CatalogDebug implements DebugSource {

    /** The page. */
    public record Page(String version, long sequence, int services, long endpoints, int shown, List<Service> items) {}

    /** One service. */
    public record Service(
            String host,
            String version,
            List<ServicePort> ports,
            List<ServiceKey> sources,
            Map<String, String> labels,
            int routable,
            List<EndpointView> endpoints) {}

    /** One endpoint, with its traffic state spelled out. */
    public record EndpointView(
            String address,
            Map<String, Integer> ports,
            int weight,
            boolean enabled,
            String health,
            boolean routable,
            String locality,
            Map<String, String> labels) {}

    private final ServiceAggregator aggregator;

    public CatalogDebug(ServiceAggregator aggregator) {
        this.aggregator = aggregator;
    }

    @Override
    public String name() {
        return "catalog";
    }

    @Override
    public String description() {
        return "the normalized catalog; filters ?registry=NAME, ?service=TEXT, ?host=HOST";
    }

    @Override
    public Object debug(Map<String, String> query) {
        MeshSnapshot snap = aggregator.current();
        String registry = query.get("registry");
        String service = query.getOrDefault("service", "").toLowerCase(Locale.ROOT);
        String host = query.get("host");
        List<Service> items = new ArrayList<>();
        Iterable<MeshService> candidates = host != null
                ? (snap.service(host) == null ? List.of() : List.of(snap.service(host)))
                : snap.services().values();
        for (MeshService s : candidates) {
            if (registry != null
                    && s.sources().stream().noneMatch(k -> k.registry().equals(registry))) continue;
            if (!service.isEmpty()
                    && !s.host().contains(service)
                    && s.sources().stream()
                            .noneMatch(k -> k.name().toLowerCase(Locale.ROOT).contains(service))) continue;
            items.add(view(s));
        }
        return new Page(
                snap.version(), snap.sequence(), snap.serviceCount(), snap.endpointCount(), items.size(), items);
    }

    private static Service view(MeshService s) {
        List<EndpointView> eps = new ArrayList<>();
        for (Endpoint e : s.endpoints()) {
            eps.add(new EndpointView(
                    e.address(),
                    e.ports(),
                    e.weight(),
                    e.enabled(),
                    e.health().name(),
                    e.routable(),
                    e.locality().isEmpty() ? "" : e.locality().toString(),
                    e.labels()));
        }
        return new Service(
                s.host(),
                s.version(),
                s.ports(),
                List.copyOf(s.sources()),
                s.labels(),
                s.routableEndpoints().size(),
                eps);
    }
}
