package dev.meshbridge.core.config;

import java.time.Duration;
import java.util.Objects;

/**
 * What the catalog does when a registry reports a service with no instances, or the service disappears.
 *
 * @param mode {@link Mode#DELETE} removes the service at once; {@link Mode#KEEP} keeps the last known endpoints for
 *     {@code grace}, then removes it unless instances came back
 * @param grace how long {@link Mode#KEEP} keeps the last known endpoints
 */
public record EmptyServicePolicy(Mode mode, Duration grace) {

    public enum Mode {
        DELETE,
        KEEP
    }

    public static final EmptyServicePolicy DELETE = new EmptyServicePolicy(Mode.DELETE, Duration.ZERO);

    public EmptyServicePolicy {
        Objects.requireNonNull(mode, "mode");
        grace = mode == Mode.DELETE ? Duration.ZERO : Objects.requireNonNull(grace, "grace");
        if (grace.isNegative()) throw new IllegalArgumentException("grace must not be negative");
    }

    public static EmptyServicePolicy keep(Duration grace) {
        return new EmptyServicePolicy(Mode.KEEP, grace);
    }
}
