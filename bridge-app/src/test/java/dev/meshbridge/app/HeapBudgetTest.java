package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class HeapBudgetTest {

    @Test
    void heapAfterCollectionPastTheBudget_isReported_beforeAnyOutOfMemoryError() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        // a budget every JVM passes: what a collection leaves is always more than a millionth of the heap
        try (HeapBudget budget = new HeapBudget(0.000_001, meters)) {
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        System.gc();
                        return meters.counter("meshbridge.heap.budget.exceeded").count() > 0;
                    });
            assertThat(meters.get("meshbridge.heap.retained.ratio").gauge().value())
                    .isBetween(0.0, 1.0)
                    .isPositive();
        }
    }
}
