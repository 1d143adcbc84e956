package dev.meshbridge.bench;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time and allocated bytes per thread group of this JVM between two points ({@code com.sun.management
 * .ThreadMXBean}), plus the process CPU (which also counts the JIT and GC threads the MXBean does not show).
 */
final class ThreadCost {

    static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** CPU nanoseconds and allocated bytes. */
    record Cost(long cpu, long allocated) {
        Cost plus(Cost o) {
            return new Cost(cpu + o.cpu, allocated + o.allocated);
        }
    }

    private final Map<Long, String> names = new HashMap<>();
    private final Map<Long, Cost> at = new HashMap<>();
    private final long processCpu;
    private final long wall;

    private ThreadCost() {
        long[] ids = THREADS.getAllThreadIds();
        long[] cpu = THREADS.getThreadCpuTime(ids);
        long[] alloc = THREADS.getThreadAllocatedBytes(ids);
        var infos = THREADS.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            if (infos[i] == null || cpu[i] < 0) continue;
            names.put(ids[i], infos[i].getThreadName());
            at.put(ids[i], new Cost(cpu[i], Math.max(0, alloc[i])));
        }
        processCpu = OS.getProcessCpuTime();
        wall = System.nanoTime();
    }

    static ThreadCost now() {
        return new ThreadCost();
    }

    /** The group a thread belongs to, by its name. */
    static String group(String name) {
        if (name.equals("meshbridge-aggregator")) return "aggregator";
        if (name.equals("meshbridge-xds")) return "xds";
        if (name.equals("meshbridge-mcp")) return "mcp";
        if (name.startsWith("meshbridge-zk")
                || name.contains("EventThread")
                || name.contains("SendThread")
                || name.startsWith("Curator")) return "zk-watcher";
        // the servers' own Netty event loops are named meshbridge-<server>-io-<n> and meshbridge-<server>-accept-<n>
        if (name.startsWith("grpc-")
                || name.contains("ELG")
                || (name.startsWith("meshbridge-") && (name.contains("-io-") || name.contains("-accept-"))))
            return "grpc-transport";
        if (name.equals("bench-baseline-producer")) return "baseline";
        if (name.startsWith("bench-") || name.equals("main")) return "harness";
        return "other";
    }

    /** Cost per group since {@code before}; threads that started in between count from zero. */
    Map<String, Cost> since(ThreadCost before) {
        Map<String, Cost> out = new TreeMap<>();
        at.forEach((id, c) -> {
            Cost b = before.at.getOrDefault(id, new Cost(0, 0));
            Cost d = new Cost(Math.max(0, c.cpu - b.cpu), Math.max(0, c.allocated - b.allocated));
            out.merge(group(names.get(id)), d, Cost::plus);
        });
        return out;
    }

    long processCpuSince(ThreadCost before) {
        return processCpu - before.processCpu;
    }

    long wallSince(ThreadCost before) {
        return wall - before.wall;
    }

    /** Sum of the named groups. */
    static Cost sum(Map<String, Cost> costs, String... groups) {
        Cost total = new Cost(0, 0);
        for (String g : groups) total = total.plus(costs.getOrDefault(g, new Cost(0, 0)));
        return total;
    }

    static Map<String, String> describe(Map<String, Cost> costs, long divisor) {
        Map<String, String> out = new LinkedHashMap<>();
        costs.forEach((g, c) -> out.put(
                g,
                String.format(
                        java.util.Locale.ROOT,
                        "%.3f ms CPU, %.1f KB",
                        c.cpu / 1e6 / divisor,
                        c.allocated / 1024.0 / divisor)));
        return out;
    }
}
