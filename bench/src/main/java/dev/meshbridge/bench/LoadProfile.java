package dev.meshbridge.bench;

/**
 * The size of a run.
 *
 * @param name {@code full} (issue 9's reference load), {@code quick} or {@code smoke}
 * @param services services of the SPI catalog
 * @param instances instances per service
 * @param streams ADS streams of the fleet (half Delta, half SotW), also the reconnect storm
 * @param bigStreams streams of the "many streams" run
 * @param rate instance changes per second during the measured windows
 * @param steadySeconds length of the steady window with {@code streams}
 * @param bigSeconds length of the window with {@code bigStreams}
 * @param probeEvery every n-th change goes to the probe service, to which every stream subscribes
 * @param warmUpChanges changes (50 to a snapshot) before the bridge's costs are measured, so the JIT has compiled
 *     the paths of a change as in a bridge that has run for a while
 * @param changeCostChanges changes, one at a time, whose CPU and allocation are measured with no client (bridge)
 * @param baselineChangeCostChanges the same for the baseline
 * @param mcpChanges changes, one at a time, after which the ServiceEntry versions istiod holds are compared
 * @param zkServices services written into ZooKeeper
 * @param zkInstances providers per service in ZooKeeper
 * @param zkSeconds length of the window of ZooKeeper writes
 * @param jmh whether to run the JMH part
 * @param jmhIterationMillis warm-up and measurement iterations of JMH
 * @param worldHeap heap of the load process
 * @param drainMillis how long the clients may still receive after a window's last change
 * @param pairs pairs of interleaved steady windows (bridge, baseline, bridge, baseline...) and of interleaved blocks
 *     of single changes
 * @param pairSeconds length of each interleaved steady window
 * @param baselineLimitMillis see {@link #baselineLimit()}
 * @param baselineWithClients whether the baseline also runs the phases with a client fleet (the steady windows, the
 *     reconnect storm, many streams, the ZooKeeper window); without, it runs its cold ingests and the single changes
 *     only (see {@link #huge()})
 * @param connectLimitMillis how long a fleet may take to connect before its window starts with whatever is connected
 */
record LoadProfile(
        String name,
        int services,
        int instances,
        int streams,
        int bigStreams,
        double rate,
        double steadySeconds,
        double bigSeconds,
        int probeEvery,
        int warmUpChanges,
        int changeCostChanges,
        int baselineChangeCostChanges,
        int mcpChanges,
        int zkServices,
        int zkInstances,
        double zkSeconds,
        boolean jmh,
        int jmhIterationMillis,
        String worldHeap,
        long drainMillis,
        int pairs,
        double pairSeconds,
        long baselineLimitMillis,
        boolean baselineWithClients,
        long connectLimitMillis) {

    static LoadProfile full() {
        return new LoadProfile(
                "full",
                10_000,
                10,
                1_000,
                5_000,
                50,
                30,
                20,
                25,
                10_000,
                1_000,
                60,
                20,
                10_000,
                10,
                30,
                true,
                1000,
                "4g",
                3000,
                6,
                5,
                0,
                true,
                Bench.CONNECT_LIMIT);
    }

    static LoadProfile quick() {
        return new LoadProfile(
                "quick",
                2_000,
                10,
                200,
                1_000,
                50,
                10,
                8,
                25,
                3_000,
                300,
                30,
                10,
                2_000,
                10,
                10,
                true,
                300,
                "2g",
                2000,
                5,
                3,
                0,
                true,
                Bench.CONNECT_LIMIT);
    }

    /** A tiny load that checks the harness end to end in seconds (the module's test). */
    static LoadProfile smoke() {
        return new LoadProfile(
                "smoke",
                30,
                4,
                6,
                10,
                50,
                1.5,
                1,
                10,
                100,
                20,
                5,
                3,
                30,
                4,
                1.5,
                false,
                100,
                "512m",
                500,
                2,
                1,
                0,
                true,
                Bench.CONNECT_LIMIT);
    }

    /**
     * Ten times the reference load: 100,000 services x 10 (a million endpoints), 1,000 streams, 10,000 streams (issue
     * 22's goals); no JMH (the default run has it). The bridge JVM needs a larger heap ({@code bench/run --huge} asks
     * for 8 GB: both sides' catalogs are held at once during the single-change blocks).
     *
     * <p>The baseline runs its cold ingests and the single-change blocks, and is left out of every phase with clients:
     * java-control-plane's ADS Delta server treats CDS and LDS as wildcard whatever a client subscribes to, so each of
     * its Delta streams would receive all 100,000 clusters (tens of MB) on connecting and again as they change; on
     * these 2 cores parsing that swamps the clients' JVM and every latency measured then is the clients', not a
     * server's (the first attempt connected 50 of 1,000 baseline streams in 90 s and stretched the bridge's 3 s window
     * to 79 s). Its rebuild of a whole snapshot per change also takes longer at this size than the 20 ms between two
     * changes of the steady load. A fleet may take 4 minutes to connect here (10,000 streams).
     *
     * <p>The many-streams window runs 60 s: at 50 changes/s with every 25th to the probe that is 120 changes to all
     * 10,000 streams, so their p99 is the second slowest. With the 40 of a 20 s window the nearest-rank p99 was the
     * slowest one, and it moved from 433 to 1,636 ms between runs of the same code.
     */
    static LoadProfile huge() {
        return new LoadProfile(
                "huge", 100_000, 10, 1_000, 10_000, 50, 30, 60, 25, 10_000, 1_000, 20, 10, 100_000, 10, 20, false, 1000,
                "5g", 3000, 3, 3, 240_000, false, 240_000);
    }

    /**
     * How long any one wait on the java-control-plane baseline may take (its ingest, a change applied, a window
     * settled) before the harness stops it, reports "did not finish in N s" and goes on with the bridge alone; 0: the
     * harness's general limit (10 minutes). At a million endpoints the baseline rebuilds a whole snapshot per change
     * and sends every cluster to every Delta stream, and an unbounded run never ended.
     */
    long baselineLimit() {
        return baselineLimitMillis > 0 ? baselineLimitMillis : Bench.LONG;
    }

    long endpoints() {
        return (long) services * instances;
    }

    /** This profile with another stream count and window length for the many-streams phase (0: unchanged). */
    LoadProfile withBigStreams(int streams, double seconds) {
        return new LoadProfile(
                name,
                services,
                instances,
                this.streams,
                streams > 0 ? streams : bigStreams,
                rate,
                steadySeconds,
                seconds > 0 ? seconds : bigSeconds,
                probeEvery,
                warmUpChanges,
                changeCostChanges,
                baselineChangeCostChanges,
                mcpChanges,
                zkServices,
                zkInstances,
                zkSeconds,
                jmh,
                jmhIterationMillis,
                worldHeap,
                drainMillis,
                pairs,
                pairSeconds,
                baselineLimitMillis,
                baselineWithClients,
                connectLimitMillis);
    }
}
