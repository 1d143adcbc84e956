package dev.meshbridge.mcp;

import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What the Ingress routes of one snapshot became for istiod: the Gateways, VirtualServices and DestinationRules to
 * serve, and what was left out or answers 503.
 *
 * @param tableVersion the version of the route table translated
 * @param resources the resources to serve
 * @param skipped hosts whose resources istiod would refuse, with the reasons; nothing is served for them
 * @param unavailable route destinations that answer 503 ({@code <route> of <ingress>: <why>})
 * @param notes details that changed nothing served (a subset named twice with different labels)
 * @param dependencies the catalog hosts the routes name, with their {@link IngressRouteTranslator#signature}
 */
public record RouteTranslation(
        String tableVersion,
        List<McpResource> resources,
        List<Skipped> skipped,
        List<String> unavailable,
        List<String> notes,
        SortedMap<String, Long> dependencies) {

    /** Resources left out for one host (a route host, or a destination host for a DestinationRule). */
    public record Skipped(String host, String name, List<String> reasons) {
        public Skipped {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(name, "name");
            reasons = List.copyOf(reasons);
        }
    }

    public RouteTranslation {
        Objects.requireNonNull(tableVersion, "tableVersion");
        resources = List.copyOf(resources);
        skipped = List.copyOf(skipped);
        unavailable = List.copyOf(unavailable);
        notes = List.copyOf(notes);
        dependencies = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(dependencies));
    }

    static RouteTranslation empty(String tableVersion) {
        return new RouteTranslation(tableVersion, List.of(), List.of(), List.of(), List.of(), new TreeMap<>());
    }
}
