package dev.meshbridge.app;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports when what the bridge keeps (the heap in use right after a garbage collection: the catalog, the served
 * resources, the clients' subscriptions) passes a share of the maximum heap, before an OutOfMemoryError would. It
 * watches the JVM's own collection-usage thresholds of the heap pools, so it costs nothing between collections.
 *
 * <p>When the share is passed: one WARN (again only after usage went back under it), the counter {@code
 * meshbridge.heap.budget.exceeded}, and the gauge {@code meshbridge.heap.retained.ratio} (heap after the last
 * collection over the maximum) shows it. An OutOfMemoryError that still happens ends the JVM ({@code
 * -XX:+ExitOnOutOfMemoryError} in the launcher and the image), so an orchestrator restarts it.
 */
final class HeapBudget implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HeapBudget.class);

    private final double share;
    private final List<MemoryPoolMXBean> pools = new ArrayList<>();
    private final Counter exceeded;
    private final AtomicLong lastWarned = new AtomicLong();
    private final NotificationListener listener = (n, handback) -> {
        if (MemoryNotificationInfo.MEMORY_COLLECTION_THRESHOLD_EXCEEDED.equals(n.getType())) over();
    };

    /** @param share the share of the maximum heap (0 to 1) that retained state may use before it is reported */
    HeapBudget(double share, MeterRegistry registry) {
        this.share = share;
        this.exceeded = Counter.builder("meshbridge.heap.budget.exceeded")
                .description("times the heap in use after a garbage collection passed admin.heapBudgetPercent")
                .register(registry);
        Gauge.builder("meshbridge.heap.retained.ratio", this, HeapBudget::retainedRatio)
                .description("heap in use after the last garbage collection, over the maximum heap")
                .register(registry);
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() != MemoryType.HEAP || !p.isCollectionUsageThresholdSupported()) continue;
            long max = p.getUsage().getMax();
            if (max <= 0) continue; // a pool with no own maximum (G1 eden, survivor): the old pool holds what stays
            p.setCollectionUsageThreshold(Math.max(1, (long) (max * share)));
            pools.add(p);
        }
        if (ManagementFactory.getMemoryMXBean() instanceof NotificationEmitter e) {
            e.addNotificationListener(listener, null, null);
        }
    }

    /** Heap in use after the last collection of the watched pools, over their maximum (0 before any collection). */
    double retainedRatio() {
        long used = 0;
        long max = 0;
        for (MemoryPoolMXBean p : pools) {
            MemoryUsage u = p.getCollectionUsage();
            if (u == null) continue;
            used += u.getUsed();
            max += Math.max(0, u.getMax());
        }
        return max == 0 ? 0 : (double) used / max;
    }

    private void over() {
        exceeded.increment();
        long now = System.nanoTime();
        long last = lastWarned.get();
        if (last != 0 && now - last < 60_000_000_000L) return; // at most one line a minute
        if (!lastWarned.compareAndSet(last, now)) return;
        long max = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax();
        log.warn(
                "heap after garbage collection is {}% of the maximum heap ({} MB), past admin.heapBudgetPercent={}:"
                        + " the bridge is near an OutOfMemoryError. Give it more heap (-Xmx, MaxRAMPercentage) or"
                        + " lower what clients may hold (xds.limits, mcp.limits, registry limits)",
                Math.round(retainedRatio() * 100), max >> 20, Math.round(share * 100));
    }

    @Override
    public void close() {
        if (ManagementFactory.getMemoryMXBean() instanceof NotificationEmitter e) {
            try {
                e.removeNotificationListener(listener);
            } catch (javax.management.ListenerNotFoundException ignored) {
                // not added
            }
        }
    }
}
