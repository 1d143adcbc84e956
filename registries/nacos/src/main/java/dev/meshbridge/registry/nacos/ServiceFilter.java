package dev.meshbridge.registry.nacos;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Decides which Nacos services are watched.
 *
 * <ol>
 *   <li>Dubbo's non-provider entries ({@code consumers:}, {@code configurators:}, {@code routers:}) never are;
 *   <li>with an allowlist, a service must match one of its patterns;
 *   <li>a service that matches a denylist pattern is not watched, even when allowed.
 * </ol>
 *
 * <p>Patterns are globs on the Nacos service name: {@code *} matches any run of characters, {@code ?} one character,
 * everything else itself (so {@code providers:org.demo.*} selects Dubbo interfaces of a package).
 */
final class ServiceFilter {

    private static final List<String> IGNORED_PREFIXES = List.of("consumers:", "configurators:", "routers:");

    private final List<Pattern> allow;
    private final List<Pattern> deny;

    ServiceFilter(List<String> allow, List<String> deny) {
        this.allow = allow.stream().map(ServiceFilter::glob).toList();
        this.deny = deny.stream().map(ServiceFilter::glob).toList();
    }

    boolean accepts(String serviceName) {
        if (serviceName == null || serviceName.isEmpty()) return false;
        for (String prefix : IGNORED_PREFIXES) {
            if (serviceName.startsWith(prefix)) return false;
        }
        if (!allow.isEmpty()
                && allow.stream().noneMatch(p -> p.matcher(serviceName).matches())) return false;
        return deny.stream().noneMatch(p -> p.matcher(serviceName).matches());
    }

    static Pattern glob(String glob) {
        StringBuilder re = new StringBuilder(glob.length() + 8);
        StringBuilder literal = new StringBuilder();
        for (char c : glob.toCharArray()) {
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
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }
}
