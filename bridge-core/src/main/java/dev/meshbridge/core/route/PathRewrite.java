package dev.meshbridge.core.route;

import java.util.Objects;

/**
 * How a route changes the request path before it forwards the request; the query string is kept either way.
 *
 * <ol>
 *   <li>{@link Kind#PREFIX}: the part of the path the route matched is replaced by {@code target}, element by element:
 *       a route {@code Prefix /dubbo} with target {@code /api} forwards {@code /dubbo/orders?id=1} as {@code
 *       /api/orders?id=1} and {@code /dubbo} as {@code /api}; with target {@code /} it forwards {@code /orders} and
 *       {@code /}. An {@code Exact} route's whole path is its matched part. Istio's {@code rewrite.uri} and Higress's
 *       {@code higress.io/rewrite-path} do this;
 *   <li>{@link Kind#WHOLE_PATH}: the whole path becomes {@code target}, whatever follows the matched part: a route
 *       {@code Prefix /dubbo} with target {@code /} forwards {@code /dubbo/orders} as {@code /}. ingress-nginx (0.22
 *       and later) does this with a {@code rewrite-target} that uses no capture group.
 * </ol>
 *
 * @param kind which part of the path is replaced
 * @param target the replacement: a path starting with {@code /}, without query, fragment, spaces or {@code $}; a
 *     trailing slash is dropped for {@link Kind#PREFIX} ({@code /api/} is {@code /api}), as for route prefixes
 */
public record PathRewrite(Kind kind, String target) {

    /** Which part of the path a rewrite replaces. */
    public enum Kind {
        /** the matched prefix (or exact path). */
        PREFIX,
        /** the whole path. */
        WHOLE_PATH
    }

    public PathRewrite {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(target, "target");
        String problem = problem(target);
        if (problem != null) throw new IllegalArgumentException("rewrite target '" + target + "' " + problem);
        if (kind == Kind.PREFIX && target.length() > 1 && target.endsWith("/"))
            target = target.substring(0, target.length() - 1);
    }

    public static PathRewrite prefix(String target) {
        return new PathRewrite(Kind.PREFIX, target);
    }

    public static PathRewrite wholePath(String target) {
        return new PathRewrite(Kind.WHOLE_PATH, target);
    }

    /** Why {@code target} cannot be a rewrite target, or null when it can. */
    public static String problem(String target) {
        if (!target.startsWith("/")) return "must start with /";
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (c == '?' || c == '#') return "must be a path, without query or fragment";
            if (c == '$') return "must not use capture groups or variables ($)";
            if (c <= ' ' || c == 0x7f) return "must not contain spaces or control characters";
        }
        return null;
    }

    @Override
    public String toString() {
        return (kind == Kind.PREFIX ? "prefix " : "path ") + target;
    }
}
