package dev.meshbridge.registry.eureka;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with jitter for retries while every server fails: the n-th consecutive failure waits a random
 * time between half and all of {@code min(initial * 2^(n-1), max)}, so bridge replicas do not retry in step. Not
 * thread-safe; owned by the watcher's thread.
 */
final class Backoff {

    private final long initialNanos;
    private final long maxNanos;
    private final DoubleSupplier random;
    private int failures;

    Backoff(Duration initial, Duration max, DoubleSupplier random) {
        this.initialNanos = Math.max(1, initial.toNanos());
        this.maxNanos = Math.max(initialNanos, max.toNanos());
        this.random = random;
    }

    /** The pause after one more failure. */
    Duration next() {
        failures++;
        long ceiling = initialNanos;
        for (int i = 1; i < failures && ceiling < maxNanos; i++) ceiling = Math.min(maxNanos, ceiling * 2);
        long half = ceiling / 2;
        return Duration.ofNanos(half + (long) (random.getAsDouble() * (ceiling - half)));
    }

    void reset() {
        failures = 0;
    }

    int failures() {
        return failures;
    }
}
