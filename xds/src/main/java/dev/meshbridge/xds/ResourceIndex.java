package dev.meshbridge.xds;

import dev.meshbridge.ads.AdsEngine;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every resource the server currently serves, by what produced it (a service, or the Ingress routes), kept in step
 * with the ADS engine's store: applying one service's new resources touches only that service's entries and puts or
 * removes each resource whose version changed. Owned by the serving thread.
 */
final class ResourceIndex {

    private final AdsEngine engine;
    private final int[] changes = new int[XdsType.all().length];
    private final Map<String, ServiceResources> byHost = new HashMap<>();
    private SidecarResources sidecar = SidecarResources.EMPTY;
    private IngressResources ingress =
            IngressResources.empty(dev.meshbridge.core.route.RouteTable.empty().version());

    ResourceIndex(AdsEngine engine) {
        this.engine = engine;
    }

    AdsEngine engine() {
        return engine;
    }

    /** Changes put into the store per type since the last call; resets the counts. */
    int[] takeChanges() {
        int[] out = changes.clone();
        Arrays.fill(changes, 0);
        return out;
    }

    /** The served resource of a type and name, or null. */
    XdsResource get(XdsType type, String name) {
        return (XdsResource) engine.get(type.resourceType(), name);
    }

    int size(XdsType type) {
        return engine.size(type.resourceType());
    }

    ServiceResources service(String host) {
        return byHost.get(host);
    }

    Map<String, ServiceResources> services() {
        return byHost;
    }

    /**
     * Replaces what one service serves.
     *
     * @param host the service
     * @param next its new resources, or null when the service is gone
     */
    void apply(String host, ServiceResources next) {
        ServiceResources old = next == null ? byHost.remove(host) : byHost.put(host, next);
        diff(
                old == null ? List.of() : old.resources(),
                next == null ? List.of() : next.resources(),
                AdsEngine.ALL_ROLES);
    }

    /** What the Ingress routes give: served next to the services' resources, under names no service makes. */
    IngressResources ingress() {
        return ingress;
    }

    /** Replaces the resources of the Ingress routes; their listeners go to gateways only. */
    void applyIngress(IngressResources next) {
        IngressResources old = ingress;
        ingress = next;
        diff(old.resources(), next.resources(), 1 << NodeRoles.GATEWAY);
    }

    /** What the sidecars' outbound listeners give: served under names no service or Ingress route makes. */
    SidecarResources sidecar() {
        return sidecar;
    }

    /** Replaces the outbound listeners and their routes; the listeners go to sidecars only. */
    void applySidecar(SidecarResources next) {
        SidecarResources old = sidecar;
        sidecar = next;
        diff(old.resources(), next.resources(), 1 << NodeRoles.SIDECAR);
    }

    /**
     * Applies the change from {@code before} to {@code after} (both sorted by type, then name). A resource is removed
     * only while the served one is the same (same version): a name the Ingress routes gave up to a service (a
     * Kubernetes Service host that is also in the catalog) is not taken from the service.
     */
    /** @param listenerRoles the roles whose wildcard listener subscriptions include the listeners among {@code after} */
    private void diff(List<XdsResource> before, List<XdsResource> after, int listenerRoles) {
        int i = 0;
        int j = 0;
        // both lists are sorted by type, then name
        while (i < before.size() || j < after.size()) {
            XdsResource b = i < before.size() ? before.get(i) : null;
            XdsResource a = j < after.size() ? after.get(j) : null;
            int c = b == null ? 1 : a == null ? -1 : compare(b, a);
            if (c < 0) {
                if (engine.removeIfVersion(b.type().resourceType(), b.name(), b.versionHash())) {
                    changes[b.type().ordinal()]++;
                }
                i++;
            } else {
                int roles = a.type() == XdsType.LISTENER ? listenerRoles : AdsEngine.ALL_ROLES;
                if (engine.put(a.type().resourceType(), a, roles))
                    changes[a.type().ordinal()]++;
                if (c == 0) i++;
                j++;
            }
        }
    }

    private static int compare(XdsResource x, XdsResource y) {
        if (x.type() != y.type()) return x.type().compareTo(y.type());
        return x.name().compareTo(y.name());
    }
}
