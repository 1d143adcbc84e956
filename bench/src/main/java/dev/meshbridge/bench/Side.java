package dev.meshbridge.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Everything measured on one side (the bridge, or the baseline) of a run; filled in as the phases go. */
final class Side {

    /** A window of changes with clients connected: what they saw, and what it cost this JVM. */
    static final class Window {
        Map<String, String> connect = new LinkedHashMap<>();
        Map<String, String> report = new LinkedHashMap<>();
        Map<String, ThreadCost.Cost> cost = new LinkedHashMap<>();
        long processCpu;
        long wall;
        int changes;
        JfrProfile.Summary profile;
        /** The machine's load averages when the window began and ended. */
        String loadBefore = "?";

        String loadAfter = "?";

        /** The share of the whole machine (every core, every process) that was busy in the window, 0 to 1. */
        double machineBusy = -1;

        /** This JVM's garbage collections in the window, and the time they took (G1: mostly concurrent work too). */
        long gcCount;

        long gcMillis;

        boolean measured() {
            return !report.isEmpty();
        }

        /** The share of the machine's cores this JVM used in the window. */
        double cores() {
            return processCpu / (double) Math.max(1, wall);
        }

        /** Adds another window's costs, CPU, time and changes to this one (a side's windows pooled). */
        void add(Window w) {
            w.cost.forEach((g, c) -> cost.merge(g, c, ThreadCost.Cost::plus));
            processCpu += w.processCpu;
            gcCount += w.gcCount;
            gcMillis += w.gcMillis;
            wall += w.wall;
            changes += w.changes;
            if (profile == null) profile = w.profile;
            if (loadBefore.equals("?")) loadBefore = w.loadBefore;
            loadAfter = w.loadAfter;
        }
    }

    /**
     * A block of single changes, no client, in the interleaved cost measurement: per change CPU and allocation of the
     * side's change threads, and how busy the machine was.
     */
    record Block(int changes, ThreadCost.Cost perChange, double machineBusy, String load) {}

    /** The interleaved steady windows of this side, in order (window k of the bridge pairs with window k of the baseline). */
    final List<Window> windows = new ArrayList<>();

    /** The interleaved blocks of single changes, in order. */
    final List<Block> blocks = new ArrayList<>();

    /**
     * The bridge's blocks of single changes measured alone in the JVM, before the baseline ingested anything (the
     * goal's figure), in order; their cost per thread group, and how many changes they made.
     */
    final List<Block> aloneBlocks = new ArrayList<>();

    Map<String, ThreadCost.Cost> aloneCost = new LinkedHashMap<>();
    int aloneCount;

    final String name;
    /** Null while the side runs; else what it did not finish in time (it was stopped there, see {@link Bench}). */
    String unfinished;
    /** Null, or the ZooKeeper ingest it did not finish in time. */
    String zkUnfinished;

    /** Phases this side was deliberately left out of (the load says why), for the results file. */
    final List<String> leftOut = new ArrayList<>();

    // cold ingest through the SPI
    long ingestMillis = -1;
    long servedMillis = -1;
    long retainedBytes = -1;
    /** The machine's load, this JVM's CPU and its collections while the SPI ingest ran; null until measured. */
    IngestWatch.Conditions ingestConditions;

    // one change at a time, no client
    int warmUpChanges;
    int changeCount;
    long snapshots;
    Map<String, ThreadCost.Cost> changeCost = new LinkedHashMap<>();
    /** The same number of changes, ten to a snapshot. */
    Map<String, ThreadCost.Cost> burstCost = new LinkedHashMap<>();
    /**
     * The same number of single changes back to back (the bridge only): each published at once ({@code flushNow}) and
     * applied before the next, with no pause, as {@code ChangeCostMain} and the growth sweep measure them.
     */
    Map<String, ThreadCost.Cost> backToBackCost = new LinkedHashMap<>();

    long changeProcessCpu;
    JfrProfile.Summary changeProfile;

    final Window steady = new Window();
    /** The same window with the istiod-like client connected too (the bridge only: the baseline serves no MCP). */
    final Window steadyIstiod = new Window();

    Map<String, String> mcpConnect = new LinkedHashMap<>();

    // ServiceEntries after single changes
    final List<Integer> mcpChanged = new ArrayList<>();
    final List<Integer> mcpResources = new ArrayList<>();
    final List<Integer> mcpBytes = new ArrayList<>();

    Map<String, String> reconnect = new LinkedHashMap<>();

    final Window big = new Window();
    /** The same streams, then probe changes one at a time and nothing else: one change to all, alone. */
    final Window bigLone = new Window();

    long bigLoneGapMillis;

    long heapBeforeBig = -1;
    long heapWithBig = -1;
    long rssWithBig = -1;

    // ZooKeeper
    long zkIngestMillis = -1;
    long zkServedMillis = -1;
    long zkRetainedBytes = -1;
    /** The same as {@link #ingestConditions}, for the ZooKeeper ingest. */
    IngestWatch.Conditions zkIngestConditions;

    final Window zk = new Window();
    /** Where the ZooKeeper window's time went (see {@code Bench.zookeeperStages}). */
    final Map<String, String> zkStages = new LinkedHashMap<>();

    Side(String name) {
        this.name = name;
    }

    /** A per-change cost of the named groups, changes one at a time, or null when nothing was measured. */
    ThreadCost.Cost perChange(String... groups) {
        return perChange(changeCost, groups);
    }

    /**
     * The same, measured alone in the JVM ({@link #aloneBlocks}) when it was; else the alternating blocks' ({@link
     * #perChange}).
     */
    ThreadCost.Cost perChangeAlone(String... groups) {
        if (aloneCount == 0 || aloneCost.isEmpty()) return perChange(groups);
        ThreadCost.Cost sum = ThreadCost.sum(aloneCost, groups);
        return new ThreadCost.Cost(sum.cpu() / aloneCount, sum.allocated() / aloneCount);
    }

    /** The same, changes in bursts. */
    ThreadCost.Cost perChangeInBursts(String... groups) {
        return perChange(burstCost, groups);
    }

    /** The same, single changes back to back (see {@link #backToBackCost}). */
    ThreadCost.Cost perChangeBackToBack(String... groups) {
        return perChange(backToBackCost, groups);
    }

    private ThreadCost.Cost perChange(Map<String, ThreadCost.Cost> costs, String... groups) {
        if (changeCount == 0 || costs.isEmpty()) return null;
        ThreadCost.Cost sum = ThreadCost.sum(costs, groups);
        return new ThreadCost.Cost(sum.cpu() / changeCount, sum.allocated() / changeCount);
    }
}
