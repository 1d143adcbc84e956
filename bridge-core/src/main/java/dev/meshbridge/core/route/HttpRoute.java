package dev.meshbridge.core.route;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One HTTP route an Ingress contributes: a match, the weighted destinations requests go to, and how the path is
 * rewritten on the way.
 *
 * @param owner the Ingress that declares it
 * @param match host and path
 * @param destinations one or more, with a positive sum of weights
 * @param rewrite the path rewrite, if any
 */
public record HttpRoute(
        IngressRef owner, RouteMatch match, List<WeightedDestination> destinations, Optional<PathRewrite> rewrite) {

    public HttpRoute {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(match, "match");
        Objects.requireNonNull(rewrite, "rewrite");
        destinations = List.copyOf(destinations);
        if (destinations.isEmpty()) throw new IllegalArgumentException(owner + " " + match + ": no destination");
        long sum = 0;
        for (WeightedDestination d : destinations) sum += d.weight();
        if (sum <= 0) throw new IllegalArgumentException(owner + " " + match + ": the weights add up to 0");
    }

    /** A route that forwards the path as it is. */
    public HttpRoute(IngressRef owner, RouteMatch match, List<WeightedDestination> destinations) {
        this(owner, match, destinations, Optional.empty());
    }
}
