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
 * {@code /debug/catalog}: the catalog as the servers see it. Each service lists every registry service (shard) its
 * endpoints come from, with how many each gives, so a host where two registries or environments meet shows both.
 * Filters: {@code registry} (services with a shard from that registry), {@code service} (host or registry-native name
 * contains the text), {@code host} (exact host), {@code shared=true} (only hosts served by more than one shard).
 *
 * <p>Bounded: a page shows at most {@code limit} services (default {@value #DEFAULT_LIMIT}, at most {@value
 * #MAX_LIMIT}) from {@code offset}, and at most {@code endpoints} endpoints of each (default {@value
 * #DEFAULT_ENDPOINTS}, at most {@value #MAX_ENDPOINTS}); {@code matched} says how many services the filters match and
 * {@code nextOffset} where the next page starts (-1 on the last page). A page also ends once it shows {@value
 * #MAX_PAGE_ENDPOINTS} endpoints.
 */
public final class CatalogDebug implements DebugSource {

    public static final int DEFAULT_LIMIT = 100;
    public static final int MAX_LIMIT = 1_000;
    public static final int DEFAULT_ENDPOINTS = 100;
    public static final int MAX_ENDPOINTS = 1_000;
    /** A page ends after the service that brings it to this many endpoints, whatever the limit. */
    public static final int MAX_PAGE_ENDPOINTS = 10_000;

    /** The page. */
    public record Page(
            String version,
            long sequence,
            int services,
            long endpoints,
            int sharedHosts,
            int matched,
            int offset,
            int nextOffset,
            int shown,
            Map<String, List<ServiceKey>> conflicts,
            List<Service> items) {}

    /** One service. */
    public record Service(
            String host,
            String version,
            List<ServicePort> ports,
            List<ServiceKey> sources,
            List<Shard> shards,
            Map<String, String> labels,
            int routable,
            int endpointCount,
            List<EndpointView> endpoints) {}

    /** One registry service a host's endpoints come from: which registry, its identity there, how many endpoints. */
    public record Shard(String registry, String type, ServiceKey source, int endpoints) {}

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
        boolean sharedOnly = "true".equalsIgnoreCase(query.get("shared"));
        int offset = number(query, "offset", 0, Integer.MAX_VALUE, 0);
        int limit = number(query, "limit", 1, MAX_LIMIT, DEFAULT_LIMIT);
        int endpointLimit = number(query, "endpoints", 0, MAX_ENDPOINTS, DEFAULT_ENDPOINTS);
        int matched = 0;
        int pageEndpoints = 0;
        Map<String, List<ServiceAggregator.SourceShard>> shared = aggregator.sharedHosts();
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
            if (sharedOnly && s.sources().size() < 2) continue;
            int index = matched++;
            if (index < offset || items.size() >= limit || pageEndpoints >= MAX_PAGE_ENDPOINTS) continue;
            items.add(view(s, shared.get(s.host()), endpointLimit));
            pageEndpoints += Math.min(s.endpoints().size(), endpointLimit);
        }
        int next = offset + items.size() < matched ? offset + items.size() : -1;
        return new Page(
                snap.version(),
                snap.sequence(),
                snap.serviceCount(),
                snap.endpointCount(),
                shared.size(),
                matched,
                offset,
                next,
                items.size(),
                conflicts(),
                items);
    }

    /** Hosts that distinct services map to, with the services refused (at most 100 hosts, sorted). */
    private Map<String, List<ServiceKey>> conflicts() {
        Map<String, List<ServiceKey>> out = new java.util.TreeMap<>();
        for (Map.Entry<String, List<ServiceKey>> e : new java.util.TreeMap<>(aggregator.hostConflicts()).entrySet()) {
            if (out.size() >= 100) break;
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    private static int number(Map<String, String> query, String key, int min, int max, int otherwise) {
        String v = query.get(key);
        if (v == null || v.isEmpty()) return otherwise;
        try {
            return Math.max(min, Math.min(max, Integer.parseInt(v.trim())));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a number, got '" + v.replaceAll("[^\\w.-]", "?") + "'");
        }
    }

    private static Service view(MeshService s, List<ServiceAggregator.SourceShard> shared, int endpointLimit) {
        List<Shard> shards = new ArrayList<>();
        if (shared != null && s.sources().size() > 1) {
            for (ServiceAggregator.SourceShard sh : shared) {
                shards.add(new Shard(sh.source().registry(), sh.source().registryType(), sh.source(), sh.endpoints()));
            }
        } else {
            for (ServiceKey k : s.sources()) {
                shards.add(new Shard(
                        k.registry(),
                        k.registryType(),
                        k,
                        s.sources().size() == 1 ? s.endpoints().size() : -1));
            }
        }
        List<EndpointView> eps = new ArrayList<>();
        for (Endpoint e : s.endpoints()) {
            if (eps.size() >= endpointLimit) break;
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
                shards,
                s.labels(),
                s.routableEndpoints().size(),
                s.endpoints().size(),
                eps);
    }
}
