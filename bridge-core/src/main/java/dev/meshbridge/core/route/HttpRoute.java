package dev.meshbridge.core.route;

import java.util.List;
import java.util.Objects;

/**
 * One HTTP route an Ingress contributes: a match and the weighted destinations requests go to.
 *
 * @param owner the Ingress that declares it
 * @param match host and path
 * @param destinations one or more, with a positive sum of weights
 */
public record HttpRoute(IngressRef owner, RouteMatch match, List<WeightedDestination> destinations) {

    public HttpRoute {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(match, "match");
        destinations = List.copyOf(destinations);
        if (destinations.isEmpty()) throw new IllegalArgumentException(owner + " " + match + ": no destination");
        long sum = 0;
        for (WeightedDestination d : destinations) sum += d.weight();
        if (sum <= 0) throw new IllegalArgumentException(owner + " " + match + ": the weights add up to 0");
    }
}
