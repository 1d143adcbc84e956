package dev.meshbridge.bench;

import dev.meshbridge.bench.jmh.JmhSuite;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs issue 9's benchmark suite and writes {@code RESULTS.md}. Arguments: {@code --quick} (a reduced load, a few
 * minutes), {@code --smoke} (a tiny load, seconds: the module's test), {@code --no-jmh}, {@code --out FILE}, {@code
 * --work DIR} (recordings, the load process's log). Exit status 0 when every phase ran (goals may still be missed: the
 * file says which), 1 when a phase failed (the file says which, with what was measured).
 */
public final class BenchMain {

    private BenchMain() {}

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    public static int run(String... args) throws Exception {
        // the servers log a line per push at INFO: keep the run's output to its progress and warnings (the
        // ZooKeeper test fixtures bring a simplelogger.properties that asks for INFO)
        for (String logger : new String[] {"defaultLogLevel", "log.dev.meshbridge"}) {
            if (System.getProperty("org.slf4j.simpleLogger." + logger) == null) {
                System.setProperty("org.slf4j.simpleLogger." + logger, "warn");
            }
        }
        LoadProfile load = LoadProfile.full();
        Path out = null;
        Path dir = Path.of(".");
        Path work = Path.of("target", "bench");
        boolean jmh = true;
        boolean growth = false;
        String only = "";
        int bigStreams = 0;
        double bigSeconds = 0;
        int[] growthServices = {1_000, 10_000, 100_000};
        boolean growthBaseline = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> load = LoadProfile.quick();
                case "--huge" -> load = LoadProfile.huge();
                case "--smoke" -> load = LoadProfile.smoke();
                case "--full" -> load = LoadProfile.full();
                case "--no-jmh" -> jmh = false;
                case "--out" -> out = Path.of(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--growth" -> growth = true;
                case "--only" -> only = args[++i];
                case "--streams" -> bigStreams = Integer.parseInt(args[++i]);
                case "--streams-seconds" -> bigSeconds = Double.parseDouble(args[++i]);
                case "--growth-services" ->
                    growthServices = java.util.Arrays.stream(args[++i].split(","))
                            .mapToInt(Integer::parseInt)
                            .toArray();
                case "--growth-bridge-only" -> growthBaseline = false;
                case "--work" -> work = Path.of(args[++i]);
                case "" -> {}
                default ->
                    throw new IllegalArgumentException("unknown argument '" + args[i]
                            + "'; use --quick, --huge, --smoke, --full, --growth, --no-jmh,"
                            + " --only spi|zookeeper|changes|streams, --streams N, --streams-seconds S,"
                            + " --growth-services N,N, --growth-bridge-only, --out FILE, --dir DIR, --work DIR");
            }
        }
        Files.createDirectories(work);
        if (growth) return growth(dir, work, growthServices, growthBaseline);
        if (!only.isEmpty()
                && !only.equals("spi")
                && !only.equals("zookeeper")
                && !only.equals("changes")
                && !only.equals("streams")) {
            throw new IllegalArgumentException("--only takes spi, zookeeper, changes or streams, not '" + only + "'");
        }
        if (bigStreams > 0 || bigSeconds > 0) load = load.withBigStreams(bigStreams, bigSeconds);
        if (out == null) {
            String name = switch (load.name()) {
                case "full" -> "RESULTS";
                default -> "RESULTS-" + load.name();
            };
            // the single-change part, or the many-streams phase, alone does not overwrite the whole run's file
            String part = only.equals("changes") ? "-changes" : only.equals("streams") ? "-streams" : "";
            out = dir.resolve(name + part + ".md");
        }
        String command = System.getenv("BENCH_COMMAND");
        if (command == null || command.isBlank()) {
            command = "java "
                    + String.join(
                            " ",
                            java.lang.management.ManagementFactory.getRuntimeMXBean()
                                    .getInputArguments()) + " -cp <bench class path> " + BenchMain.class.getName() + " "
                    + String.join(" ", args);
        }
        Results results = new Results(load, Machine.capture(), command.trim());
        long start = System.currentTimeMillis();
        Bench.log("load %s, writing %s; machine load average %s", load.name(), out, results.machine.loadAverage());

        if (jmh && load.jmh()) {
            Bench.log("JMH: the pure parts");
            try {
                results.jmh = JmhSuite.run(load.services(), load.instances(), load.jmhIterationMillis(), "2g");
            } catch (Exception | Error e) {
                results.jmhError = e.toString();
                results.errors.add("JMH: " + e);
            }
        }

        try {
            results.edsSizes = EdsSizes.measure(load.instances());
        } catch (Exception e) {
            results.errors.add("EDS sizes: " + e);
        }

        if (only.equals("changes")) {
            // the single-change part alone: both sides ingest the SPI catalog and run their single-change blocks; no
            // client, so no load process
            Bench bench = new Bench(load, work, null);
            phase(results, "SPI load, single changes only", () -> bench.changesOnly(results));
        } else
            try (World world = new World(work, load.worldHeap())) {
                results.worldJvmArgs = world.jvmArgs();
                clockCheck(world, results);
                Bench bench = new Bench(load, work, world);
                if (only.equals("streams")) {
                    phase(results, "many streams, bridge alone", () -> bench.streamsOnly(results));
                } else if (!only.equals("zookeeper")) {
                    phase(results, "SPI load, bridge and baseline interleaved", () -> bench.spi(results));
                }
                String[] address = new String[1];
                if (!only.equals("spi") && !only.equals("streams")) {
                    phase(results, "ZooKeeper catalog", () -> address[0] = bench.zookeeper(results));
                }
                if (address[0] != null) {
                    phase(
                            results,
                            "bridge, ZooKeeper",
                            () -> bench.zookeeper(results.bridge, BridgeTarget::new, address[0]));
                    phase(
                            results,
                            "baseline, ZooKeeper",
                            () -> bench.zookeeper(results.baseline, BaselineTarget::new, address[0]));
                }
            }
        results.loadAverageEnd = Machine.currentLoadAverage();
        results.durationMillis = System.currentTimeMillis() - start;
        ResultsWriter writer = new ResultsWriter(results);
        writer.write(out);
        Bench.log("wrote %s in %.1f min", out.toAbsolutePath(), results.durationMillis / 60_000.0);
        for (ResultsWriter.Figure f : writer.figures) {
            System.out.printf("  %-10s %s: %s%n", f.verdict().name(), f.figure(), f.measured());
        }
        return results.errors.isEmpty() ? 0 : 1;
    }

    /** The growth sweep alone: 10,000, 100,000 and 1,000,000 endpoints, each side; GROWTH.md and charts in dir. */
    private static int growth(Path dir, Path work, int[] services, boolean baseline) throws Exception {
        long start = System.currentTimeMillis();
        String command = System.getenv("BENCH_COMMAND");
        Growth g;
        try (World world = new World(work, "2g")) {
            g = new Growth(world, 10, services);
            if (!baseline) g.sides = new String[] {"bridge"};
            g.run();
        }
        g.write(
                dir,
                command == null || command.isBlank() ? "BenchMain --growth" : command.trim(),
                System.currentTimeMillis() - start);
        Bench.log("wrote %s", dir.resolve("GROWTH.md").toAbsolutePath());
        return g.errors.isEmpty() ? 0 : 1;
    }

    /**
     * Checks that the load process reads the same monotonic clock: its {@code System.nanoTime()} must fall between
     * this process's readings before and after asking (the best of ten round trips).
     */
    private static void clockCheck(World world, Results results) throws Exception {
        long bestRoundTrip = Long.MAX_VALUE;
        boolean inside = false;
        for (int i = 0; i < 10; i++) {
            long t1 = System.nanoTime();
            long there = Long.parseLong(world.call(60_000, "clock").get("nanos"));
            long t2 = System.nanoTime();
            if (t2 - t1 < bestRoundTrip) {
                bestRoundTrip = t2 - t1;
                inside = there >= t1 && there <= t2;
                results.clockSkewNanos = t2 - t1;
            }
        }
        if (!inside) {
            results.errors.add("the load process's System.nanoTime() does not fall within this process's readings:"
                    + " cross-process latencies are not valid on this machine");
        }
    }

    interface Phase {
        void run() throws Exception;
    }

    private static void phase(Results results, String name, Phase phase) {
        try {
            phase.run();
        } catch (Exception | AssertionError e) {
            Bench.log("phase '%s' failed: %s", name, e);
            e.printStackTrace(System.out);
            results.errors.add(name + ": " + e);
        }
    }
}
