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

    void spi(Side side, TargetFactory factory) throws Exception {
        List<ServiceUpsert> upserts = new ArrayList<>(load.services());
        for (int i = 0; i < load.services(); i++) upserts.add(spi.upsert(i));
        long heap0 = Heap.settled();
        try (Target target = factory.create()) {
            log("%s: cold ingest of %,d x %d through the SPI", side.name, load.services(), load.instances());
            var complete = target.expect(load.services(), load.endpoints());
            long start = System.nanoTime();
            for (ServiceUpsert u : upserts) target.aggregator().accept(u);
            long done = complete.get(LONG, TimeUnit.MILLISECONDS);
            side.ingestMillis = TimeUnit.NANOSECONDS.toMillis(done - start);
            target.awaitServed(target.last().sequence(), LONG);
            side.servedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            target.catalogReady();
            upserts.clear();
            side.retainedBytes = Heap.usedAfterGc() - heap0;
            log(
                    "%s: first complete snapshot %d ms, served %d ms, retained %.1f MB",
                    side.name, side.ingestMillis, side.servedMillis, side.retainedBytes / 1e6);

            changeCost(side, target);
            steady(side, target);
            if (target.mcpPort() > 0) singleChangesSeenByIstiod(side, target);
            reconnect(side);
            world.call(LONG, "mcp-close");
            world.call(LONG, "fleet-close");
            manyStreams(side, target);
        }
    }

    /**
     * Warms the code up (changes in bursts, as a running bridge has seen many), then measures single changes, each
     * published and applied before the next, with nobody connected.
     */
    private void changeCost(Side side, Target target) throws Exception {
        boolean bridge = side.name.equals("bridge");
        int n = bridge ? load.changeCostChanges() : load.baselineChangeCostChanges();
        SpiDriver driver = new SpiDriver(spi, target.aggregator(), null, this::quietId, 17);
        side.warmUpChanges = bridge ? load.warmUpChanges() : n;
        log(
                "%s: %d changes to warm up, then %d single changes and %d in bursts of %d measured, no client",
                side.name, side.warmUpChanges, n, n, BURST);
        for (int k = 0; k < side.warmUpChanges; k += 50) {
            for (int j = 0; j < 50; j++) driver.change(driver.randomService());
            target.settle(LONG);
        }
        long snapshots0 = target.last().sequence();
        JfrProfile recording = bridge ? new JfrProfile(work.resolve(side.name + "-single-changes.jfr")) : null;
        ThreadCost before = ThreadCost.now();
        for (int k = 0; k < n; k++) oneAtATime(target, driver);
        ThreadCost after = ThreadCost.now();
        if (recording != null) side.changeProfile = recording.stop();
        side.changeCount = n;
        side.snapshots = target.last().sequence() - snapshots0;
        side.changeCost = after.since(before);
        side.changeProcessCpu = after.processCpuSince(before);

        before = ThreadCost.now();
        for (int k = 0; k < n; k += BURST) {
            for (int j = 0; j < BURST; j++) driver.change(driver.randomService());
            target.settle(LONG);
        }
        side.burstCost = ThreadCost.now().since(before);
    }

    private int quietId() {
        return 1 + quietIds.getAndIncrement() % (QUIET_IDS - 1);
    }

    private void oneAtATime(Target target, SpiDriver driver) throws Exception {
        long previous = target.last().sequence();
        driver.change(driver.randomService());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (target.last().sequence() <= previous) {
            if (System.nanoTime() > deadline) throw new TimeoutException("no snapshot after a change");
            LockSupport.parkNanos(100_000);
        }
        target.awaitServed(target.last().sequence(), LONG);
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
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONNECT_LIMIT);
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
        if (!stopped.isEmpty()) out.put("stopped", stopped);
        log("%s: fleet %s", side.name, out);
        return out;
    }

    /** A window of changes with the fleet connected: what the clients saw and what this JVM spent. */
    private void window(
            Side side, String label, Target target, Side.Window w, int changes, boolean profile, Changes make)
            throws Exception {
        world.call(LONG, "arm");
        log("%s: %s window, %d changes at %.0f/s", side.name, label, changes, load.rate());
        JfrProfile recording = profile ? new JfrProfile(work.resolve(side.name + "-" + label + ".jfr")) : null;
        w.loadBefore = Machine.currentLoadAverage();
        ThreadCost before = ThreadCost.now();
        make.make();
        target.settle(LONG);
        ThreadCost after = ThreadCost.now();
        w.loadAfter = Machine.currentLoadAverage();
        if (recording != null) w.profile = recording.stop();
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
     * The steady window with the ADS fleet (like for like with the baseline), then, for the bridge, the same window
     * with the istiod-like client connected too.
     */
    private void steady(Side side, Target target) throws Exception {
        side.steady.connect = fleet(side, target, "spi", load.streams(), load.services(), load.instances(), 1);
        int count = (int) Math.round(load.rate() * load.steadySeconds());
        SpiDriver driver = new SpiDriver(spi, target.aggregator(), world, timedIds::getAndIncrement, 23);
        window(
                side,
                "steady",
                target,
                side.steady,
                count,
                true,
                () -> driver.run(load.rate(), count, load.probeEvery()));
        if (target.mcpPort() > 0) {
            side.mcpConnect = world.call(LONG, "mcp", target.mcpPort(), load.services(), LONG);
            log("%s: istiod-like client %s", side.name, side.mcpConnect);
            side.steadyIstiod.connect = side.steady.connect;
            window(
                    side,
                    "steady-with-istiod",
                    target,
                    side.steadyIstiod,
                    count,
                    true,
                    () -> driver.run(load.rate(), count, load.probeEvery()));
        }
    }

    private void singleChangesSeenByIstiod(Side side, Target target) throws Exception {
        log("%s: %d single changes, ServiceEntry versions istiod sees change", side.name, load.mcpChanges());
        int total = quietMcp();
        SpiDriver driver = new SpiDriver(spi, target.aggregator(), null, timedIds::getAndIncrement, 29);
        for (int k = 0; k < load.mcpChanges(); k++) {
            driver.change(driver.randomService());
            Map<String, String> r = world.call(LONG, "mcp-wait", total + 1, 30_000);
            side.mcpChanged.add(Integer.parseInt(r.get("changed")));
            side.mcpResources.add(Integer.parseInt(r.get("resources")));
            side.mcpBytes.add(Integer.parseInt(r.get("bytes")));
            total = quietMcp();
        }
    }

    /** Waits until the istiod-like client stopped receiving ServiceEntry responses; returns how many it had. */
    private int quietMcp() throws Exception {
        int last = -1;
        while (true) {
            int now = Integer.parseInt(world.call(LONG, "mcp-stats", 0).get("total"));
            if (now == last) return now;
            last = now;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
        }
    }

    private void reconnect(Side side) throws Exception {
        log("%s: %,d clients reconnect at once", side.name, load.streams());
        side.reconnect = world.call(LONG + RECONNECT_LIMIT, "reconnect", RECONNECT_LIMIT);
        log("%s: reconnect %s", side.name, side.reconnect);
    }

    private void manyStreams(Side side, Target target) throws Exception {
        side.heapBeforeBig = Heap.settled();
        side.big.connect = fleet(side, target, "spi", load.bigStreams(), load.services(), load.instances(), 2);
        side.heapWithBig = Heap.usedAfterGc();
        side.rssWithBig = Machine.rss();
        int count = (int) Math.round(load.rate() * load.bigSeconds());
        SpiDriver driver = new SpiDriver(spi, target.aggregator(), world, timedIds::getAndIncrement, 31);
        window(
                side,
                "many-streams",
                target,
                side.big,
                count,
                side.name.equals("bridge"),
                () -> driver.run(load.rate(), count, load.probeEvery()));
        world.call(LONG, "fleet-close");
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
            WatcherContext context =
                    new WatcherContext(config, target.aggregator(), new RegistryStatus(config.name(), config.type()));
            try (RegistryWatcher watcher =
                    RegistriesConfig.loadProviders().get(config.type()).create(config, context)) {
                log("%s: the ZooKeeper watcher reads %,d providers", side.name, endpoints);
                var complete = target.expect(catalog.services(), endpoints);
                long start = System.nanoTime();
                watcher.start();
                long done = complete.get(LONG, TimeUnit.MILLISECONDS);
                side.zkIngestMillis = TimeUnit.NANOSECONDS.toMillis(done - start);
                target.awaitServed(target.last().sequence(), LONG);
                side.zkServedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                target.catalogReady();
                side.zkRetainedBytes = Heap.usedAfterGc() - heap0;
                log(
                        "%s: ZooKeeper ingest %d ms, served %d ms, retained %.1f MB",
                        side.name, side.zkIngestMillis, side.zkServedMillis, side.zkRetainedBytes / 1e6);
                side.zk.connect = fleet(side, target, "zk", load.streams(), catalog.services(), catalog.instances(), 3);
                int count = (int) Math.round(load.rate() * load.zkSeconds());
                window(
                        side,
                        "zookeeper",
                        target,
                        side.zk,
                        count,
                        false,
                        () -> world.call(LONG, "zk-changes", load.rate(), load.zkSeconds(), load.probeEvery(), 41));
                world.call(LONG, "fleet-close");
            }
        }
    }

    private static RegistryConfig zookeeperConfig(String address) throws Exception {
        String yaml = "registries:\n  - type: zookeeper\n    name: " + ZookeeperCatalog.REGISTRY
                + "\n    addresses: [\"" + address + "\"]\n    zkServicesPath: [/dubbo]\n";
        ConfigNode root = ConfigNode.parse("bench.yaml", yaml);
        List<RegistryConfig> list = RegistriesConfig.parse(root, RegistriesConfig.loadProviders());
        root.finish();
        return list.get(0);
    }
}
