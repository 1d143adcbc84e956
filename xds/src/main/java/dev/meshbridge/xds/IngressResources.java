package dev.meshbridge.xds;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What {@link EnvoyIngressTranslator} makes of one route table.
 *
 * @param routesVersion the version of the route table it was translated from
 * @param resources the resources, sorted by type then name
 * @param skipped routes left out because Envoy would refuse them
 * @param dependencies the catalog hosts the translation looked at, each with {@link
 *     EnvoyIngressTranslator#signature} of its served ports (0: absent); it must be redone when one of them changes
 * @param unavailable destinations that answer 503, in words ({@code <match> of <ns>/<name>: <why>})
 */
record IngressResources(
        String routesVersion,
        List<XdsResource> resources,
        List<ServiceResources.Skipped> skipped,
        Map<String, Long> dependencies,
        List<String> unavailable) {

    IngressResources {
        Objects.requireNonNull(routesVersion, "routesVersion");
        resources = List.copyOf(resources);
        skipped = List.copyOf(skipped);
        SortedMap<String, Long> deps = new TreeMap<>(dependencies);
        dependencies = java.util.Collections.unmodifiableSortedMap(deps);
        unavailable = List.copyOf(unavailable);
    }

    static IngressResources empty(String routesVersion) {
        return new IngressResources(routesVersion, List.of(), List.of(), Map.of(), List.of());
    }

    /** The same, with these resources in place of its own (the same resources, held otherwise). */
    IngressResources withResources(List<XdsResource> held) {
        return held == resources ? this : new IngressResources(routesVersion, held, skipped, dependencies, unavailable);
    }

    /** The resource of this type and name, or null. */
    XdsResource find(XdsType type, String name) {
        for (XdsResource r : resources) {
            if (r.type() == type && r.name().equals(name)) return r;
        }
        return null;
    }
}
