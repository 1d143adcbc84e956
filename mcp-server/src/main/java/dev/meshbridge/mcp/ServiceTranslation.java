package dev.meshbridge.mcp;

import java.util.List;
import java.util.Objects;

/**
 * What one catalog service became: its Istio resources, or why it is not served.
 *
 * @param host the catalog host
 * @param serviceVersion the catalog service's version this was made from
 * @param registry the registry the service comes from (its origin)
 * @param resources the resources to serve; empty when {@code problems} is not
 * @param problems why the service is not served at all (istiod would refuse its ServiceEntry); empty when served
 * @param notes instances or details left out of a served service, and why (for example an endpoint whose address is
 *     a host name, which a STATIC ServiceEntry cannot carry)
 */
public record ServiceTranslation(
        String host,
        String serviceVersion,
        String registry,
        List<McpResource> resources,
        List<String> problems,
        List<String> notes) {

    public ServiceTranslation {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(serviceVersion, "serviceVersion");
        Objects.requireNonNull(registry, "registry");
        resources = List.copyOf(resources);
        problems = List.copyOf(problems);
        notes = List.copyOf(notes);
        if (!problems.isEmpty() && !resources.isEmpty()) {
            throw new IllegalArgumentException("a refused service has no resources");
        }
    }

    /** True when the service is served. */
    public boolean served() {
        return problems.isEmpty();
    }

    /** The same service, refused for the given reasons. */
    public ServiceTranslation refused(List<String> reasons) {
        return new ServiceTranslation(host, serviceVersion, registry, List.of(), reasons, notes);
    }
}
