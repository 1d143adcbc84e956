package dev.meshbridge.core.route;

import java.util.Objects;

/**
 * What requests a route claims: a host (or every host) and a path. Two Ingresses claiming an equal match are in
 * conflict (see {@link RouteTable}).
 *
 * @param host the request host, lower case; may start with {@code *.} (a wildcard for one label); empty for every
 *     host (an Ingress rule without a host)
 * @param pathType how the path compares
 * @param path the path, starting with {@code /}
 */
public record RouteMatch(String host, PathType pathType, String path) implements Comparable<RouteMatch> {

    public RouteMatch {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(pathType, "pathType");
        Objects.requireNonNull(path, "path");
        if (!path.startsWith("/")) throw new IllegalArgumentException("path '" + path + "' must start with /");
    }

    /** True when the route applies to every host. */
    public boolean anyHost() {
        return host.isEmpty();
    }

    @Override
    public int compareTo(RouteMatch o) {
        int c = host.compareTo(o.host);
        if (c != 0) return c;
        c = pathType.compareTo(o.pathType);
        return c != 0 ? c : path.compareTo(o.path);
    }

    /** {@code host Prefix /path}, with {@code *} for every host. */
    @Override
    public String toString() {
        return (host.isEmpty() ? "*" : host) + " " + pathType.kubernetesName() + " " + path;
    }
}
