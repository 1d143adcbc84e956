package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.testing.ManualTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SerialExecutorTest {

    @Test
    void tasks_runInOrder_aFailingTaskIsReported_andTheNextOnesStillRun() {
        RegistryStatus status = new RegistryStatus("r", "test");
        List<Integer> ran = new CopyOnWriteArrayList<>();
        try (SerialExecutor loop = new SerialExecutor("test-loop", new ManualTicker(), status)) {
            for (int i = 0; i < 100; i++) {
                int n = i;
                loop.execute(() -> {
                    if (n == 50) throw new IllegalStateException("boom");
                    ran.add(n);
                });
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 99);
        }
        assertThat(ran).isSorted().doesNotContain(50);
        assertThat(status.errorCount()).isEqualTo(1);
        assertThat(status.lastError()).contains("boom");
    }

    @Test
    void schedule_runsOnlyWhenTheInjectedTimeIsDue_andNotAfterCancel() {
        ManualTicker ticker = new ManualTicker();
        List<String> ran = new CopyOnWriteArrayList<>();
        try (SerialExecutor loop = new SerialExecutor("test-loop", ticker, null)) {
            loop.schedule(Duration.ofSeconds(30), () -> ran.add("30s"));
            loop.schedule(Duration.ofSeconds(10), () -> ran.add("10s"));
            Ticker.Cancellable cancelled = loop.schedule(Duration.ofSeconds(20), () -> ran.add("20s"));
            cancelled.cancel();
            ticker.advance(Duration.ofSeconds(9));
            assertThat(ticker.pending()).isEqualTo(2);
            ticker.advance(Duration.ofSeconds(1));
            await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 1);
            ticker.advance(Duration.ofMinutes(1));
            await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 2);
        }
        assertThat(ran).containsExactly("10s", "30s");
    }

    @Test
    void close_waitsForTheRunningTask_thenDropsEverything_andIsIdempotent() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        List<String> ran = new CopyOnWriteArrayList<>();
        SerialExecutor loop = new SerialExecutor("test-loop", new ManualTicker(), null);
        loop.execute(() -> {
            started.countDown();
            try {
                Thread.sleep(Duration.ofSeconds(30)); // interrupted by close
            } catch (InterruptedException e) {
                ran.add("interrupted");
            }
        });
        loop.execute(() -> ran.add("queued"));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        loop.close();
        loop.close();
        loop.execute(() -> ran.add("after close"));
        assertThat(ran).containsExactly("interrupted");
        assertThat(loop.isClosed()).isTrue();
    }
}
