package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void next_doublesUpToTheMaximum_withJitterBetweenHalfAndAll() {
        Backoff top = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(5), () -> 0.999_999);
        Backoff bottom = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(5), () -> 0.0);
        assertThat(top.next()).isCloseTo(Duration.ofSeconds(1), Duration.ofMillis(1));
        assertThat(top.next()).isCloseTo(Duration.ofSeconds(2), Duration.ofMillis(1));
        assertThat(top.next()).isCloseTo(Duration.ofSeconds(4), Duration.ofMillis(1));
        assertThat(top.next()).isCloseTo(Duration.ofSeconds(5), Duration.ofMillis(1));
        assertThat(top.next()).isCloseTo(Duration.ofSeconds(5), Duration.ofMillis(1));
        assertThat(bottom.next()).isEqualTo(Duration.ofMillis(500));
        assertThat(bottom.next()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void reset_startsAgainFromTheInitialDelay() {
        Backoff b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), () -> 0.0);
        b.next();
        b.next();
        b.next();
        assertThat(b.failures()).isEqualTo(3);
        b.reset();
        assertThat(b.failures()).isZero();
        assertThat(b.next()).isEqualTo(Duration.ofMillis(500));
    }
}
