package dev.meshbridge.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.bench.report.Stats;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The words next to the many-streams p99 in RESULTS-huge.md say which of the probe changes it is; they must agree with
 * the percentile {@link Stats} actually took.
 */
class ProbeSamplesTest {

    /** Probe changes taking 1, 2, ... n ms: the k-th slowest takes n - k + 1 ms. */
    private static Map<String, String> report(int n) {
        List<Long> nanos = new ArrayList<>();
        for (int i = n; i >= 1; i--) nanos.add(i * 1_000_000L);
        Map<String, String> m = new HashMap<>();
        Stats.put(m, "all.probeToAll", nanos);
        return m;
    }

    @Test
    void fortyChanges_theP99IsTheSlowest() {
        Map<String, String> m = report(40);
        assertThat(m).containsEntry("all.probeToAll.p99", "40.000");
        assertThat(Figures.probeSamples(m)).isEqualTo("40 probe changes, the p99 is the slowest; the slowest 40 ms");
    }

    @Test
    void aHundredAndTwentyChanges_theP99IsTheSecondSlowest() {
        Map<String, String> m = report(120);
        assertThat(m).containsEntry("all.probeToAll.p99", "119.000");
        assertThat(Figures.probeSamples(m))
                .isEqualTo("120 probe changes, the p99 is the second slowest; the slowest 120 ms");
    }

    @Test
    void threeHundredChanges_theP99IsTheFourthSlowest() {
        Map<String, String> m = report(300);
        assertThat(m).containsEntry("all.probeToAll.p99", "297.000");
        assertThat(Figures.probeSamples(m)).startsWith("300 probe changes, the p99 is the 4th slowest;");
    }

    @Test
    void noChangeReachedEveryStream_saysSo() {
        assertThat(Figures.probeSamples(report(0))).isEqualTo("no probe change reached every stream");
    }
}
