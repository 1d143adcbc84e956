package dev.meshbridge.xds;

import dev.meshbridge.core.model.ServicePort;
import java.util.List;
import java.util.Objects;

/**
 * What {@link EnvoyTranslator} makes of one service: its resources of every type and what it had to leave out.
 *
 * @param host the service's host
 * @param serviceVersion the {@code MeshService} version this was translated from
 * @param ports the service's ports, which alone decide its clusters, listeners and routes
 * @param resources the resources, sorted by type then name
 * @param skipped endpoints or resources left out because Envoy would refuse them, each with the reason
 */
public record ServiceResources(
        String host,
        String serviceVersion,
        List<ServicePort> ports,
        List<XdsResource> resources,
        List<Skipped> skipped) {

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
        ports = List.copyOf(ports);
        resources = List.copyOf(resources);
        skipped = List.copyOf(skipped);
    }

    /** The same, with these resources in place of its own (the same resources, held otherwise). */
    ServiceResources withResources(List<XdsResource> held) {
        return held == resources ? this : new ServiceResources(host, serviceVersion, ports, held, skipped);
    }

    /** The resources of one type. */
    public List<XdsResource> ofType(XdsType type) {
        return resources.stream().filter(r -> r.type() == type).toList();
    }

    /** The resource of this type and name, or null. */
    public XdsResource find(XdsType type, String name) {
        for (XdsResource r : resources) {
            if (r.type() == type && r.name().equals(name)) return r;
        }
        return null;
    }
}
