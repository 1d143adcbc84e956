package dev.meshbridge.xds;

import java.util.List;

/**
 * What {@link EnvoySidecarTranslator} makes: the outbound listeners and their route configurations, and notes on
 * what is not routed (shown on {@code /debug/xds}).
 *
 * @param resources the resources, sorted by type then name
 * @param notes what is left out, each with its kind
 */
public record SidecarResources(List<XdsResource> resources, List<Note> notes) {

    /**
     * Something the outbound listeners do not route.
     *
     * @param kind {@code https-not-routed}, {@code tcp-not-mapped}, {@code tcp-mapping-unavailable}, {@code
     *     ambiguous-short-name}, {@code dubbo-without-interface} or {@code dubbo-duplicate}
     * @param detail what and why
     */
    public record Note(String kind, String detail) {}

    static final SidecarResources EMPTY = new SidecarResources(List.of(), List.of());

    public SidecarResources {
        resources = List.copyOf(resources);
        notes = List.copyOf(notes);
    }

    /** The resource of this type and name, or null. */
    XdsResource find(XdsType type, String name) {
        for (XdsResource r : resources) {
            if (r.type() == type && r.name().equals(name)) return r;
        }
        return null;
    }
}
