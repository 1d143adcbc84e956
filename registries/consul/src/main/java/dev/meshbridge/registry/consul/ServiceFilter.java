package dev.meshbridge.registry.consul;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Decides which Consul services and instances the bridge takes: service names by allow and deny glob patterns
 * ({@code *} any run of characters, {@code ?} one character), then services and instances by tag.
 *
 * <ol>
 *   <li>a name must match one allow pattern (when there are any) and no deny pattern;
 *   <li>with tags configured, a service must list one of them (compared without case) and so must each instance;
 *       instances without one are left out.
 * </ol>
 */
final class ServiceFilter {

    private final List<Pattern> allow;
    private final List<Pattern> deny;
    private final Set<String> tags;

    ServiceFilter(ConsulOptions options) {
        this.allow = options.allowServices().stream().map(ServiceFilter::glob).toList();
        this.deny = options.denyServices().stream().map(ServiceFilter::glob).toList();
        this.tags = options.serviceTags().stream()
                .map(t -> t.trim().toLowerCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
    }

    /** True when the service's name passes allow and deny and its (union of instance) tags pass the tag filter. */
    boolean acceptsService(String name, Collection<String> serviceTags) {
        if (!allow.isEmpty() && allow.stream().noneMatch(p -> p.matcher(name).matches())) return false;
        if (deny.stream().anyMatch(p -> p.matcher(name).matches())) return false;
        return hasTag(serviceTags);
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

    static Pattern glob(String glob) {
        StringBuilder re = new StringBuilder();
        StringBuilder literal = new StringBuilder();
        for (char c : glob.trim().toCharArray()) {
            if (c == '*' || c == '?') {
                if (!literal.isEmpty()) {
                    re.append(Pattern.quote(literal.toString()));
                    literal.setLength(0);
                }
                re.append(c == '*' ? ".*" : ".");
            } else {
                literal.append(c);
            }
        }
        if (!literal.isEmpty()) re.append(Pattern.quote(literal.toString()));
        return Pattern.compile(re.toString());
    }
}
