package dev.meshbridge.ads;

import java.util.List;
import java.util.Objects;

/**
 * A kind of resource an ADS server serves, and every type URL a client may ask for it by (istiod asks for a
 * ServiceEntry as {@code networking.istio.io/v1alpha3/ServiceEntry} up to Istio 1.23 and {@code .../v1/ServiceEntry}
 * from 1.24; both get the same resources). Immutable.
 *
 * @param name a short name for logs, metric tags and the debug page ({@code cds}, {@code ServiceEntry})
 * @param typeUrls the type URLs that name it; the first is its own
 * @param fullState true when a state-of-the-world response must carry every subscribed resource, so that a resource
 *     left out is deleted by the client (Envoy's LDS and CDS, every MCP kind); false when a response carries only what
 *     changed (EDS, RDS, SDS)
 */
public record ResourceType(String name, List<String> typeUrls, boolean fullState) {

    public ResourceType {
        Objects.requireNonNull(name, "name");
        typeUrls = List.copyOf(typeUrls);
        if (typeUrls.isEmpty()) throw new IllegalArgumentException(name + ": no type URL");
    }

    public static ResourceType of(String name, String typeUrl, boolean fullState) {
        return new ResourceType(name, List.of(typeUrl), fullState);
    }

    /** The type's own type URL. */
    public String typeUrl() {
        return typeUrls.get(0);
    }
}
