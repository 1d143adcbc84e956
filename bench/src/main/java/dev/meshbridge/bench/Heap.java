package dev.meshbridge.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;

/** Heap in use after full collections: what a data structure retains. */
final class Heap {

    private Heap() {}

    /** The old generation's occupancy after the last collection, as a share of the heap's maximum. */
    static double oldGenAfterGcShare() {
        long max = Runtime.getRuntime().maxMemory();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getName().contains("Old")) {
                MemoryUsage u = pool.getCollectionUsage();
                if (u != null) return u.getUsed() / (double) max;
            }
        }
        return 0;
    }

    /**
     * The heap in use once what the previous phase left behind is gone: a closed server's threads, buffers and
     * connections are released over the next moments, and a baseline taken before that would count them against the
     * next phase. Measures every 250 ms until two readings in a row drop by less than 1 MB (at most 15 s).
     */
    static long settled() {
        long last = usedAfterGc();
        int steady = 0;
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (steady < 2 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            long now = usedAfterGc();
            steady = last - now < 1_000_000 ? steady + 1 : 0;
            last = Math.min(last, now);
        }
        return last;
    }

    /**
     * One full collection, before a measured block of single changes: the baseline's changes leave gigabytes of
     * garbage at a million endpoints, and a block that starts while the collector works through them (a concurrent
     * cycle, the write barriers it arms) pays for the other side's garbage: 0.22 to 1.23 ms per change against 0.25
     * ms alone (issue 22, bench/README.md). Neither side's block runs in a collection the other's garbage started
     * this way; the rest of that gap stays (the fourteenth session measured it with this collection in place).
     */
    static void collect() {
        System.gc();
    }

    static long usedAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            best = Math.min(best, memory.getHeapMemoryUsage().getUsed());
        }
        return best;
    }
}
