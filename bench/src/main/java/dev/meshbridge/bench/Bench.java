package dev.meshbridge.bench;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.bench.load.ZookeeperCatalog;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The phases of one run, for one side (the bridge or the baseline): cold ingest through the SPI, the cost of single
 * changes with no client, a steady window of changes with the fleet (and, for the bridge, an istiod-like client),
 * single changes seen by istiod, a reconnect storm, many streams, and the same catalog shape through a real
 * ZooKeeper and the real watcher.
 */
final class Bench {

    static final long LONG = TimeUnit.MINUTES.toMillis(10);
    /** How long a fleet may take to connect before the window starts with whatever is connected. */
    static final long CONNECT_LIMIT = TimeUnit.SECONDS.toMillis(90);

    static final int RAMP = 100;
    /** Changes made with no client connected cycle through ids 1 to this. */
    static final int QUIET_IDS = 2_000;
    /** Changes per snapshot in the burst measurement. */
    static final int BURST = 10;

    static final double HEAP_GUARD = 0.6;
    /** How long the reconnect storm is watched (the goal is 20 s). */
    static final long RECONNECT_LIMIT = TimeUnit.SECONDS.toMillis(60);

    interface TargetFactory {
        Target create() throws Exception;
    }

    /** What runs during a window of changes. */
    interface Changes {
        void make() throws Exception;
    }

    private final LoadProfile load;
    private final Path work;
    private final World world;
    private final SyntheticCatalog spi;
    /** Ids of changes that clients time: above every id used without clients (see {@link SpiDriver}). */
    private final AtomicInteger timedIds = new AtomicInteger(QUIET_IDS);

    private final AtomicInteger quietIds = new AtomicInteger();

    Bench(LoadProfile load, Path work, World world) {
        this.load = load;
        this.work = work;
        this.world = world;
        this.spi = new SyntheticCatalog(load.services(), load.instances());
    }

    static void log(String format, Object... args) {
        System.out.printf("[bench %tT] %s%n", System.currentTimeMillis(), String.format(format, args));
    }

    // ------------------------------------------------------------------ the SPI load

    /**
     * The SPI load, both sides at once: each ingests the catalog cold (one after the other), then every figure that
     * compares them is measured in alternating short windows over the same catalog and load (bridge, baseline,
     * bridge, baseline...), so that a burst of load from elsewhere on the machine lands on both; then what only one
     * side has or what does not fit twice (istiod, the reconnect storm, many streams) side by side.
     */
    void spi(Results results) throws Exception {
        spi(results, false);
    }

    /**
     * Only the part of {@link #spi} that needs no client ({@code --only changes}): each side ingests the catalog cold,
     * then the single changes in alternating blocks, the bursts and the bridge's changes back to back.
     */
    void changesOnly(Results results) throws Exception {
        spi(results, true);
    }

    private void spi(Results results, boolean changesOnly) throws Exception {
        Side b = results.bridge;
        Side base = results.baseline;
        Target bridge = null;
        Target baseline = null;
        try {
            bridge = ingest(b, BridgeTarget::new);
            aloneCost(b, bridge);
            baseline = bounded(base, "cold ingest", () -> ingest(base, BaselineTarget::new));
            changeCost(b, bridge, base, baseline);
            if (changesOnly) {
                if (base.unfinished != null) baseline = null; // stopped (and closed) where it did not finish
                return;
            }
            if (!load.baselineWithClients() && base.unfinished == null) {
                // it cannot be fair with clients at this size (see LoadProfile.huge): its memory goes back now
                base.leftOut.add(
                        "the steady windows, the reconnect storm and many streams (the bridge alone runs them)");
                if (baseline != null) baseline.close();
                baseline = null;
            }
            steady(b, bridge, base, baseline);
            if (base.unfinished != null) baseline = null; // stopped (and closed) where it did not finish
            if (bridge.mcpPort() > 0) {
                world.call(LONG, "fleet-use", b.name);
                istiodWindow(b, bridge);
                singleChangesSeenByIstiod(b, bridge);
                world.call(LONG, "mcp-close");
            }
            for (Side side : new Side[] {b, base}) {
                if (side.unfinished != null || (side == base && !load.baselineWithClients())) continue;
                world.call(LONG, "fleet-use", side.name);
                reconnect(side);
                world.call(LONG, "fleet-close");
            }
            world.call(LONG, "fleet-use", "main");
            if (baseline != null) baseline.close();
            baseline = null;
            manyStreams(b, bridge);
            bridge.close();
            bridge = null;
            if (base.unfinished == null && load.baselineWithClients()) {
                Side again = new Side("baseline-again");
                baseline = bounded(base, "second cold ingest", () -> ingest(again, BaselineTarget::new));
                if (baseline != null) {
                    Target t = baseline;
                    bounded(base, "many streams", () -> {
                        manyStreams(base, t);
                        return t;
                    });
                    if (base.unfinished != null) baseline = null;
                }
            }
        } finally {
            if (world != null) world.call(LONG, "fleet-use", "main"); // none with --only changes
            if (bridge != null) bridge.close();
            if (baseline != null) baseline.close();
        }
    }

    /** What a bounded wait on the baseline runs. */
    interface BaselineStep {
        Target run() throws Exception;
    }

    /**
     * How long one wait on this side may take: {@link LoadProfile#baselineLimit()} for the baseline, {@link #LONG} for
     * the bridge.
     */
    private long limit(Side side) {
        return side.name.startsWith("baseline") ? load.baselineLimit() : LONG;
    }

    /**
     * Runs a step of the baseline; when it fails or a wait in it passes {@link #limit}, the side is marked as not
     * finished there ({@link Side#unfinished}), and null is returned: the run goes on with the bridge alone.
     */
    private Target bounded(Side side, String what, BaselineStep step) {
        try {
            return step.run();
        } catch (Exception e) {
            stopped(side, what, e);
            return null;
        }
    }

    private void stopped(Side side, String what, Exception e) {
        side.unfinished = e instanceof TimeoutException
                ? what + " did not finish in " + limit(side) / 1000 + " s"
                : what + " failed: " + e;
        log("%s: %s; the run goes on without it", side.name, side.unfinished);
    }

    /** Stops the baseline where it did not finish: its fleet and its servers. */
    private void stop(Side side, Target target, String what, Exception e) {
        stopped(side, what, e);
        if (world == null) {
            target.close();
            return;
        }
        try {
            world.call(LONG, "fleet-use", side.name);
            world.call(LONG, "fleet-close");
        } catch (Exception closing) {
            log("%s: closing its fleet: %s", side.name, closing);
        }
        target.close();
    }

    /** Cold ingest through the SPI into a new target; the target is left running. */
    private Target ingest(Side side, TargetFactory factory) throws Exception {
        // the heap before the upserts exist: the catalog's model (endpoints, label maps) is the bridge's to hold
        long heap0 = Heap.settled();
        List<ServiceUpsert> upserts = new ArrayList<>(load.services());
        for (int i = 0; i < load.services(); i++) upserts.add(spi.upsert(i));
        Target target = factory.create();
        try {
            log("%s: cold ingest of %,d x %d through the SPI", side.name, load.services(), load.instances());
            var complete = target.expect(load.services(), load.endpoints());
            IngestWatch watch = new IngestWatch();
            long start = System.nanoTime();
            for (ServiceUpsert u : upserts) target.aggregator().accept(u);
            long done = complete.get(limit(side), TimeUnit.MILLISECONDS);
            side.ingestMillis = TimeUnit.NANOSECONDS.toMillis(done - start);
            target.awaitServed(target.last().sequence(), limit(side));
            side.servedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            side.ingestConditions = watch.stop();
            log("%s: cold ingest conditions: %s", side.name, side.ingestConditions.describe());
            target.catalogReady();
            upserts.clear();
            side.retainedBytes = Heap.usedAfterGc() - heap0;
            log(
                    "%s: first complete snapshot %d ms, served %d ms, retained %.1f MB",
                    side.name, side.ingestMillis, side.servedMillis, side.retainedBytes / 1e6);
            return target;
        } catch (Exception | Error e) {
            target.close();
            throw e;
        }
    }

    /**
     * The bridge's single-change cost as its users' bridge runs: alone in its JVM, before the baseline has ingested
     * anything. It warms up (changes in bursts, as a running bridge has seen many, then single changes), then measures
     * {@link LoadProfile#pairs()} blocks of single changes, each published and applied before the next, nobody
     * connected. This is the goal's figure; {@link #changeCost} measures the same blocks again alternating with the
     * baseline's, with both catalogs in this JVM, for the ratio.
     *
     * <p>Why apart: with the baseline's catalog merely held in the same heap (none of its changes running), or 1.4 GB
     * of plain objects held instead, the same bridge changes cost about a quarter more CPU ({@code ChangeCostMain
     * -Dbaseline.hold=true}, {@code -Dballast=8}; bench/README.md, "The fifteenth session"); a deployed bridge never
     * shares its JVM with another control plane's million endpoints.
     */
    private void aloneCost(Side b, Target bridge) throws Exception {
        SpiDriver driver = new SpiDriver(spi, bridge.aggregator(), null, this::quietId, 19);
        int pairs = Math.max(1, load.pairs());
        int n = Math.max(1, load.changeCostChanges() / pairs);
        log(
                "%s: %d changes to warm up, then %d blocks of %d single changes, alone in this JVM (before the"
                        + " baseline's ingest), no client",
                b.name, load.warmUpChanges(), pairs, n);
        warmUp(bridge, driver, load.warmUpChanges(), SINGLE_WARM_UP, limit(b));
        for (int p = 0; p < pairs; p++) {
            JfrProfile recording = p == 0 ? new JfrProfile(work.resolve(b.name + "-single-changes.jfr")) : null;
            Measured m;
            try {
                m = singleChanges(bridge, driver, n, limit(b));
            } finally {
                if (recording != null) b.changeProfile = recording.stop();
            }
            m.cost().forEach((g, c) -> b.aloneCost.merge(g, c, ThreadCost.Cost::plus));
            b.aloneCount += n;
            b.aloneBlocks.add(m.block());
        }
    }

    /** A block of single changes: what it cost per thread group, this process's CPU, and the block's summary. */
    private record Measured(Map<String, ThreadCost.Cost> cost, long processCpu, Side.Block block) {}

    /**
     * {@code n} single changes, each made a quiet period after the one before was served, published and applied
     * before the next, so each runs alone; what a server paced is applied before the block and at its end, so the
     * block counts its own changes' work and only theirs. The block starts on a collected heap.
     */
    private Measured singleChanges(Target target, SpiDriver driver, int n, long limit) throws Exception {
        target.applyPaced(limit);
        Heap.collect();
        long[] ticks = Machine.cpuTicks();
        String loadAverage = Machine.currentLoadAverage();
        ThreadCost before = ThreadCost.now();
        for (int k = 0; k < n; k++) oneAtATime(target, driver, limit);
        target.applyPaced(limit);
        ThreadCost after = ThreadCost.now();
        Map<String, ThreadCost.Cost> cost = after.since(before);
        ThreadCost.Cost sum = ThreadCost.sum(cost, target.changeGroups());
        return new Measured(
                cost,
                after.processCpuSince(before),
                new Side.Block(
                        n,
                        new ThreadCost.Cost(sum.cpu() / n, sum.allocated() / n),
                        busy(ticks, Machine.cpuTicks()),
                        loadAverage));
    }

    /** Changes in bursts of fifty, then {@code singles} single changes (0 for none), each applied before the next. */
    private void warmUp(Target target, SpiDriver driver, int bursts, int singles, long limit) throws Exception {
        for (int k = 0; k < bursts; k += 50) {
            for (int j = 0; j < 50; j++) driver.change(driver.randomService());
            target.settle(limit);
        }
        // then single changes, as measured: fifty to a snapshot ran the per-snapshot code a fortieth as often, and the
        // measured blocks ran it half compiled (ChangeCostMain's finding)
        for (int k = 0; k < singles; k++) oneAtATime(target, driver, limit);
    }

    /** Single changes that warm the bridge up before its single changes are measured (about 12 ms each). */
    static final int SINGLE_WARM_UP = Integer.getInteger("bench.singleWarmUp", 5_000);

    /**
     * Warms both sides up again (the baseline for the first time), then measures single changes as {@link #aloneCost}
     * does, in alternating blocks: a block on the bridge, a block on the baseline, and so on ({@link
     * LoadProfile#pairs()} pairs), both catalogs in this JVM. Then the same number of changes in bursts, per side.
     */
    private void changeCost(Side b, Target bridge, Side base, Target baseline) throws Exception {
        Side[] sides = {b, base};
        Target[] targets = {bridge, baseline};
        int[] counts = {load.changeCostChanges(), load.baselineChangeCostChanges()};
        SpiDriver[] drivers = new SpiDriver[2];
        int pairs = Math.max(1, load.pairs());
        for (int s = 0; s < 2; s++) {
            if (targets[s] == null) continue;
            drivers[s] = new SpiDriver(spi, targets[s].aggregator(), null, this::quietId, 17);
            sides[s].warmUpChanges = s == 0 ? load.warmUpChanges() : counts[1];
            log(
                    "%s: %d changes to warm up, then %d single changes in %d blocks alternating with the %s's, and %d"
                            + " in bursts of %d, no client",
                    sides[s].name, sides[s].warmUpChanges, counts[s], pairs, sides[1 - s].name, counts[s], BURST);
            try {
                // single changes on the bridge only (the baseline's take a second each at 1M), a fifth as many as
                // before its blocks alone: it is compiled, and they recompile what the baseline's ingest undid
                warmUp(
                        targets[s],
                        drivers[s],
                        sides[s].warmUpChanges,
                        s == 0 ? SINGLE_WARM_UP / 5 : 0,
                        limit(sides[s]));
            } catch (Exception e) {
                if (s == 0) throw e;
                stop(sides[s], targets[s], "warm-up changes", e);
                targets[s] = null;
            }
        }
        long[] snapshots0 = {
            bridge.last().sequence(), targets[1] == null ? 0 : baseline.last().sequence()
        };
        for (int p = 0; p < pairs; p++) {
            for (int s = 0; s < 2; s++) {
                if (targets[s] == null) continue;
                int n = Math.max(1, counts[s] / pairs);
                Measured m;
                try {
                    m = singleChanges(targets[s], drivers[s], n, limit(sides[s]));
                } catch (Exception e) {
                    if (s == 0) throw e;
                    stop(sides[s], targets[s], "single changes", e);
                    targets[s] = null;
                    continue;
                }
                Side side = sides[s];
                m.cost().forEach((g, c) -> side.changeCost.merge(g, c, ThreadCost.Cost::plus));
                side.changeCount += n;
                side.changeProcessCpu += m.processCpu();
                side.blocks.add(m.block());
            }
        }
        for (int s = 0; s < 2; s++) {
            if (targets[s] == null) continue;
            sides[s].snapshots = targets[s].last().sequence() - snapshots0[s];
            targets[s].applyPaced(limit(sides[s]));
            ThreadCost before = ThreadCost.now();
            try {
                for (int k = 0; k < sides[s].changeCount; k += BURST) {
                    for (int j = 0; j < BURST; j++) drivers[s].change(drivers[s].randomService());
                    targets[s].settle(limit(sides[s]));
                }
                targets[s].applyPaced(limit(sides[s]));
            } catch (Exception e) {
                if (s == 0) throw e;
                stop(sides[s], targets[s], "changes in bursts", e);
                targets[s] = null;
                continue;
            }
            sides[s].burstCost = ThreadCost.now().since(before);
        }
        // the bridge's same number of single changes back to back: each published at once (flushNow) and applied
        // before the next, with no pause, as ChangeCostMain and the growth sweep measure them; against the blocks
        // above (each change made a quiet period after the one before, alone on the machine for about
        // 10 ms) this shows what a change costs when its threads run on warm caches
        bridge.applyPaced(LONG);
        ThreadCost backToBack = ThreadCost.now();
        for (int k = 0; k < b.changeCount; k++) {
            drivers[0].change(drivers[0].randomService());
            bridge.settle(LONG);
        }
        bridge.applyPaced(LONG);
        b.backToBackCost = ThreadCost.now().since(backToBack);
    }

    /** The share of the whole machine busy between two {@link Machine#cpuTicks()} readings, or -1 when unknown. */
    static double busy(long[] before, long[] after) {
        long total = after[1] - before[1];
        return total <= 0 ? -1 : (after[0] - before[0]) / (double) total;
    }

    private int quietId() {
        return 1 + quietIds.getAndIncrement() % (QUIET_IDS - 1);
    }

    private void oneAtATime(Target target, SpiDriver driver, long limit) throws Exception {
        target.awaitAlone();
        long previous = target.last().sequence();
        driver.change(driver.randomService());
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.min(limit, 30_000));
        while (target.last().sequence() <= previous) {
            if (System.nanoTime() > deadline) throw new TimeoutException("no snapshot after a change");
            LockSupport.parkNanos(100_000);
        }
        target.awaitTaken(target.last().sequence(), limit);
        target.servedAlone();
    }

    /**
     * Connects a fleet {@value #RAMP} streams at a time (a rolling start), each group once the previous ones are
     * synced, until all are, the connect limit passes, or this JVM's heap after GC passes {@value #HEAP_GUARD} of its
     * maximum (the baseline keeps per-stream state that can fill it; the harness must survive to report).
     */
    private Map<String, String> fleet(
            Side side, Target target, String kind, int streams, int services, int instances, int seed)
            throws Exception {
        int half = streams / 2;
        log(
                "%s: %,d ADS streams connect, %d at a time (%d Delta, %d SotW)",
                side.name, streams, RAMP, half, streams - half);
        world.call(LONG, "fleet", half, streams - half, kind, services, instances, seed);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(load.connectLimitMillis());
        Map<String, String> r = Map.of();
        String stopped = "";
        int opened = 0;
        while (opened < streams) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                stopped = "time";
                break;
            }
            if (Heap.oldGenAfterGcShare() > HEAP_GUARD
                    && Heap.usedAfterGc() > HEAP_GUARD * Runtime.getRuntime().maxMemory()) {
                stopped = "heap";
                break;
            }
            r = world.call(LONG + left, "fleet-open", target.adsPort(), RAMP, left);
            opened = Integer.parseInt(r.get("opened"));
        }
        Map<String, String> out = new java.util.LinkedHashMap<>(r);
        if (!stopped.isEmpty()) {
            out.put("stopped", stopped);
            out.put("limitMs", Long.toString(load.connectLimitMillis()));
        }
        log("%s: fleet %s", side.name, out);
        return out;
    }

    /** A window of changes with the fleet connected: what the clients saw and what this JVM spent. */
    private void window(
            Side side, String label, Target target, Side.Window w, int changes, boolean profile, Changes make)
            throws Exception {
        window(side, label, target, w, changes, profile, make, "arm");
    }

    /**
     * @param start {@code arm} (the fleet's counters and records start again) or {@code mark} (a new window on a fleet
     *     that stays armed, whose windows are pooled later)
     */
    private void window(
            Side side,
            String label,
            Target target,
            Side.Window w,
            int changes,
            boolean profile,
            Changes make,
            String start)
            throws Exception {
        world.call(LONG, start);
        log("%s: %s window, %d changes at %.0f/s", side.name, label, changes, load.rate());
        JfrProfile recording = profile ? new JfrProfile(work.resolve(side.name + "-" + label + ".jfr")) : null;
        boolean worldJfr = profile && Boolean.getBoolean("bench.worldJfr");
        if (worldJfr) {
            world.call(
                    LONG,
                    "jfr-start",
                    work.resolve("world-" + side.name + "-" + label + ".jfr").toAbsolutePath());
        }
        w.loadBefore = Machine.currentLoadAverage();
        long[] ticks = Machine.cpuTicks();
        long[] gc = Machine.gc();
        ThreadCost before = ThreadCost.now();
        make.make();
        target.settle(limit(side));
        ThreadCost after = ThreadCost.now();
        w.machineBusy = busy(ticks, Machine.cpuTicks());
        long[] gcAfter = Machine.gc();
        w.gcCount = gcAfter[0] - gc[0];
        w.gcMillis = gcAfter[1] - gc[1];
        w.loadAfter = Machine.currentLoadAverage();
        if (recording != null) w.profile = recording.stop();
        if (worldJfr) world.call(LONG, "jfr-stop");
        w.changes = changes;
        w.cost = after.since(before);
        w.processCpu = after.processCpuSince(before);
        w.wall = after.wallSince(before);
        w.report = world.call(LONG, "report", load.drainMillis());
        log(
                "%s: %s: Delta to every subscribed stream p50 %s p99 %s ms; SotW p50 %s p99 %s ms; probe to all p99 %s ms",
                side.name,
                label,
                w.report.get("delta.toAll.p50"),
                w.report.get("delta.toAll.p99"),
                w.report.get("sotw.toAll.p50"),
                w.report.get("sotw.toAll.p99"),
                w.report.get("all.probeToAll.p99"));
    }

    /**
     * The steady load in alternating windows: a fleet connected to each side (the same subscriptions), then window k
     * of the bridge, window k of the baseline, and so on, each {@link LoadProfile#pairSeconds()} long, the same changes
     * (same services in the same order) to each. A side's windows pooled make its steady figure; each pair makes a
     * ratio.
     */
    private void steady(Side b, Target bridge, Side base, Target baseline) throws Exception {
        Side[] sides = {b, base};
        Target[] targets = {bridge, baseline};
        SpiDriver[] drivers = new SpiDriver[2];
        if (base.unfinished != null || baseline == null) targets[1] = null;
        for (int s = 0; s < 2; s++) {
            if (targets[s] == null) continue;
            world.call(LONG, "fleet-use", sides[s].name);
            sides[s].steady.connect =
                    fleet(sides[s], targets[s], "spi", load.streams(), load.services(), load.instances(), 1);
            world.call(LONG, "arm");
            drivers[s] = new SpiDriver(spi, targets[s].aggregator(), world, timedIds::getAndIncrement, 23);
        }
        int count = Math.max(1, (int) Math.round(load.rate() * load.pairSeconds()));
        for (int p = 0; p < load.pairs(); p++) {
            for (int s = 0; s < 2; s++) {
                if (targets[s] == null) continue;
                world.call(LONG, "fleet-use", sides[s].name);
                Side.Window w = new Side.Window();
                w.connect = sides[s].steady.connect;
                SpiDriver driver = drivers[s];
                try {
                    window(
                            sides[s],
                            "steady-" + (p + 1),
                            targets[s],
                            w,
                            count,
                            p == 0,
                            () -> driver.run(load.rate(), count, load.probeEvery()),
                            "mark");
                } catch (Exception e) {
                    if (s == 0) throw e;
                    stop(sides[s], targets[s], "steady window " + (p + 1), e);
                    targets[s] = null;
                    continue;
                }
                sides[s].windows.add(w);
                sides[s].steady.add(w);
                sides[s].steady.machineBusy = Math.max(sides[s].steady.machineBusy, w.machineBusy);
            }
        }
        for (int s = 0; s < 2; s++) {
            if (targets[s] == null) continue;
            world.call(LONG, "fleet-use", sides[s].name);
            sides[s].steady.report = world.call(LONG, "report-all", 0);
            // the pooled report spans the windows: the clients' CPU is theirs summed
            long worldCpu = 0;
            for (Side.Window w : sides[s].windows) {
                worldCpu += Long.parseLong(w.report.getOrDefault("worldCpuMs", "0"));
            }
            sides[s].steady.report.put("worldCpuMs", Long.toString(worldCpu));
        }
    }

    /** The bridge's steady window with the istiod-like client connected too (the baseline serves no MCP). */
    private void istiodWindow(Side side, Target target) throws Exception {
        side.mcpConnect = world.call(LONG, "mcp", target.mcpPort(), load.services(), LONG);
        log("%s: istiod-like client %s", side.name, side.mcpConnect);
        side.steadyIstiod.connect = side.steady.connect;
        int count = (int) Math.round(load.rate() * load.steadySeconds());
        SpiDriver driver = new SpiDriver(spi, target.aggregator(), world, timedIds::getAndIncrement, 27);
        window(
                side,
                "steady-with-istiod",
                target,
                side.steadyIstiod,
                count,
                true,
                () -> driver.run(load.rate(), count, load.probeEvery()));
    }

    private void singleChangesSeenByIstiod(Side side, Target target) throws Exception {
        log("%s: %d single changes, ServiceEntry versions istiod sees change", side.name, load.mcpChanges());
        // the window's last pushes may still be on their way (the MCP server paces them 2 s apart, and each is the
        // whole set: 200 MB at a million endpoints), so first a quiet longer than the pacing plus a whole set's
        // transfer
        int total = quietMcp(QUIET_AFTER_WINDOW + load.services() / 10);
        SpiDriver driver = new SpiDriver(spi, target.aggregator(), null, timedIds::getAndIncrement, 29);
        for (int k = 0; k < load.mcpChanges(); k++) {
            driver.change(driver.randomService());
            Map<String, String> r = world.call(LONG, "mcp-wait", total + 1, 30_000);
            side.mcpChanged.add(Integer.parseInt(r.get("changed")));
            side.mcpResources.add(Integer.parseInt(r.get("resources")));
            side.mcpBytes.add(Integer.parseInt(r.get("bytes")));
            total = quietMcp(QUIET);
        }
    }

    private static final long QUIET = 300;
    private static final long QUIET_AFTER_WINDOW = 3_000;

    /**
     * Waits until the istiod-like client received no ServiceEntry response for {@code quietMillis}; returns how many it
     * had.
     */
    private int quietMcp(long quietMillis) throws Exception {
        int last = -1;
        while (true) {
            int now = Integer.parseInt(world.call(LONG, "mcp-stats", 0).get("total"));
            if (now == last) return now;
            last = now;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(quietMillis));
        }
    }

    private void reconnect(Side side) throws Exception {
        log("%s: %,d clients reconnect at once", side.name, load.streams());
        side.reconnect = world.call(LONG + RECONNECT_LIMIT, "reconnect", RECONNECT_LIMIT);
        log("%s: reconnect %s", side.name, side.reconnect);
    }

    /**
     * The many-streams phase alone (`--only streams`): the bridge ingests the catalog cold, then the fleet of {@link
     * LoadProfile#bigStreams()} connects and the steady load runs; for profiling the fan-out of one change to many
     * streams without the rest of the run.
     */
    void streamsOnly(Results results) throws Exception {
        Side b = results.bridge;
        try (Target bridge = ingest(b, BridgeTarget::new)) {
            world.call(LONG, "fleet-use", "main");
            manyStreams(b, bridge);
        }
        results.baseline.leftOut.add("everything (--only streams runs the bridge's many-streams phase alone)");
    }

    /** Probe changes made one at a time after the many-streams window, {@link #loneGapMillis} apart. */
    static final int BIG_LONE_CHANGES = 12;

    /** The pause after each of those changes: 0.15 ms per stream, between 0.3 and 1.5 s. */
    static long loneGapMillis(int streams) {
        return Math.max(300, Math.min(1_500, streams * 15L / 100));
    }

    /** The seconds of steady load before the many-streams window, not counted: 5, or the window's own length if less. */
    static double bigWarmUpSeconds(LoadProfile load) {
        return Math.min(5, load.bigSeconds());
    }

    private void manyStreams(Side side, Target target) throws Exception {
        side.heapBeforeBig = Heap.settled();
        side.big.connect = fleet(side, target, "spi", load.bigStreams(), load.services(), load.instances(), 2);
        side.heapWithBig = Heap.usedAfterGc();
        side.rssWithBig = Machine.rss();
        int count = (int) Math.round(load.rate() * load.bigSeconds());
        SpiDriver driver = new SpiDriver(spi, target.aggregator(), world, timedIds::getAndIncrement, 31);
        // the same load first, not counted: the first fan-outs to this many streams compile their paths in both JVMs
        // (in a window right after the fleet connected, the JIT compilers took 14 of 37 s of CPU on the 2 cores)
        int warm = (int) Math.round(load.rate() * bigWarmUpSeconds(load));
        log("%s: many-streams: %d changes at %.0f/s to warm up, not counted", side.name, warm, load.rate());
        driver.run(load.rate(), warm, load.probeEvery());
        target.settle(limit(side));
        Thread.sleep(load.drainMillis());
        List<Long> handoffs = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Long> handoffCpu = java.util.Collections.synchronizedList(new ArrayList<>());
        if (target.xdsServed() != null) {
            String probeHost = spi.host(spi.probe());
            // the xDS server applies a small snapshot on the aggregator's thread when its own thread is idle
            // (AdsServer.executeSnapshot), and sends on its own: the two threads' CPU together is the bridge's share
            long[] threads = {threadId("meshbridge-aggregator"), threadId("meshbridge-xds")};
            // callbacks, no thread per probe change: the aggregator's publication of the snapshot carrying it, then
            // the xDS serving thread's pushed() (polling every 0.5 ms per probe in flight cost wake-ups on the cores
            // the window measures)
            driver.probes((id, t0) -> {
                long cpu0 = cpuOf(threads);
                target.whenCarried(
                        probeHost, id, s -> handoff(target, s.sequence(), t0, handoffs, threads, cpu0, handoffCpu));
            });
        }
        window(
                side,
                "many-streams",
                target,
                side.big,
                count,
                side.name.equals("bridge"),
                () -> driver.run(load.rate(), count, load.probeEvery()));
        if (!handoffs.isEmpty()) {
            List<Double> ms = new ArrayList<>();
            synchronized (handoffs) {
                for (long n : handoffs) ms.add(n / 1e6);
            }
            java.util.Collections.sort(ms);
            side.big.report.put("bridge.probeHandoff.count", Integer.toString(ms.size()));
            side.big.report.put("bridge.probeHandoff.p50", fmt3(ms.get((int) Math.floor(0.5 * (ms.size() - 1)))));
            side.big.report.put("bridge.probeHandoff.p99", fmt3(ms.get((int) Math.ceil(0.99 * (ms.size() - 1)))));
            log(
                    "%s: many-streams: probe change to its push handed to gRPC at every stream (bridge side) p50 %s p99 %s ms",
                    side.name,
                    side.big.report.get("bridge.probeHandoff.p50"),
                    side.big.report.get("bridge.probeHandoff.p99"));
        }
        if (!handoffCpu.isEmpty()) {
            List<Double> ms = new ArrayList<>();
            synchronized (handoffCpu) {
                for (long n : handoffCpu) ms.add(n / 1e6);
            }
            java.util.Collections.sort(ms);
            side.big.report.put("bridge.probeHandoffCpu.p50", fmt3(ms.get((int) Math.floor(0.5 * (ms.size() - 1)))));
            side.big.report.put("bridge.probeHandoffCpu.p99", fmt3(ms.get((int) Math.ceil(0.99 * (ms.size() - 1)))));
            log(
                    "%s: many-streams: CPU of the aggregator and xDS serving threads from a probe change to its push handed to gRPC at"
                            + " every stream p50 %s p99 %s ms",
                    side.name,
                    side.big.report.get("bridge.probeHandoffCpu.p50"),
                    side.big.report.get("bridge.probeHandoffCpu.p99"));
        }
        // then one change to all with nothing else going on: probe changes one at a time, well apart
        driver.probes(null);
        int probe = spi.probe();
        long gap = loneGapMillis(load.bigStreams());
        side.bigLoneGapMillis = gap;
        window(side, "many-streams-lone", target, side.bigLone, BIG_LONE_CHANGES, false, () -> {
            for (int k = 0; k < BIG_LONE_CHANGES; k++) {
                driver.change(probe);
                Thread.sleep(gap);
            }
        });
        world.call(LONG, "fleet-close");
    }

    private static String fmt3(double v) {
        return String.format(java.util.Locale.ROOT, "%.3f", v);
    }

    /**
     * The bridge side of one probe change: from just before {@code accept} until the xDS serving thread has applied the
     * snapshot carrying it (sequence {@code sequence}, handed to the servers just before this is called) and run the
     * flush that application queued ({@code XdsServer.pushed()} is queued right behind the application), which hands
     * the response carrying the change to gRPC for every subscribed stream whose transport is ready; it includes at
     * most 64 of the ACKs queued on the thread before that (the serving thread runs producers' tasks ahead of them,
     * see {@code AdsServer}), not the others. The transport threads write the responses to the sockets after that,
     * and the clients read them; neither is in this figure. Where the server put the application off (a sidecar translation
     * spaced out; never for a changed service), it asks again every 5 ms, for at most 60 s.
     */
    private static void handoff(
            Target target, long sequence, long t0, List<Long> out, long[] cpuThreads, long cpu0, List<Long> cpuOut) {
        target.xdsIdle().thenRun(() -> {
            long now = System.nanoTime();
            if (target.xdsServed().getAsLong() >= sequence) {
                out.add(now - t0);
                // the two threads' CPU meanwhile: what they had to do before the push was out (the bridge's own
                // share of the latency, whatever the wait for a core added)
                if (cpu0 >= 0) cpuOut.add(cpuOf(cpuThreads) - cpu0);
            } else if (now - t0 < TimeUnit.SECONDS.toNanos(60)) {
                CompletableFuture.runAsync(
                        () -> handoff(target, sequence, t0, out, cpuThreads, cpu0, cpuOut),
                        CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS));
            }
        });
    }

    /** The CPU time of these threads together, or -1 when one of them is not found. */
    private static long cpuOf(long[] threads) {
        long sum = 0;
        for (long t : threads) {
            if (t < 0) return -1;
            sum += ThreadCost.THREADS.getThreadCpuTime(t);
        }
        return sum;
    }

    /** The id of the live thread with this name, or -1. */
    private static long threadId(String name) {
        for (java.lang.management.ThreadInfo t :
                ThreadCost.THREADS.getThreadInfo(ThreadCost.THREADS.getAllThreadIds())) {
            if (t != null && t.getThreadName().equals(name)) return t.getThreadId();
        }
        return -1;
    }

    // ------------------------------------------------------------------ ZooKeeper

    /** Starts the ZooKeeper server in the load process and writes the catalog; returns its address. */
    String zookeeper(Results results) throws Exception {
        String address = world.call(LONG, "zk-start").get("address");
        log("ZooKeeper at %s: writing %,d x %d Dubbo providers", address, load.zkServices(), load.zkInstances());
        results.zkWriteMillis = Long.parseLong(world.call(LONG, "zk-write", load.zkServices(), load.zkInstances())
                .get("millis"));
        log("written in %d ms", results.zkWriteMillis);
        return address;
    }

    void zookeeper(Side side, TargetFactory factory, String address) throws Exception {
        ZookeeperCatalog catalog = new ZookeeperCatalog(load.zkServices(), load.zkInstances());
        long endpoints = (long) catalog.services() * catalog.instances();
        long heap0 = Heap.settled();
        try (Target target = factory.create()) {
            RegistryConfig config = zookeeperConfig(address);
            target.aggregator().configureRegistry(config.name(), config.emptyService());
            RegistryStatus status = new RegistryStatus(config.name(), config.type());
            WatcherContext context = new WatcherContext(config, target.aggregator(), status);
            try (RegistryWatcher watcher =
                    RegistriesConfig.loadProviders().get(config.type()).create(config, context)) {
                log("%s: the ZooKeeper watcher reads %,d providers", side.name, endpoints);
                var complete = target.expect(catalog.services(), endpoints);
                IngestWatch watch = new IngestWatch();
                long start = System.nanoTime();
                watcher.start();
                long done;
                try {
                    done = complete.get(limit(side), TimeUnit.MILLISECONDS);
                    target.awaitServed(target.last().sequence(), limit(side));
                } catch (TimeoutException e) {
                    side.zkUnfinished = "ZooKeeper ingest did not finish in " + limit(side) / 1000 + " s";
                    log("%s: %s", side.name, side.zkUnfinished);
                    return;
                }
                side.zkIngestMillis = TimeUnit.NANOSECONDS.toMillis(done - start);
                side.zkServedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                side.zkIngestConditions = watch.stop();
                log("%s: ZooKeeper ingest conditions: %s", side.name, side.zkIngestConditions.describe());
                target.catalogReady();
                side.zkRetainedBytes = Heap.usedAfterGc() - heap0;
                log(
                        "%s: ZooKeeper ingest %d ms, served %d ms, retained %.1f MB",
                        side.name, side.zkIngestMillis, side.zkServedMillis, side.zkRetainedBytes / 1e6);
                if (side.name.startsWith("baseline") && !load.baselineWithClients()) {
                    side.leftOut.add("the ZooKeeper window (its ingest ran)");
                    return;
                }
                side.zk.connect = fleet(side, target, "zk", load.streams(), catalog.services(), catalog.instances(), 3);
                int count = (int) Math.round(load.rate() * load.zkSeconds());
                target.trace(true);
                long skipped0 = status.skippedCount();
                window(side, "zookeeper", target, side.zk, count, false, () -> {
                    world.call(LONG, "zk-changes", load.rate(), load.zkSeconds(), load.probeEvery(), 41);
                    side.zkStages.putAll(awaitCatalog(target, catalog, limit(side)));
                });
                side.zkStages.put("watcher.skipped", Long.toString(status.skippedCount() - skipped0));
                side.zkStages.put(
                        "watcher.lastError", String.valueOf(status.lastError()).replace(' ', '_'));
                zookeeperStages(side, target, catalog);
                target.trace(false);
                world.call(LONG, "fleet-close");
            }
        }
    }

    /** How long after the window's last write the harness waits for its changes to reach the bridge's catalog. */
    static final long CATALOG_WAIT = TimeUnit.SECONDS.toMillis(60);

    /** How long the clients may still receive after the window's report, to tell late deliveries from lost ones. */
    static final long LATE_DRAIN = TimeUnit.SECONDS.toMillis(20);

    /** A change of the window as the load process made it. */
    private record Made(int id, long t0, int service) {}

    private List<Made> made() throws Exception {
        List<Made> out = new ArrayList<>();
        String list = world.call(LONG, "changes-list").getOrDefault("list", "");
        if (list.isEmpty()) return out;
        for (String e : list.split(",")) {
            String[] f = e.split(":");
            out.add(new Made(Integer.parseInt(f[0]), Long.parseLong(f[1]), Integer.parseInt(f[2])));
        }
        return out;
    }

    /**
     * After the window's last write: waits (at most {@link #CATALOG_WAIT}, or the side's limit) until every change
     * of the window has reached the target's catalog (a snapshot handed to its servers held it, {@link
     * Target#trace}), so that the window does not close on changes still on their way through ZooKeeper and the
     * watcher; returns the write-to-catalog figures.
     */
    private Map<String, String> awaitCatalog(Target target, ZookeeperCatalog catalog, long limit) throws Exception {
        List<Made> made = made();
        long written = System.nanoTime();
        long deadline = written + TimeUnit.MILLISECONDS.toNanos(Math.min(limit, CATALOG_WAIT));
        int missing;
        while (true) {
            missing = 0;
            for (Made m : made) if (target.inCatalog(catalog.host(m.service()), m.id()) < 0) missing++;
            if (missing == 0 || System.nanoTime() > deadline) break;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        Map<String, String> out = new java.util.LinkedHashMap<>();
        out.put("changes", Integer.toString(made.size()));
        out.put("catalog.missing", Integer.toString(missing));
        out.put("catalog.waitMs", Long.toString(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - written)));
        List<Long> toCatalog = new ArrayList<>();
        for (Made m : made) {
            long at = target.inCatalog(catalog.host(m.service()), m.id());
            if (at >= 0) toCatalog.add(at - m.t0());
        }
        dev.meshbridge.bench.report.Stats.put(out, "catalog", toCatalog);
        return out;
    }

    /**
     * Where a ZooKeeper write's time goes, and whether what did not arrive is late or lost: after the window's report,
     * the clients' count again {@link #LATE_DRAIN} later; ZooKeeper's own providers of the changed services against
     * what the writes should have left; then the clients' figures from the moment each change reached the bridge's
     * catalog (the servers and the clients' share).
     */
    private void zookeeperStages(Side side, Target target, ZookeeperCatalog catalog) throws Exception {
        Map<String, String> st = side.zkStages;
        double undelivered = Double.parseDouble(side.zk.report.getOrDefault("all.undelivered", "0"));
        if (undelivered > 0) {
            Map<String, String> late = world.call(LONG + LATE_DRAIN, "report", LATE_DRAIN);
            st.put("late.drainMs", Long.toString(LATE_DRAIN));
            st.put("late.undelivered", late.get("all.undelivered"));
            st.put("late.expected", late.get("all.expected"));
        }
        Map<String, String> zk = world.call(LONG, "zk-verify");
        zk.forEach((k, v) -> st.put("zk." + k, v));
        for (Made m : made()) {
            long at = target.inCatalog(catalog.host(m.service()), m.id());
            if (at >= 0) world.retime(m.id(), at);
        }
        Map<String, String> fromCatalog = world.call(LONG, "report", 0);
        for (String k : new String[] {
            "delta.toAll.p50",
            "delta.toAll.p99",
            "all.delivery.p50",
            "all.delivery.p99",
            "all.delivery.max",
            "all.undelivered",
            "all.expected"
        }) {
            if (fromCatalog.containsKey(k)) st.put("fromCatalog." + k, fromCatalog.get(k));
        }
        log("%s: ZooKeeper window stages %s", side.name, st);
    }

    private RegistryConfig zookeeperConfig(String address) throws Exception {
        // the registry's limits sized to the load with the defaults' headroom (20,000 services and 200,000 instances,
        // twice the reference load): limits of exactly the catalog's size refuse every change of the window, since a
        // provider that comes back on a new port is sent next to its old registration for the re-registration window
        // (one instance more than the catalog), and the refused service keeps what it had
        long providers = (long) load.zkServices() * load.zkInstances();
        long headroom = Long.getLong("bench.zkHeadroomPercent", 100);
        String yaml = "registries:\n  - type: zookeeper\n    name: " + ZookeeperCatalog.REGISTRY
                + "\n    addresses: [\"" + address + "\"]\n    zkServicesPath: [/dubbo]\n"
                + "    limits:\n      maxServices: "
                + Math.max(20_000, load.zkServices() + load.zkServices() * headroom / 100) + "\n      maxInstances: "
                + (headroom == 0 ? providers : Math.max(200_000, providers + providers * headroom / 100)) + "\n";
        ConfigNode root = ConfigNode.parse("bench.yaml", yaml);
        List<RegistryConfig> list = RegistriesConfig.parse(root, RegistriesConfig.loadProviders());
        root.finish();
        return list.get(0);
    }
}
