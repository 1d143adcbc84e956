package dev.meshbridge.bench.world;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.mcp.McpOptions;
import dev.meshbridge.mcp.McpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A diagnostic: what a full ServiceEntry push to one istiod-like client costs the MCP server, and what a steady stream
 * of changes costs it while that client is connected (every push is the whole set, paced by {@code minPushInterval}).
 * Ingests the synthetic catalog into an aggregator and the MCP server alone (no xDS server), then: {@code pushes}
 * times a new istiod-like client (the bench's {@link IstiodClient}, in this JVM) subscribes and receives the whole set;
 * then one stays connected while {@code rate} single-instance changes a second arrive for {@code seconds}. Prints wall
 * time, and the CPU of the MCP serving thread (which builds and serializes each response) and of the server's
 * transport threads ({@code meshbridge-mcp-io-*}). Usage: {@code McpPushProbe <services> [pushes] [seconds] [rate]}.
 */
public final class McpPushProbe {

    private McpPushProbe() {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("serve")) {
            serve(Integer.parseInt(args[1]));
            return;
        }
        if (args[0].equals("connect")) {
            connect(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
            return;
        }
        int services = Integer.parseInt(args[0]);
        int pushes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int rate = args.length > 3 ? Integer.parseInt(args[3]) : 50;
        SyntheticCatalog catalog = new SyntheticCatalog(services, 10);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (ServiceAggregator aggregator = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS);
                McpServer mcp = new McpServer(
                        McpOptions.builder().bindAddress("127.0.0.1").port(0).build(), meters)) {
            aggregator.subscribe(mcp.start()).join();
            long start = System.nanoTime();
            for (int i = 0; i < services; i++) aggregator.accept(catalog.upsert(i));
            aggregator.flushNow().get(10, TimeUnit.MINUTES);
            mcp.idle().get(10, TimeUnit.MINUTES);
            mcp.markCatalogReady();
            System.out.printf(
                    "push-probe: %,d services served after %.1f s%n", services, (System.nanoTime() - start) / 1e9);
            for (int p = 0; p < pushes; p++) {
                System.gc();
                long[] before = cpu();
                long t0 = System.nanoTime();
                IstiodClient client = new IstiodClient(mcp.port()).start();
                while (!client.synced() || client.held() < services) LockSupport.parkNanos(2_000_000);
                long[] after = cpu();
                IstiodClient.Seen full = client.firstWithAtLeast(services);
                System.out.printf(
                        "push-probe: full push %d: %,d B received whole after %d ms (decoded %d ms); mcp thread %.0f"
                                + " ms CPU, server transport %.0f ms CPU%n",
                        p,
                        full == null ? -1 : full.bytes(),
                        full == null ? -1 : TimeUnit.NANOSECONDS.toMillis(full.nanos() - t0),
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0),
                        (after[0] - before[0]) / 1e6,
                        (after[1] - before[1]) / 1e6);
                if (p < pushes - 1) client.close();
                else steady(aggregator, mcp, catalog, client, services, seconds, rate);
            }
        }
    }

    /**
     * The server alone, for a client in another JVM ({@code connect}): ingests, prints {@code port=<port>}, serves until
     * its standard input ends.
     */
    private static void serve(int services) throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(services, 10);
        try (ServiceAggregator aggregator = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS);
                McpServer mcp = new McpServer(
                        McpOptions.builder().bindAddress("127.0.0.1").port(0).build(), new SimpleMeterRegistry())) {
            aggregator.subscribe(mcp.start()).join();
            for (int i = 0; i < services; i++) aggregator.accept(catalog.upsert(i));
            aggregator.flushNow().get(10, TimeUnit.MINUTES);
            mcp.idle().get(10, TimeUnit.MINUTES);
            mcp.markCatalogReady();
            System.gc();
            long[] ready = cpu();
            System.out.printf(
                    "push-probe: server at ready: mcp thread %.0f ms CPU, transport %.0f ms CPU%n",
                    ready[0] / 1e6, ready[1] / 1e6);
            System.out.println("port=" + mcp.port());
            System.out.flush();
            while (System.in.read() >= 0) {
                long[] c = cpu();
                System.out.printf(
                        "push-probe: server so far: mcp thread %.0f ms CPU, transport %.0f ms CPU%n",
                        c[0] / 1e6, c[1] / 1e6);
            }
        }
    }

    /**
     * {@code pushes} istiod-like clients one after the other, each to the whole set (the first warms this JVM up):
     * per push, the time to its first byte, to its last byte (before gRPC parsed it), to the response parsed, and to
     * every resource decoded.
     */
    private static void connect(int port, int services, int pushes) throws Exception {
        boolean paced = Boolean.getBoolean("probe.paced");
        for (int p = 0; p < pushes; p++) {
            // paced: each push waits for a line on standard input (a driver reads the server's CPU in between)
            if (paced && System.in.read() < 0) return;
            System.gc();
            long t0 = System.nanoTime();
            IstiodClient client = new IstiodClient(port).start();
            while (!client.synced() || client.held() < services) LockSupport.parkNanos(2_000_000);
            long end = System.nanoTime();
            IstiodClient.Seen full = client.firstWithAtLeast(services);
            System.out.printf(
                    "push-probe: push %d: %,d B firstByte %d ms arrived %d ms parsed %d ms decoded %d ms%n",
                    p,
                    full.bytes(),
                    TimeUnit.NANOSECONDS.toMillis(full.firstByteNanos() - t0),
                    TimeUnit.NANOSECONDS.toMillis(full.arrivedNanos() - t0),
                    TimeUnit.NANOSECONDS.toMillis(full.nanos() - t0),
                    TimeUnit.NANOSECONDS.toMillis(end - t0));
            System.out.flush();
            client.close();
        }
    }

    /** Changes at {@code rate} a second for {@code seconds} with the client connected; then a quiet of 5 s. */
    private static void steady(
            ServiceAggregator aggregator,
            McpServer mcp,
            SyntheticCatalog catalog,
            IstiodClient client,
            int services,
            int seconds,
            int rate)
            throws Exception {
        Random random = new Random(27);
        int[][] changeIds = new int[services][];
        int seenBefore = client.seen().size();
        long[] before = cpu();
        long t0 = System.nanoTime();
        int count = seconds * rate;
        for (int k = 0; k < count; k++) {
            long due = t0 + (long) (k * 1e9 / rate);
            while (System.nanoTime() < due) LockSupport.parkNanos(due - System.nanoTime());
            int s = random.nextInt(services);
            if (changeIds[s] == null) changeIds[s] = new int[10];
            changeIds[s][random.nextInt(10)] = 1 + k;
            ServiceUpsert u = catalog.upsert(s, changeIds[s]);
            aggregator.accept(u);
        }
        // the last push may still be on its way: wait for no new ServiceEntry response for 5 s
        int last = -1;
        while (client.seen().size() != last) {
            last = client.seen().size();
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(5));
        }
        long[] after = cpu();
        List<IstiodClient.Seen> seen = client.seen();
        long bytes = 0;
        for (int i = seenBefore; i < seen.size(); i++) bytes += seen.get(i).bytes();
        int n = seen.size() - seenBefore;
        System.out.printf(
                "push-probe: steady %d changes in %d s (%d/s): %d ServiceEntry pushes (%,d B each on average),"
                        + " mcp thread %.0f ms CPU (%.1f ms per push), server transport %.0f ms CPU, window %.1f s%n",
                count,
                seconds,
                rate,
                n,
                n == 0 ? 0 : bytes / n,
                (after[0] - before[0]) / 1e6,
                n == 0 ? 0 : (after[0] - before[0]) / 1e6 / n,
                (after[1] - before[1]) / 1e6,
                (System.nanoTime() - t0) / 1e9);
        client.close();
    }

    /** CPU so far of the MCP serving thread and of the MCP server's transport threads. */
    private static long[] cpu() {
        var mx = ManagementFactory.getThreadMXBean();
        long serving = 0;
        long transport = 0;
        for (var info : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (info == null) continue;
            long c = mx.getThreadCpuTime(info.getThreadId());
            if (c < 0) continue;
            if (info.getThreadName().equals("meshbridge-mcp")) serving += c;
            else if (info.getThreadName().startsWith("meshbridge-mcp-io")) transport += c;
        }
        return new long[] {serving, transport};
    }
}
