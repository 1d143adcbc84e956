package dev.meshbridge.core.bench;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 2's figures for the aggregator alone: cold ingest of 10,000 services x 10 instances (time, retained heap), and
 * the CPU time and allocation of one single-instance change at 100,000 endpoints against rebuilding the whole
 * catalog. Prints its figures; asserts nothing about time.
 */
@Tag("benchmark")
class AggregatorBenchmark {

    private static final int SERVICES = 10_000;
    private static final int INSTANCES = 10;
    private static final List<ServicePort> PORTS = List.of(new ServicePort("dubbo", 20880, Protocol.DUBBO));

    static ServiceUpsert service(int s, int variant) {
        List<Endpoint> eps = new ArrayList<>(INSTANCES);
        for (int i = 0; i < INSTANCES; i++) {
            Map<String, String> labels = new TreeMap<>();
            labels.put("application", "app-" + (s % 500));
            labels.put("version", "1.0." + (s % 7));
            labels.put("release", "3.3.6");
            labels.put("dubbo", "2.0.2");
            labels.put("revision", "rev-" + (s % 13));
            int w = (i == 0 && variant > 0) ? 100 + variant : 100;
            eps.add(Endpoint.builder("10." + (s >> 8 & 0xff) + "." + (s & 0xff) + "." + (i + 1))
                    .port("dubbo", 20880)
                    .weight(w)
                    .labels(labels)
                    .locality(Locality.of("cn-east", "zone-" + (i % 3)))
                    .build());
        }
        return new ServiceUpsert(
                new ServiceKey("zookeeper", "bench", "", "", "org.bench.Service" + s, ""),
                "org.bench.service" + s + ".dubbo",
                PORTS,
                eps);
    }

    @Test
    void ingestAndSingleChange() throws Exception {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long heapBefore = usedHeap();
        List<ServiceUpsert> events = new ArrayList<>(SERVICES);
        for (int s = 0; s < SERVICES; s++) events.add(service(s, 0));

        ServiceAggregator agg = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS);
        long[] tid = new long[1];
        agg.subscribe(snap -> tid[0] = Thread.currentThread().threadId()).join();
        long t0 = System.nanoTime();
        events.forEach(agg::accept);
        MeshSnapshot snap = agg.flushNow().join();
        long ingestNanos = System.nanoTime() - t0;
        events = null; // the catalog now holds the only references to the endpoints
        long retained = usedHeap() - heapBefore;
        System.out.printf(
                "cold ingest: %d services x %d = %d endpoints in %d ms, retained heap %.1f MB%n",
                snap.serviceCount(), INSTANCES, snap.endpointCount(), ingestNanos / 1_000_000, retained / 1e6);

        // one single-instance change, repeated; CPU and allocation of the aggregator thread per change
        int rounds = 2_000;
        List<ServiceUpsert> changes = new ArrayList<>(rounds);
        for (int r = 0; r < rounds; r++) changes.add(service((r * 7919) % SERVICES, r + 1));
        for (int r = 0; r < 200; r++) {
            agg.accept(changes.get(r));
            agg.flushNow().join();
        }
        long cpu0 = threads.getThreadCpuTime(tid[0]);
        long alloc0 = threads.getThreadAllocatedBytes(tid[0]);
        long[] wall = new long[rounds - 200];
        for (int r = 200; r < rounds; r++) {
            long w0 = System.nanoTime();
            agg.accept(changes.get(r));
            agg.flushNow().join();
            wall[r - 200] = System.nanoTime() - w0;
        }
        long n = rounds - 200;
        double cpuPerChange = (threads.getThreadCpuTime(tid[0]) - cpu0) / (double) n;
        double allocPerChange = (threads.getThreadAllocatedBytes(tid[0]) - alloc0) / (double) n;
        Arrays.sort(wall);
        System.out.printf(
                "one instance change at %d endpoints: aggregator CPU %.1f us, allocated %.1f KB; event->snapshot wall p50 %.1f us p99 %.1f us%n",
                snap.endpointCount(),
                cpuPerChange / 1e3,
                allocPerChange / 1e3,
                wall[wall.length / 2] / 1e3,
                wall[wall.length * 99 / 100] / 1e3);

        // the alternative: rebuild the whole catalog for every change (what a full-snapshot control plane does)
        ServiceAggregator rebuild = new ServiceAggregator(new ServiceAggregator.Options(Duration.ZERO, Duration.ZERO));
        long[] rtid = new long[1];
        rebuild.subscribe(s -> rtid[0] = Thread.currentThread().threadId()).join();
        List<ServiceUpsert> all = new ArrayList<>(SERVICES);
        for (int s = 0; s < SERVICES; s++) all.add(service(s, 1));
        long rcpu0 = threads.getThreadCpuTime(rtid[0]);
        long ralloc0 = threads.getThreadAllocatedBytes(rtid[0]);
        all.forEach(rebuild::accept);
        rebuild.flushNow().join();
        double rcpu = threads.getThreadCpuTime(rtid[0]) - rcpu0;
        double ralloc = threads.getThreadAllocatedBytes(rtid[0]) - ralloc0;
        System.out.printf(
                "rebuilding all %d services once: CPU %.1f ms, allocated %.1f MB (%.0fx the CPU of one incremental change)%n",
                SERVICES, rcpu / 1e6, ralloc / 1e6, rcpu / cpuPerChange);
        agg.close();
        rebuild.close();
    }

    private static long usedHeap() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.onSpinWait();
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}
