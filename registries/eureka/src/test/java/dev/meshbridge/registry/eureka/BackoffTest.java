package dev.meshbridge.registry.eureka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void next_doublesUpToTheMaximum_withinHalfAndAllOfTheCeiling() {
        Backoff top = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(5), () -> 0.999_999);
        Backoff bottom = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(5), () -> 0.0);

        assertThat(top.next()).isBetween(Duration.ofMillis(999), Duration.ofSeconds(1));
        assertThat(top.next()).isBetween(Duration.ofMillis(1999), Duration.ofSeconds(2));
        assertThat(top.next()).isBetween(Duration.ofMillis(3999), Duration.ofSeconds(4));
        assertThat(top.next()).isBetween(Duration.ofMillis(4999), Duration.ofSeconds(5));
        assertThat(top.next()).isBetween(Duration.ofMillis(4999), Duration.ofSeconds(5));
        assertThat(bottom.next()).isEqualTo(Duration.ofMillis(500));
        assertThat(bottom.next()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void reset_startsOverFromTheInitialPause() {
        Backoff b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), () -> 0.0);
        for (int i = 0; i < 40; i++) b.next();
        assertThat(b.next()).isEqualTo(Duration.ofSeconds(15));

        b.reset();

        assertThat(b.failures()).isZero();
        assertThat(b.next()).isEqualTo(Duration.ofMillis(500));
    }
}
