package dev.meshbridge.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness end to end on a tiny load (30 services x 4, a handful of streams, a second of changes per window): the
 * real bridge and baseline servers, the load process with its clients and ZooKeeper, and the results file a user
 * reads. Timings are printed in the file, never asserted here.
 */
class BenchSmokeTest {

    @Test
    void smokeRun_writesIssue9TableWithEveryFigureMeasured(@TempDir Path dir) throws Exception {
        String md = run(dir, "--smoke");
        assertThat(md)
                .contains("## Machine", "| load average (1, 5, 15 min) at start |", "- **Date**: ", "- **Command**: `")
                .contains("## Figures", "| figure | goal on a 2-core machine | measured (bridge) |")
                // the bridge-versus-baseline ratios come from alternating windows, with the machine's load in each
                .contains("## Interleaved windows", "| 2 | baseline |", "median of 2 interleaved pairs")
                .doesNotContain("not measured", "### Errors during the run");
        List<String> rows = figureRows(md);
        // issue 9's eight figures, cold ingest once through the SPI and once through ZooKeeper
        assertThat(rows).hasSize(9);
        assertThat(rows).allSatisfy(row -> assertThat(row).matches(".*\\| (met|\\*\\*missed\\*\\*) \\|$"));
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| ServiceEntry resources whose version changes"))
                .singleElement()
                .satisfies(row ->
                        assertThat(row).contains("exactly 1 in 3 of 3 changes").endsWith("| met |"));
        // the single change as it arrives alone (the goal's figure from the bridge alone in the JVM, then the blocks
        // alternating with the baseline's) and back to back, so a reader sees every procedure's figure
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| CPU and garbage of one single-instance change"))
                .singleElement()
                .satisfies(row -> assertThat(row)
                        .containsPattern("one at a time, each alone \\(a quiet period after the one before\\), the"
                                + " bridge alone in this JVM, blocks [0-9.]+ and [0-9.]+ ms: [0-9.]+ ms")
                        .containsPattern("in the blocks alternating with the baseline's, its catalog in this JVM too,"
                                + " [0-9.]+ and [0-9.]+ ms: [0-9.]+ ms")
                        .contains("back to back (each published at once, no pause): "));
        assertThat(md).contains("The bridge's single changes alone in this JVM, before the baseline's ingest");
        // each cold ingest with what the machine and the JVM did meanwhile (GC, load, CPU), both sides
        assertThat(md)
                .contains("While it ran (start to served): the bridge: load average ")
                .contains("; the baseline: load average ")
                .containsPattern("ingest\\.spi\\.conditions: load average .* collections, [0-9.]+ s in GC")
                .containsPattern("zk\\.ingest\\.conditions: load average .* collections, [0-9.]+ s in GC");
    }

    @Test
    void onlyChanges_writesTheSingleChangeFiguresAndNothingElse(@TempDir Path dir) throws Exception {
        String md = run(dir, "--smoke", "--only", "changes");
        List<String> rows = figureRows(md);
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| CPU and garbage of one single-instance change"))
                .singleElement()
                .satisfies(row -> assertThat(row)
                        .contains("back to back (each published at once, no pause): ")
                        .containsPattern("median of 2 interleaved pairs")
                        .matches(".*\\| (met|\\*\\*missed\\*\\*) \\|$"));
        // no client ran: the windows' figures say so instead of showing numbers
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| bytes to each subscribed stream"))
                .singleElement()
                .satisfies(row -> assertThat(row).endsWith("| not measured |"));
        assertThat(md).contains("| 2 | baseline |").doesNotContain("### Errors during the run");
    }

    @Test
    void onlyStreams_runsTheManyStreamsPhaseAlone_withTheBridgeSideOfEachProbeChange(@TempDir Path dir)
            throws Exception {
        String md = run(dir, "--smoke", "--only", "streams", "--streams", "8");
        List<String> rows = figureRows(md);
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| ADS streams held, and a one-endpoint change delivered to all"))
                .singleElement()
                .satisfies(row -> assertThat(row)
                        .contains("(8 streams)")
                        .contains("8/8 connected")
                        // then the probe changes one at a time, each delivered to all 8 streams
                        .containsPattern("one change at a time \\(12 probe changes 0\\.3 s apart, nothing else"
                                + " changing\\): to all p50 [0-9]+ ms, p99 [0-9]+ ms \\|")
                        .doesNotEndWith("| not measured |"));
        // the steady windows did not run
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| bytes to each subscribed stream"))
                .singleElement()
                .satisfies(row -> assertThat(row).endsWith("| not measured |"));
        assertThat(md)
                .containsPattern("bridge\\.probeHandoff\\.count=[1-9]")
                .doesNotContain("### Errors during the run");
    }

    /** Runs the bench with these arguments into {@code dir}, checks it exited 0, and returns the results file. */
    private static String run(Path dir, String... args) throws Exception {
        Path out = dir.resolve("RESULTS.md");
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(
                List.of("--out", out.toString(), "--work", dir.resolve("work").toString()));
        int status = BenchMain.run(all.toArray(String[]::new));
        String md = Files.readString(out);
        assertThat(status).as("exit status; the file says:%n%s", md).isZero();
        return md;
    }

    /** The rows of the figures table. */
    private static List<String> figureRows(String md) {
        return md.lines()
                .dropWhile(l -> !l.startsWith("| figure |"))
                .skip(2)
                .takeWhile(l -> l.startsWith("|"))
                .toList();
    }
}
