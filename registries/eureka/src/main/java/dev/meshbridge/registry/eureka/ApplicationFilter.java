package dev.meshbridge.registry.eureka;

import dev.meshbridge.core.config.ConfigNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Which Eureka applications become services: an allowlist and a denylist of glob patterns ({@code *} any characters,
 * {@code ?} one character), matched without regard to case because Eureka upper-cases application names.
 *
 * <p>Rules, in order:
 *
 * <ol>
 *   <li>an application matching any exclude pattern is left out;
 *   <li>with no include pattern, every other application is taken;
 *   <li>otherwise an application is taken when it matches some include pattern.
 * </ol>
 */
public final class ApplicationFilter {

    /** Takes every application. */
    public static final ApplicationFilter ALL = new ApplicationFilter(List.of(), List.of());

    private final List<String> include;
    private final List<String> exclude;
    private final List<Pattern> includePatterns;
    private final List<Pattern> excludePatterns;

    private ApplicationFilter(List<String> include, List<String> exclude) {
        this.include = List.copyOf(include);
        this.exclude = List.copyOf(exclude);
        this.includePatterns = include.stream().map(ApplicationFilter::compile).toList();
        this.excludePatterns = exclude.stream().map(ApplicationFilter::compile).toList();
    }

    /**
     * A filter from glob patterns.
     *
     * @throws IllegalArgumentException when a pattern is empty
     */
    public static ApplicationFilter of(List<String> include, List<String> exclude) {
        for (String p : include) requireNonBlank(p);
        for (String p : exclude) requireNonBlank(p);
        return include.isEmpty() && exclude.isEmpty() ? ALL : new ApplicationFilter(include, exclude);
    }

    static ApplicationFilter parse(ConfigNode entry, String includeKey, String excludeKey) {
        return of(nonBlank(entry, includeKey), nonBlank(entry, excludeKey));
    }

    private static List<String> nonBlank(ConfigNode entry, String key) {
        List<String> out = new ArrayList<>();
        for (String p : entry.strings(key)) {
            if (p.isBlank()) {
                entry.problem(key, "a pattern must not be empty");
            } else {
                out.add(p.trim());
            }
        }
        return out;
    }

    private static void requireNonBlank(String pattern) {
        if (pattern == null || pattern.isBlank()) throw new IllegalArgumentException("empty application pattern");
    }

    /** True when the application (by its Eureka name) becomes a service. */
    public boolean accepts(String application) {
        String name = application.toUpperCase(Locale.ROOT);
        for (Pattern p : excludePatterns) {
            if (p.matcher(name).matches()) return false;
        }
        if (includePatterns.isEmpty()) return true;
        for (Pattern p : includePatterns) {
            if (p.matcher(name).matches()) return true;
        }
        return false;
    }

    public List<String> include() {
        return include;
    }

    public List<String> exclude() {
        return exclude;
    }

    private static Pattern compile(String glob) {
        StringBuilder regex = new StringBuilder();
        StringBuilder literal = new StringBuilder();
        for (char c : glob.toUpperCase(Locale.ROOT).toCharArray()) {
            if (c == '*' || c == '?') {
                if (!literal.isEmpty()) {
                    regex.append(Pattern.quote(literal.toString()));
                    literal.setLength(0);
                }
                regex.append(c == '*' ? ".*" : ".");
            } else {
                literal.append(c);
            }
        }
        if (!literal.isEmpty()) regex.append(Pattern.quote(literal.toString()));
        return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ApplicationFilter f && f.include.equals(include) && f.exclude.equals(exclude);
    }

    @Override
    public int hashCode() {
        return Objects.hash(include, exclude);
    }

    @Override
    public String toString() {
        return include.isEmpty() && exclude.isEmpty() ? "all" : "include=" + include + " exclude=" + exclude;
    }
}
