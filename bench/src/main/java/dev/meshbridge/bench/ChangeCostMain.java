package dev.meshbridge.bench;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The bridge's single-change cost alone, as {@code bench/run --growth} measures it (no baseline, no client, no MCP
 * push): for each size, ingest the synthetic catalog through the SPI, warm up, then CPU and allocation of the
 * aggregator, xDS and MCP threads per single-instance change, each published and applied before the next. For working
 * on the change path: {@code java -cp <class path> dev.meshbridge.bench.ChangeCostMain changes services...}; {@code -Djfr=PREFIX} records
 * JFR (profile settings) over the measured changes only, {@code -Djfr.period=MILLIS} its execution sample period;
 * {@code -Dwarmup=N} the single changes of the warm-up (default 20,000; 0 is the procedure up to issue 22's third
 * session, whose rounds still ran the per-change code half-compiled).
 *
 * <p>{@code -Dprocedures=P,P...} the rounds' procedures, taken in turn ({@code -Drounds=N} times each, default 3):
 * {@code flush} (the default; as the growth sweep): each change published at once with {@code flushNow} and applied
 * before the next, back to back; {@code timer} (as {@code bench/run}'s single-change blocks): each change made a quiet period
 * (10 ms) after the one before was served, the harness polling for the snapshot, so each change runs alone (published
 * at once on the leading edge since issue 22's sixth session, by the quiet-period timer before); {@code gap}: as {@code flush}, then 10 ms parked before the next change. {@code -Dbaseline=N} also holds the
 * java-control-plane baseline with the same catalog in this JVM, as {@code bench/run} did, and makes N of its single
 * changes before each cycle of procedures (about 1.5 s of CPU and 0.7 GB of garbage each at 1M endpoints: give the
 * JVM 8 GB); {@code -Dbaseline.hold=true} holds it with none of its changes (what merely sharing the JVM with its
 * catalog does to the bridge's changes); {@code -Dballast=N} holds N million map entries of plain objects instead (a
 * large live set that is not another control plane).
 */
public final class ChangeCostMain {

    private ChangeCostMain() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Bench.log("load average at start %s", Machine.currentLoadAverage());
        for (int i = 1; i < args.length; i++) measure(Integer.parseInt(args[i]), 10, n);
        Bench.log("load average at end %s", Machine.currentLoadAverage());
        System.exit(0);
    }

    /** User-mode CPU of the change threads (the rest of their CPU is the kernel's: wake-ups, futexes). */
    private static long userNanos() {
        long sum = 0;
        for (var info : ThreadCost.THREADS.getThreadInfo(ThreadCost.THREADS.getAllThreadIds())) {
            if (info == null) continue;
            String g = ThreadCost.group(info.getThreadName());
            if (g.equals("aggregator") || g.equals("xds") || g.equals("mcp"))
                sum += ThreadCost.THREADS.getThreadUserTime(info.getThreadId());
        }
        return sum;
    }

    private static void measure(int services, int instances, int n) throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(services, instances);
        List<ServiceUpsert> upserts = new ArrayList<>(services);
        for (int i = 0; i < services; i++) upserts.add(catalog.upsert(i));
        try (Target target = new BridgeTarget()) {
            var complete = target.expect(services, (long) services * instances);
            for (ServiceUpsert u : upserts) target.aggregator().accept(u);
            complete.get(Bench.LONG, TimeUnit.MILLISECONDS);
            target.awaitServed(target.last().sequence(), Bench.LONG);
            target.catalogReady();
            upserts.clear();
            int[] ids = {0};
            SpiDriver driver =
                    new SpiDriver(catalog, target.aggregator(), null, () -> 1 + ids[0]++ % (Bench.QUIET_IDS - 1), 7);
            for (int k = 0; k < 2_000; k += 50) {
                for (int j = 0; j < 50; j++) driver.change(driver.randomService());
                target.settle(Bench.LONG);
            }
            // then single changes, as measured: fifty changes to a snapshot ran the per-snapshot code (publish, apply,
            // the serving threads' tasks) only 40 times, so the measured rounds ran it interpreted or half-compiled and
            // each round came out cheaper than the one before; a bridge that has run a while has it compiled
            int singles = Integer.getInteger("warmup", 20_000);
            for (int k = 0; k < singles; k++) {
                driver.change(driver.randomService());
                target.settle(Bench.LONG);
            }
            String jfr = System.getProperty("jfr");
            jdk.jfr.Recording recording = null;
            if (jfr != null) {
                recording = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
                // -Djfr.period=1 samples every millisecond: a change costs a fraction of one, and 10 ms leaves few
                // samples
                recording
                        .enable("jdk.ExecutionSample")
                        .withPeriod(java.time.Duration.ofMillis(Integer.getInteger("jfr.period", 10)));
                recording.setDestination(java.nio.file.Path.of(jfr + "-" + services + ".jfr"));
                recording.start();
            }
            String[] procedures = System.getProperty("procedures", "flush").split(",");
            int rounds = Integer.getInteger("rounds", 3);
            int baselineChanges = Integer.getInteger("baseline", 0);
            Target baseline = baselineChanges > 0 || Boolean.getBoolean("baseline.hold")
                    ? baseline(catalog, services, instances)
                    : null;
            // -Dballast=N: N million map entries of plain objects held as long as the rounds (experiments: whether a
            // large live set that is not another control plane does to the bridge's changes what the baseline does)
            java.util.Map<String, long[]> ballast = new java.util.HashMap<>();
            for (int k = 0; k < Integer.getInteger("ballast", 0) * 1_000_000; k++) ballast.put("b" + k, new long[8]);
            if (!ballast.isEmpty()) Bench.log("ballast: %,d entries", ballast.size());
            SpiDriver baselineDriver = baseline == null
                    ? null
                    : new SpiDriver(
                            catalog, baseline.aggregator(), null, () -> 1 + ids[0]++ % (Bench.QUIET_IDS - 1), 11);
            for (int round = 0; round < rounds * procedures.length; round++) {
                String procedure = procedures[round % procedures.length];
                if (baseline != null && baselineChanges > 0 && round % procedures.length == 0) {
                    ThreadCost b0 = ThreadCost.now();
                    for (int k = 0; k < baselineChanges; k++) {
                        baselineDriver.change(baselineDriver.randomService());
                        baseline.settle(Bench.LONG);
                    }
                    Map<String, ThreadCost.Cost> bc = ThreadCost.now().since(b0);
                    Bench.log(
                            "baseline block: %d single changes, %.1f ms CPU, %.1f MB allocated per change (load %s)",
                            baselineChanges,
                            ThreadCost.sum(bc, baseline.changeGroups()).cpu() / 1e6 / baselineChanges,
                            ThreadCost.sum(bc, baseline.changeGroups()).allocated() / 1e6 / baselineChanges,
                            Machine.currentLoadAverage());
                }
                // timer: from the change handed to the aggregator to served by both servers (the harness polls every
                // 0.1 ms, so this is late by up to that)
                long[] served = new long[n];
                target.applyPaced(Bench.LONG);
                Heap.collect();
                long user0 = userNanos();
                ThreadCost before = ThreadCost.now();
                for (int k = 0; k < n; k++) {
                    switch (procedure) {
                        case "flush" -> {
                            driver.change(driver.randomService());
                            target.settle(Bench.LONG);
                        }
                        case "gap" -> {
                            driver.change(driver.randomService());
                            target.settle(Bench.LONG);
                            java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
                        }
                        case "timer" -> {
                            target.awaitAlone();
                            long previous = target.last().sequence();
                            long sent = System.nanoTime();
                            driver.change(driver.randomService());
                            while (target.last().sequence() <= previous)
                                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                            target.awaitTaken(target.last().sequence(), Bench.LONG);
                            served[k] = System.nanoTime() - sent;
                            target.servedAlone();
                        }
                        default -> throw new IllegalArgumentException(procedure);
                    }
                }
                target.applyPaced(Bench.LONG);
                Map<String, ThreadCost.Cost> costs = ThreadCost.now().since(before);
                ThreadCost.Cost cost = ThreadCost.sum(costs, target.changeGroups());
                double user = (userNanos() - user0) / 1e6 / n;
                Bench.log(
                        "%,d endpoints, round %d %s: %.3f ms CPU (%.3f ms user), %.1f KB per change (load %s); %s",
                        (long) services * instances,
                        round,
                        procedure,
                        cost.cpu() / 1e6 / n,
                        user,
                        cost.allocated() / 1e3 / n,
                        Machine.currentLoadAverage(),
                        ThreadCost.describe(
                                Map.of(
                                        "aggregator", costs.getOrDefault("aggregator", new ThreadCost.Cost(0, 0)),
                                        "xds", costs.getOrDefault("xds", new ThreadCost.Cost(0, 0)),
                                        "mcp", costs.getOrDefault("mcp", new ThreadCost.Cost(0, 0))),
                                n));
                if (procedure.equals("timer")) {
                    java.util.Arrays.sort(served);
                    Bench.log(
                            "  change to served by both servers: p50 %.2f ms, p99 %.2f ms",
                            served[n / 2] / 1e6, served[Math.min(n - 1, n * 99 / 100)] / 1e6);
                }
            }
            if (recording != null) recording.close();
            if (ballast.size() < 0) throw new AssertionError(); // held to here
            if (baseline != null) baseline.close();
        }
    }

    /** The java-control-plane baseline holding the same catalog in this JVM, as {@code bench/run} ran it up to now. */
    private static Target baseline(SyntheticCatalog catalog, int services, int instances) throws Exception {
        Target baseline = new BaselineTarget();
        var complete = baseline.expect(services, (long) services * instances);
        for (int i = 0; i < services; i++) baseline.aggregator().accept(catalog.upsert(i));
        complete.get(Bench.LONG, TimeUnit.MILLISECONDS);
        baseline.awaitServed(baseline.last().sequence(), Bench.LONG);
        baseline.catalogReady();
        Bench.log("baseline: holds %,d endpoints in this JVM", (long) services * instances);
        return baseline;
    }
}
