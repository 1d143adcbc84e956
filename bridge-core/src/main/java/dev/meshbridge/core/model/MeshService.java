package dev.meshbridge.core.model;

import dev.meshbridge.core.util.CompactSortedMap;
import dev.meshbridge.core.util.CompactSortedSet;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * One service as the mesh sees it: a host name, its ports and the merged endpoints of every registry shard that maps
 * to that host. Built by the aggregator only; immutable.
 *
 * @param host DNS-1123 host name, lower case
 * @param ports service ports, sorted by number then name, names unique
 * @param endpoints all endpoints (routable or not), sorted
 * @param labels service-level labels (for example {@code dubbo.interface}), sanitized
 * @param sources the registry shards merged into this service, sorted (held as a {@link CompactSortedSet}); the
 *     first one names the service's origin
 * @param version content hash of everything above: equal content, equal version, in every bridge replica
 */
public record MeshService(
        String host,
        List<ServicePort> ports,
        List<Endpoint> endpoints,
        SortedMap<String, String> labels,
        SortedSet<ServiceKey> sources,
        String version) {

    public MeshService {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(version, "version");
        ports = List.copyOf(ports);
        endpoints = List.copyOf(endpoints);
        labels = CompactSortedMap.copyOf(labels);
        sources = CompactSortedSet.copyOf(sources);
        if (sources.isEmpty()) throw new IllegalArgumentException("service " + host + " has no source");
    }

    /** The shard this service was first found in (the lowest source): its registry names the service's origin. */
    public ServiceKey origin() {
        return sources.first();
    }

    /** The endpoints that may get traffic: enabled and weight > 0 (health not considered). */
    public List<Endpoint> routableEndpoints() {
        return endpoints.stream().filter(Endpoint::routable).toList();
    }

    public ServicePort port(String name) {
        for (ServicePort p : ports) {
            if (p.name().equals(name)) return p;
        }
        return null;
    }
}
