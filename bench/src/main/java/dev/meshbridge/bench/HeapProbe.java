package dev.meshbridge.bench;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.mcp.McpOptions;
import dev.meshbridge.mcp.McpServer;
import dev.meshbridge.xds.XdsOptions;
import dev.meshbridge.xds.XdsServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A diagnostic: ingests the synthetic catalog cold into the bridge (the growth sweep's bridge side), prints the time
 * until served and the retained heap, then holds the catalog for {@code hold} seconds so that {@code jcmd <pid>
 * GC.class_histogram} can say where the bytes are. Usage: {@code HeapProbe <services> [instances] [holdSeconds]}.
 */
public final class HeapProbe {

    private HeapProbe() {}

    public static void main(String[] args) throws Exception {
        int services = Integer.parseInt(args[0]);
        int instances = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int hold = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        long heap0 = Heap.settled();
        SyntheticCatalog catalog = new SyntheticCatalog(services, instances);
        List<ServiceUpsert> upserts = new ArrayList<>(services);
        for (int i = 0; i < services; i++) upserts.add(catalog.upsert(i));
        long endpoints = (long) services * instances;
        String parts = args.length > 3 ? args[3] : "xds,mcp";
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (ServiceAggregator aggregator = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS);
                XdsServer xds = new XdsServer(XdsOptions.loopbackEphemeral(), meters);
                McpServer mcp = new McpServer(
                        McpOptions.builder().bindAddress("127.0.0.1").port(0).build(), meters)) {
            if (parts.contains("xds")) aggregator.subscribe(xds.start()).join();
            if (parts.contains("mcp")) aggregator.subscribe(mcp.start()).join();
            CompletableFuture<Long> complete = new CompletableFuture<>();
            aggregator
                    .subscribe(s -> {
                        if (s.serviceCount() == services && s.endpointCount() == endpoints) {
                            complete.complete(System.nanoTime());
                        }
                    })
                    .join();
            long start = System.nanoTime();
            for (ServiceUpsert u : upserts) aggregator.accept(u);
            long snapshot = complete.get(Bench.LONG, TimeUnit.MILLISECONDS);
            long sequence = aggregator.current().sequence();
            if (parts.contains("xds")) Target.awaitSequence(xds::servedSequence, sequence, Bench.LONG, "xds");
            if (parts.contains("mcp")) mcp.idle().get(Bench.LONG, TimeUnit.MILLISECONDS);
            long served = System.nanoTime();
            xds.markCatalogReady();
            mcp.markCatalogReady();
            upserts.clear();
            long retained = Heap.usedAfterGc() - heap0;
            System.out.printf(
                    "probe: %s %,d endpoints: first complete snapshot %.1f s, served %.1f s, retained %.1f MB (%.0f B"
                            + " per endpoint) pid %d%n",
                    parts,
                    endpoints,
                    (snapshot - start) / 1e9,
                    (served - start) / 1e9,
                    retained / 1e6,
                    retained / (double) endpoints,
                    ProcessHandle.current().pid());
            System.out.flush();
            if (hold > 0) Thread.sleep(hold * 1000L);
        }
    }
}
