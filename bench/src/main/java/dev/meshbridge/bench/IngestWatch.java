package dev.meshbridge.bench;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * What the machine and this JVM did while a cold ingest ran, so that an ingest figure can be read against its
 * conditions: at 1,000,000 endpoints a cold ingest is some 40 s of CPU (translation on the xDS and MCP threads, and the
 * young collections that copy the catalog being built, every thread stopped meanwhile), so on 2 shared cores the same
 * code measures far slower when other work runs.
 */
final class IngestWatch {

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private final String loadBefore = Machine.currentLoadAverage();
    private final long[] ticks = Machine.cpuTicks();
    private final long[] gc = Machine.gc();
    private final long cpu = OS.getProcessCpuTime();
    private final long start = System.nanoTime();

    /**
     * The conditions of one ingest.
     *
     * @param machineBusy the share of both cores busy (every process, {@code /proc/stat}), or -1 when unknown
     * @param gcCount this JVM's collections during the ingest
     * @param gcMillis their time (GarbageCollectorMXBean: G1's pauses)
     * @param processCpuMillis this JVM's CPU (every thread, JIT and GC included)
     */
    record Conditions(
            String loadBefore,
            String loadAfter,
            double machineBusy,
            long gcCount,
            long gcMillis,
            long processCpuMillis,
            long wallMillis) {

        /** One line for the log, the raw values and the results' notes. */
        String describe() {
            return String.format(
                    Locale.ROOT,
                    "load average %s at start, %s at end; machine %s busy; this JVM %.1f s of CPU over %.1f s (%.2f"
                            + " cores); %d collections, %.1f s in GC",
                    loadBefore,
                    loadAfter,
                    machineBusy < 0 ? "?" : String.format(Locale.ROOT, "%.0f%%", 100 * machineBusy),
                    processCpuMillis / 1e3,
                    wallMillis / 1e3,
                    wallMillis <= 0 ? 0.0 : processCpuMillis / (double) wallMillis,
                    gcCount,
                    gcMillis / 1e3);
        }
    }

    /** From the watch's creation until now. */
    Conditions stop() {
        long[] gcAfter = Machine.gc();
        return new Conditions(
                loadBefore,
                Machine.currentLoadAverage(),
                Bench.busy(ticks, Machine.cpuTicks()),
                gcAfter[0] - gc[0],
                gcAfter[1] - gc[1],
                (OS.getProcessCpuTime() - cpu) / 1_000_000,
                (System.nanoTime() - start) / 1_000_000);
    }
}
