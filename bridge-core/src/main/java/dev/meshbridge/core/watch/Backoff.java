package dev.meshbridge.core.watch;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with jitter for a retrying watcher: the n-th consecutive failure waits a random time between
 * half and all of {@code min(initial * 2^(n-1), max)}, so replicas and queries that fail together do not retry in
 * step. Not thread-safe: one per retrying loop, used on its owner thread.
 */
public final class Backoff {

    private final long initialNanos;
    private final long maxNanos;
    private final DoubleSupplier random;
    private int failures;

    /** @param random uniform in [0, 1), injected so tests can pin the jitter */
    public Backoff(Duration initial, Duration max, DoubleSupplier random) {
        this.initialNanos = Math.max(1, initial.toNanos());
        this.maxNanos = Math.max(initialNanos, max.toNanos());
        this.random = random;
    }

    public Backoff(Duration initial, Duration max) {
        this(initial, max, () -> ThreadLocalRandom.current().nextDouble());
    }

    /** The pause after one more failure. */
    public Duration next() {
        failures++;
        long ceiling = initialNanos;
        for (int i = 1; i < failures && ceiling < maxNanos; i++) ceiling = Math.min(maxNanos, ceiling * 2);
        long half = ceiling / 2;
        return Duration.ofNanos(half + (long) (random.getAsDouble() * (ceiling - half)));
    }

    /** After a success: the next failure starts again from the initial delay. */
    public void reset() {
        failures = 0;
    }

    /** Consecutive failures since the last reset. */
    public int failures() {
        return failures;
    }
}
