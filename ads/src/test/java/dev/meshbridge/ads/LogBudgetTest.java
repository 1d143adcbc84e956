package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogBudgetTest {

    private final AtomicLong now = new AtomicLong();
    private final LogBudget budget = new LogBudget(20, 5, 60_000_000_000L, now::get);

    @Test
    void oneNoisyClient_usesItsOwnShare_andLeavesTheRestForOthers() {
        int written = 0;
        for (int i = 0; i < 10_000; i++) if (budget.take("nack", "10.0.0.66") >= 0) written++;
        assertThat(written).isEqualTo(5);
        // a second client, within the same minute, is still heard
        assertThat(budget.take("nack", "10.0.0.7")).isGreaterThanOrEqualTo(0);
        // another kind has a budget of its own
        assertThat(budget.take("unknown-type", "10.0.0.66")).isZero();
    }

    @Test
    void manyClients_writeNoMoreThanTheKindsBudget_andTheNextWindowSaysHowManyWereDropped() {
        int written = 0;
        for (int i = 0; i < 10_000; i++) if (budget.take("limit", "10.1." + (i >> 8) + "." + (i & 255)) >= 0) written++;
        assertThat(written).isEqualTo(20);

        now.addAndGet(60_000_000_000L);
        long dropped = budget.take("limit", "10.9.9.9");
        assertThat(dropped).isEqualTo(10_000 - 20);
        assertThat(LogBudget.dropped(dropped)).isEqualTo(" (9980 similar lines dropped)");
    }

    @Test
    void theClientsRememberedAreBounded_pastThemClientsShareTheKindsBudget() {
        LogBudget wide = new LogBudget(1_000_000, 1, 60_000_000_000L, now::get);
        for (int i = 0; i < LogBudget.MAX_CLIENTS; i++)
            assertThat(wide.take("k", "c" + i)).isZero();
        // remembered clients are held to their share; the ones past the bound are not tracked one by one
        assertThat(wide.take("k", "c0")).isEqualTo(-1);
        assertThat(wide.take("k", "new")).isGreaterThanOrEqualTo(0);
        assertThat(wide.take("k", "new")).isGreaterThanOrEqualTo(0);
    }

    @Test
    void theHostOfAPeer_isItsAddressWithoutThePort() {
        assertThat(LogBudget.host("10.0.0.1:5000")).isEqualTo("10.0.0.1");
        assertThat(LogBudget.host("0:0:0:0:0:0:0:1:5000")).isEqualTo("0:0:0:0:0:0:0:1");
        assertThat(LogBudget.host("?")).isEqualTo("?");
    }
}
