package dev.meshbridge.registry.consul;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: attempt n waits a random time between half and all of {@code min(max, initial *
 * 2^n)}, so many queries failing together do not retry together. Not thread-safe: one per retrying loop.
 */
final class Backoff {

    private final long initialNanos;
    private final long maxNanos;
    private int attempts;

    Backoff(Duration initial, Duration max) {
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** The wait before the next retry; each call doubles the ceiling up to the maximum. */
    Duration next() {
        long ceiling = initialNanos << Math.min(attempts, 30);
        if (ceiling <= 0 || ceiling > maxNanos) ceiling = maxNanos;
        attempts++;
        long half = ceiling / 2;
        return Duration.ofNanos(half + ThreadLocalRandom.current().nextLong(half + 1));
    }

    void reset() {
        attempts = 0;
    }
}
