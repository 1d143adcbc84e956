package dev.meshbridge.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
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
        Path out = dir.resolve("RESULTS.md");

        int status = BenchMain.run(
                "--smoke",
                "--out",
                out.toString(),
                "--work",
                dir.resolve("work").toString());

        String md = Files.readString(out);
        assertThat(status).as("exit status; the file says:%n%s", md).isZero();
        assertThat(md)
                .contains("## Machine", "| load average (1, 5, 15 min) at start |", "- **Date**: ", "- **Command**: `")
                .contains("## Figures", "| figure | goal on a 2-core machine | measured (bridge) |")
                // the bridge-versus-baseline ratios come from alternating windows, with the machine's load in each
                .contains("## Interleaved windows", "| 2 | baseline |", "median of 2 interleaved pairs")
                .doesNotContain("not measured", "### Errors during the run");
        List<String> rows = md.lines()
                .dropWhile(l -> !l.startsWith("| figure |"))
                .skip(2)
                .takeWhile(l -> l.startsWith("|"))
                .toList();
        // issue 9's eight figures, cold ingest once through the SPI and once through ZooKeeper
        assertThat(rows).hasSize(9);
        assertThat(rows).allSatisfy(row -> assertThat(row).matches(".*\\| (met|\\*\\*missed\\*\\*) \\|$"));
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| ServiceEntry resources whose version changes"))
                .singleElement()
                .satisfies(row ->
                        assertThat(row).contains("exactly 1 in 3 of 3 changes").endsWith("| met |"));
    }
}
