package dev.meshbridge.mcp;

import com.google.protobuf.Descriptors.Descriptor;
import dev.meshbridge.ads.ResourceType;
import dev.meshbridge.ads.ResourceTypes;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An Istio config kind the bridge produces, and how istiod asks for it.
 *
 * <p>istiod names an MCP collection by {@code <group>/<version>/<Kind>}: up to Istio 1.23 {@code
 * networking.istio.io/v1alpha3/ServiceEntry}, from 1.24 {@code networking.istio.io/v1/ServiceEntry}. Every served
 * version of a kind carries the same resources, whose body is always the {@code istio.networking.v1alpha3} message
 * (Istio's v1 and v1beta1 API types are the v1alpha3 protos). Add a constant here to serve another kind.
 *
 * <p>ServiceEntry and WorkloadEntry come from the catalog's services; Gateway, VirtualService and DestinationRule from
 * its Ingress routes.
 */
public enum McpKind {
    SERVICE_ENTRY("networking.istio.io", "ServiceEntry", ServiceEntry.getDescriptor()),
    WORKLOAD_ENTRY("networking.istio.io", "WorkloadEntry", WorkloadEntry.getDescriptor()),
    /** Made from the Ingress routes ({@link IngressRouteTranslator}), as are the two kinds below. */
    GATEWAY("networking.istio.io", "Gateway", Gateway.getDescriptor()),
    VIRTUAL_SERVICE("networking.istio.io", "VirtualService", VirtualService.getDescriptor()),
    DESTINATION_RULE("networking.istio.io", "DestinationRule", DestinationRule.getDescriptor());

    /** API versions istiod has used for these kinds, oldest first. */
    public static final List<String> VERSION_ORDER = Versions.ORDER;

    /** API versions istiod has used for these kinds. */
    public static final Set<String> VERSIONS = Set.copyOf(VERSION_ORDER);

    private static final McpKind[] VALUES = values();

    /** The engine's view of the kinds: every kind under each API version's type URL, all full-state. */
    public static final ResourceTypes TYPES =
            ResourceTypes.of(Arrays.stream(VALUES).map(McpKind::resourceType).toList());

    private final String group;
    private final String kind;
    private final String bodyTypeUrl;
    private final ResourceType resourceType;

    McpKind(String group, String kind, Descriptor body) {
        this.group = group;
        this.kind = kind;
        this.bodyTypeUrl = "type.googleapis.com/" + body.getFullName();
        this.resourceType = new ResourceType(
                kind,
                Versions.ORDER.stream().map(v -> group + "/" + v + "/" + kind).toList(),
                true);
    }

    /** The kind as the ADS engine knows it: one type, a type URL per API version. */
    public ResourceType resourceType() {
        return resourceType;
    }

    /** The kind of an engine type, or null. */
    static McpKind of(ResourceType type) {
        for (McpKind k : VALUES) {
            if (k.resourceType.equals(type)) return k;
        }
        return null;
    }

    public String group() {
        return group;
    }

    /** The Kubernetes kind, e.g. {@code ServiceEntry}. */
    public String kind() {
        return kind;
    }

    /** The type URL of the body {@code Any}, e.g. {@code type.googleapis.com/istio.networking.v1alpha3.ServiceEntry}. */
    public String bodyTypeUrl() {
        return bodyTypeUrl;
    }

    /** The collection type URL istiod uses for this kind at an API version. */
    public String typeUrl(String version) {
        return group + "/" + version + "/" + kind;
    }

    /**
     * The kind a requested type URL names, if the bridge produces it.
     *
     * @param typeUrl {@code <group>/<version>/<Kind>}, as istiod sends it
     */
    public static Optional<McpKind> ofTypeUrl(String typeUrl) {
        if (typeUrl == null) return Optional.empty();
        int first = typeUrl.indexOf('/');
        int last = typeUrl.lastIndexOf('/');
        if (first <= 0 || last <= first) return Optional.empty();
        String group = typeUrl.substring(0, first);
        String version = typeUrl.substring(first + 1, last);
        String kind = typeUrl.substring(last + 1);
        if (!VERSIONS.contains(version)) return Optional.empty();
        for (McpKind k : values()) {
            if (k.group.equals(group) && k.kind.equals(kind)) return Optional.of(k);
        }
        return Optional.empty();
    }

    /** Holds the versions for the constructors (an enum constant cannot read its own type's static fields). */
    private static final class Versions {
        static final List<String> ORDER = List.of("v1alpha3", "v1beta1", "v1");
    }
}
