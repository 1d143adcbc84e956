package dev.meshbridge.core.route;

import java.util.Objects;

/**
 * One destination of a route and its share of the traffic: {@code weight / sum of the route's weights}.
 *
 * @param destination where requests go
 * @param weight relative weight, 0..1,000,000; 0 sends nothing
 */
public record WeightedDestination(Destination destination, int weight) {

    public static final int MAX_WEIGHT = 1_000_000;

    public WeightedDestination {
        Objects.requireNonNull(destination, "destination");
        if (weight < 0 || weight > MAX_WEIGHT)
            throw new IllegalArgumentException("weight " + weight + " is out of 0.." + MAX_WEIGHT);
    }
}
