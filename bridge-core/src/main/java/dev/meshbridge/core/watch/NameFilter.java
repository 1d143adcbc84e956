package dev.meshbridge.core.watch;

import dev.meshbridge.core.config.ConfigNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Which services of a registry the bridge takes, by name: {@code serviceAllowlist} and {@code serviceDenylist}, the
 * same rule for every registry type.
 *
 * <ol>
 *   <li>a pattern is a glob over the whole name: {@code *} matches any run of characters (none included), {@code ?}
 *       exactly one, every other character itself; patterns are trimmed and may not be empty;
 *   <li>matching ignores case (Eureka upper-cases application names, and hosts are lower case anyway);
 *   <li>a name that matches a deny pattern is left out, even when allowed;
 *   <li>with allow patterns, a name must match one of them; with none, every name not denied is taken.
 * </ol>
 */
public final class NameFilter {

    /** Takes every name. */
    public static final NameFilter ALL = new NameFilter(List.of(), List.of());

    public static final String ALLOW_KEY = "serviceAllowlist";
    public static final String DENY_KEY = "serviceDenylist";

    private final List<String> allow;
    private final List<String> deny;
    private final List<Pattern> allowPatterns;
    private final List<Pattern> denyPatterns;

    private NameFilter(List<String> allow, List<String> deny) {
        this.allow = List.copyOf(allow);
        this.deny = List.copyOf(deny);
        this.allowPatterns = this.allow.stream().map(NameFilter::glob).toList();
        this.denyPatterns = this.deny.stream().map(NameFilter::glob).toList();
    }

    /**
     * A filter from glob patterns.
     *
     * @throws IllegalArgumentException when a pattern is empty
     */
    public static NameFilter of(List<String> allow, List<String> deny) {
        List<String> a = trimmed(allow);
        List<String> d = trimmed(deny);
        return a.isEmpty() && d.isEmpty() ? ALL : new NameFilter(a, d);
    }

    /**
     * Reads {@code serviceAllowlist} and {@code serviceDenylist} of one {@code registries[]} entry; an empty pattern is
     * recorded as a problem on its field and left out.
     *
     * @param defaultDeny the denylist when the entry has none (Consul leaves out its own {@code consul} service)
     */
    public static NameFilter parse(ConfigNode entry, List<String> defaultDeny) {
        List<String> allow = nonBlank(entry, ALLOW_KEY, List.of());
        List<String> deny = nonBlank(entry, DENY_KEY, defaultDeny);
        return of(allow, deny);
    }

    private static List<String> nonBlank(ConfigNode entry, String key, List<String> fallback) {
        if (!entry.has(key)) return fallback;
        List<String> out = new ArrayList<>();
        for (String p : entry.strings(key)) {
            if (p == null || p.isBlank()) entry.problem(key, "a pattern must not be empty");
            else out.add(p.trim());
        }
        return out;
    }

    private static List<String> trimmed(List<String> patterns) {
        List<String> out = new ArrayList<>(patterns.size());
        for (String p : patterns) {
            if (p == null || p.isBlank()) throw new IllegalArgumentException("empty name pattern");
            out.add(p.trim());
        }
        return out;
    }

    /** True when the bridge takes the service of this name. */
    public boolean accepts(String name) {
        if (name == null || name.isEmpty()) return false;
        for (Pattern p : denyPatterns) {
            if (p.matcher(name).matches()) return false;
        }
        if (allowPatterns.isEmpty()) return true;
        for (Pattern p : allowPatterns) {
            if (p.matcher(name).matches()) return true;
        }
        return false;
    }

    public List<String> allow() {
        return allow;
    }

    public List<String> deny() {
        return deny;
    }

    /** The regular expression of one glob (see the class comment for the rule). */
    static Pattern glob(String glob) {
        return dev.meshbridge.core.util.Glob.compile(glob, true, (char) 0);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NameFilter f && f.allow.equals(allow) && f.deny.equals(deny);
    }

    @Override
    public int hashCode() {
        return Objects.hash(allow, deny);
    }

    @Override
    public String toString() {
        return allow.isEmpty() && deny.isEmpty() ? "all" : "allow=" + allow + " deny=" + deny;
    }
}
