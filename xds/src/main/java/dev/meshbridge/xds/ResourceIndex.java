package dev.meshbridge.xds;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every resource the server currently serves, by type and by what produced it (a service, or the Ingress routes).
 * Applying one service's new resources touches only that service's entries and reports each resource whose version
 * changed. Owned by the server's thread.
 */
final class ResourceIndex {

    /** Receives each resource that changed: its type, id, the version it had, and whether wildcards include it. */
    @FunctionalInterface
    interface ChangeSink {
        void changed(TypeIndex index, int id, long oldVersion, boolean wildcard);
    }

    private final TypeIndex[] types = new TypeIndex[XdsType.all().length];
    private final Map<String, ServiceResources> byHost = new HashMap<>();
    private IngressResources ingress =
            IngressResources.empty(dev.meshbridge.core.route.RouteTable.empty().version());

    ResourceIndex() {
        for (XdsType t : XdsType.all()) types[t.ordinal()] = new TypeIndex(t);
    }

    TypeIndex type(XdsType type) {
        return types[type.ordinal()];
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
     * @param sink told about every resource whose version changed
     */
    void apply(String host, ServiceResources next, ChangeSink sink) {
        ServiceResources old = next == null ? byHost.remove(host) : byHost.put(host, next);
        diff(old == null ? List.of() : old.resources(), next == null ? List.of() : next.resources(), sink);
    }

    /** What the Ingress routes give: served next to the services' resources, under names no service makes. */
    IngressResources ingress() {
        return ingress;
    }

    /** Replaces the resources of the Ingress routes. */
    void applyIngress(IngressResources next, ChangeSink sink) {
        IngressResources old = ingress;
        ingress = next;
        diff(old.resources(), next.resources(), sink);
    }

    /**
     * Applies the change from {@code before} to {@code after} (both sorted by type, then name). A resource is removed
     * only while the indexed one is the same (same version): a name the Ingress routes gave up to a service (a
     * Kubernetes Service host that is also in the catalog) is not taken from the service.
     */
    private void diff(List<XdsResource> before, List<XdsResource> after, ChangeSink sink) {
        int i = 0;
        int j = 0;
        // both lists are sorted by type, then name
        while (i < before.size() || j < after.size()) {
            XdsResource b = i < before.size() ? before.get(i) : null;
            XdsResource a = j < after.size() ? after.get(j) : null;
            int c = b == null ? 1 : a == null ? -1 : compare(b, a);
            if (c < 0) {
                TypeIndex t = type(b.type());
                int id = t.find(b.name());
                if (t.version(id) == b.versionHash()) {
                    long oldVersion = t.remove(id);
                    sink.changed(t, id, oldVersion, b.wildcard());
                }
                i++;
            } else {
                TypeIndex t = type(a.type());
                int id = t.id(a.name());
                long current = t.version(id);
                if (current != a.versionHash()) {
                    long oldVersion = t.put(id, a);
                    sink.changed(t, id, oldVersion, a.wildcard());
                }
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
