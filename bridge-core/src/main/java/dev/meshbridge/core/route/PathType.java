package dev.meshbridge.core.route;

/**
 * How a route's path is compared with a request path, following the Kubernetes Ingress path types.
 *
 * <ol>
 *   <li>{@link #EXACT} ({@code Exact}): the request path equals the route path, case-sensitively;
 *   <li>{@link #PREFIX} ({@code Prefix}): the route path is a prefix of the request path element by element, split at
 *       {@code /}: {@code /foo} matches {@code /foo}, {@code /foo/} and {@code /foo/bar} but not {@code /foobar}; a
 *       trailing slash on the route path is ignored ({@code /foo/} is {@code /foo}); {@code /} matches every path;
 *   <li>Kubernetes's {@code ImplementationSpecific} is treated as {@link #PREFIX}, as most controllers do.
 * </ol>
 */
public enum PathType {
    EXACT,
    PREFIX;

    /** The Kubernetes spelling: {@code Exact} or {@code Prefix}. */
    public String kubernetesName() {
        return this == EXACT ? "Exact" : "Prefix";
    }
}
