package dev.meshbridge.xds;

import java.util.List;
import java.util.Objects;

/**
 * What {@link EnvoyTranslator} makes of one service: its resources of every type and what it had to leave out.
 *
 * @param host the service's host
 * @param serviceVersion the {@code MeshService} version this was translated from
 * @param resources the resources, sorted by type then name
 * @param skipped endpoints or resources left out because Envoy would refuse them, each with the reason
 */
public record ServiceResources(String host, String serviceVersion, List<XdsResource> resources, List<Skipped> skipped) {

    /**
     * Something the translator left out.
     *
     * @param host the service
     * @param item what was left out (an endpoint address, a resource name)
     * @param reason a short category for the metric tag: {@code endpoint-address}, {@code duplicate-endpoint},
     *     {@code weight-overflow}, {@code invalid-resource}
     * @param detail a human explanation
     */
    public record Skipped(String host, String item, String reason, String detail) {}

    public ServiceResources {
        Objects.requireNonNull(host, "host");
        resources = List.copyOf(resources);
        skipped = List.copyOf(skipped);
    }

    /** The resources of one type. */
    public List<XdsResource> ofType(XdsType type) {
        return resources.stream().filter(r -> r.type() == type).toList();
    }
}
