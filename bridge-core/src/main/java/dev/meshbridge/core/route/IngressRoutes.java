package dev.meshbridge.core.route;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything one Ingress contributes to the route table.
 *
 * @param owner the Ingress
 * @param routes its HTTP routes, in declaration order (a match declared twice: the first one counts)
 * @param defaultBackend its {@code spec.defaultBackend}, as a route matching every host and path, if any
 * @param tls its TLS sections
 */
public record IngressRoutes(
        IngressRef owner, List<HttpRoute> routes, Optional<HttpRoute> defaultBackend, List<TlsEntry> tls) {

    /** The match a default backend carries: every host, every path. */
    public static final RouteMatch DEFAULT_BACKEND_MATCH = new RouteMatch("", PathType.PREFIX, "/");

    public IngressRoutes {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(defaultBackend, "defaultBackend");
        routes = List.copyOf(routes);
        tls = List.copyOf(tls);
        for (HttpRoute r : routes) requireOwner(owner, r.owner());
        defaultBackend.ifPresent(d -> {
            requireOwner(owner, d.owner());
            if (!d.match().equals(DEFAULT_BACKEND_MATCH))
                throw new IllegalArgumentException("a default backend matches every host and path");
        });
        for (TlsEntry t : tls) requireOwner(owner, t.owner());
    }

    private static void requireOwner(IngressRef owner, IngressRef other) {
        if (!owner.equals(other)) throw new IllegalArgumentException(other + " is not owned by " + owner);
    }
}
