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
