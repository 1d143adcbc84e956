package dev.meshbridge.bench.jmh;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/** Runs the JMH benchmarks of this package (one fork each, with JMH's GC profiler) and returns their scores. */
public final class JmhSuite {

    /**
     * One benchmark's result.
     *
     * @param benchmark the method, e.g. {@code ChangeAtScaleBenchmark.bridgeChange}
     * @param score the average time per operation
     * @param error the 99.9% confidence half-width
     * @param unit the score's unit
     * @param allocatedPerOp bytes allocated per operation (all threads), or NaN
     */
    public record Row(String benchmark, double score, double error, String unit, double allocatedPerOp) {}

    private JmhSuite() {}

    public static List<Row> run(int services, int instances, int iterationMillis, String heap) throws RunnerException {
        Options options = new OptionsBuilder()
                .include(ChangeAtScaleBenchmark.class.getName())
                .include(TranslatorBenchmark.class.getName())
                .forks(1)
                .warmupIterations(3)
                .warmupTime(TimeValue.milliseconds(iterationMillis))
                .measurementIterations(5)
                .measurementTime(TimeValue.milliseconds(iterationMillis))
                .param("services", Integer.toString(services))
                .param("instances", Integer.toString(instances))
                .jvmArgs("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC")
                .addProfiler(GCProfiler.class)
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(options).run();
        List<Row> rows = new ArrayList<>();
        for (RunResult r : results) {
            Result<?> primary = r.getPrimaryResult();
            Result<?> alloc = r.getSecondaryResults().get("·gc.alloc.rate.norm");
            if (alloc == null) alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
            String name = r.getParams().getBenchmark();
            rows.add(new Row(
                    name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1),
                    primary.getScore(),
                    primary.getScoreError(),
                    primary.getScoreUnit(),
                    alloc == null ? Double.NaN : alloc.getScore()));
        }
        return rows;
    }
}
