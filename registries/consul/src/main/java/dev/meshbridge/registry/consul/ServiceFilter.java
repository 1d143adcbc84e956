package dev.meshbridge.registry.consul;

import dev.meshbridge.core.watch.NameFilter;
import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Decides which Consul services and instances the bridge takes: service names by the allow and deny globs every
 * registry shares ({@link NameFilter}), then services and instances by tag.
 *
 * <ol>
 *   <li>a name must pass the {@link NameFilter};
 *   <li>with tags configured, a service must list one of them (compared without case) and so must each instance;
 *       instances without one are left out.
 * </ol>
 */
final class ServiceFilter {

    private final NameFilter names;
    private final Set<String> tags;

    ServiceFilter(ConsulOptions options) {
        this.names = NameFilter.of(options.allowServices(), options.denyServices());
        this.tags = options.serviceTags().stream()
                .map(t -> t.trim().toLowerCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
    }

    /** True when the service's name passes allow and deny and its (union of instance) tags pass the tag filter. */
    boolean acceptsService(String name, Collection<String> serviceTags) {
        return names.accepts(name) && hasTag(serviceTags);
    }

    /** True when the instance carries one of the configured tags (or none are configured). */
    boolean acceptsInstance(Collection<String> instanceTags) {
        return hasTag(instanceTags);
    }

    private boolean hasTag(Collection<String> given) {
        if (tags.isEmpty()) return true;
        if (given == null) return false;
        for (String t : given) {
            if (t != null && tags.contains(t.trim().toLowerCase(Locale.ROOT))) return true;
        }
        return false;
    }
}
