package dev.meshbridge.xds;

import dev.meshbridge.ads.AdsEngine;
import dev.meshbridge.ads.PackedBytes;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every resource the server currently serves, by what produced it (a service, or the Ingress routes), kept in step
 * with the ADS engine's store: applying one service's new resources touches only that service's entries and puts or
 * removes each resource whose version changed. What it keeps, and the store serves, is held {@linkplain
 * XdsResource#packed packed}: a resource whose version is already served is the served one, any other is packed here.
 * Owned by the serving thread (so is its packer).
 */
final class ResourceIndex {

    private final AdsEngine engine;
    private final PackedBytes packer = new PackedBytes(XdsPacking.DICTIONARY);
    private final int[] changes = new int[XdsType.all().length];
    /**
     * The engine's {@linkplain AdsEngine#slot slot} of each resource {@link #held} looked up, by its place in the list
     * held (plus one; 0: not looked up), for {@link #diff} to put it there without looking its name up again.
     */
    private int[] slots = new int[64];

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
        if (next != null) next = next.withResources(held(next.resources()));
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
        next = next.withResources(held(next.resources()));
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
        next = new SidecarResources(held(next.resources()), next.notes());
        SidecarResources old = sidecar;
        sidecar = next;
        diff(old.resources(), next.resources(), 1 << NodeRoles.SIDECAR);
    }

    /**
     * The resources as held: each the served one when its version is served, else packed, and a proxyless load
     * assignment whose endpoints are the sidecar one's bytes a reference to that one (the list itself when none
     * changed).
     */
    private List<XdsResource> held(List<XdsResource> resources) {
        if (slots.length < resources.size()) slots = new int[Math.max(resources.size(), 2 * slots.length)];
        Arrays.fill(slots, 0, resources.size(), 0);
        XdsResource[] out = null;
        boolean proxyless = false;
        for (int i = 0; i < resources.size(); i++) {
            XdsResource r = resources.get(i);
            if (r.type() == XdsType.ENDPOINT && XdsNames.sidecarOfGrpcCluster(r.name()) != null) {
                proxyless = true; // once the sidecar one is held
                continue;
            }
            XdsResource h = held(r, i);
            if (h == r) continue;
            if (out == null) out = resources.toArray(new XdsResource[0]);
            out[i] = h;
        }
        if (!proxyless) return out == null ? resources : Arrays.asList(out);
        if (out == null) out = resources.toArray(new XdsResource[0]);
        for (int i = 0; i < out.length; i++) {
            XdsResource r = resources.get(i);
            String sidecar = r.type() == XdsType.ENDPOINT ? XdsNames.sidecarOfGrpcCluster(r.name()) : null;
            if (sidecar == null) continue;
            XdsResource h = r.isPacked() ? r : servedAs(r, i);
            // both sorted by type, then name: the sidecar one (outbound|...) comes after the proxyless one (grpc|...)
            for (int j = i + 1; h == null && j < out.length && resources.get(j).type() == XdsType.ENDPOINT; j++) {
                if (resources.get(j).name().equals(sidecar)) h = r.sharing(resources.get(j), out[j]);
            }
            out[i] = h != null ? h : held(r, i);
        }
        return Arrays.asList(out);
    }

    /** A resource as held, at place {@code i} of its list. */
    private XdsResource held(XdsResource r, int i) {
        if (r.isPacked()) return r;
        XdsResource served = servedAs(r, i);
        return served != null ? served : r.packed(packer);
    }

    /**
     * The served resource when it has this one's version, else null: the same version is the same bytes (the engine
     * keeps the served one anyway), so they are packed once and held once. Keeps the slot of its name for {@link
     * #diff}, the resource at place {@code i} of the list held.
     */
    private XdsResource servedAs(XdsResource r, int i) {
        int slot = engine.slot(r.type().resourceType(), r.name());
        slots[i] = slot + 1;
        XdsResource served = (XdsResource) engine.get(r.type().resourceType(), slot);
        return served != null && served.versionHash() == r.versionHash() && served.wildcard() == r.wildcard()
                ? served
                : null;
    }

    /**
     * Applies the change from {@code before} to {@code after} (both sorted by type, then name). A resource is removed
     * only while the served one is the same (same version): a name the Ingress routes gave up to a service (a
     * Kubernetes Service host that is also in the catalog) is not taken from the service.
     *
     * <p>A resource that is the very instance it was before (a translation reuses what did not change, see {@link
     * EnvoyTranslator#translate(dev.meshbridge.core.model.MeshService, ServiceResources, java.util.Set)}; {@link #held}
     * gives the served one for an unchanged version) is not put again: the engine serves it already with the same
     * version and roles (the same producer gives the same roles), and a put would only have looked its name up in the
     * type's table, one of 100,000s, to find nothing to do. No other producer serves a name a producer holds: the
     * Ingress routes make a Kubernetes Service's cluster only while no catalog service has that host, and translate
     * again in the same snapshot in which one appears.
     *
     * @param listenerRoles the roles whose wildcard listener subscriptions include the listeners among {@code after}
     */
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
            } else if (c == 0 && a == b) {
                i++;
                j++;
            } else {
                int roles = a.type() == XdsType.LISTENER ? listenerRoles : AdsEngine.ALL_ROLES;
                int slot = slots[j] - 1;
                if (slot >= 0
                        ? engine.put(a.type().resourceType(), slot, a, roles)
                        : engine.put(a.type().resourceType(), a, roles))
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
