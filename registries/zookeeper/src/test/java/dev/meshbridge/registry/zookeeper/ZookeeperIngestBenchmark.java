package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import java.lang.management.ManagementFactory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Figures for the ZooKeeper watcher against a real in-process ZooKeeper: 10,000 services x 10 instances ingested from
 * watcher start to the first complete snapshot, the heap that stays after a GC, and the time from one ZooKeeper write
 * to the snapshot that shows it. Run with {@code -Dgroups=benchmark -DexcludedGroups=none}.
 */
@Tag("benchmark")
class ZookeeperIngestBenchmark {

    private static final int SERVICES = 10_000;
    private static final int INSTANCES = 10;
    private static final int CHANGES = 400;

    private static ZkServer zk;
    private static CuratorFramework writer;

    @BeforeAll
    static void start() throws Exception {
        System.setProperty("zookeeper.forceSync", "no");
        zk = new ZkServer();
        writer = zk.client();
    }

    @AfterAll
    static void stop() throws Exception {
        writer.close();
        zk.close();
    }

    /** A valid IPv4 address per service and instance (an octet above 255 would be a host name to resolve). */
    static String address(int service, int instance) {
        return "10." + (instance % 250 + 1) + "." + (service / 250 + 41 * (instance / 250)) + "." + (service % 250 + 1);
    }

    static String providerName(int service, int instance) {
        String iface = "com.example.bench.Service" + service;
        String url = "dubbo://" + address(service, instance) + ":20880/"
                + iface + "?anyhost=true&application=bench-app-" + (service % 100)
                + "&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false&interface=" + iface
                + "&methods=get,list,create,update,delete&pid=" + (1000 + instance)
                + "&release=3.3.6&revision=1.0.0&side=provider&timestamp=1700000000000&version=1.0.0";
        return "/dubbo/" + iface + "/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8);
    }

    static byte[] springInstance(int service, int instance) {
        String name = "bench-svc-" + service;
        String address = address(service, instance);
        return ("{\"name\":\"" + name + "\",\"id\":\"" + name + "-" + instance + "\",\"address\":\"" + address
                        + "\",\"port\":8080,\"sslPort\":null,\"payload\":{\"@class\":\"org.springframework.cloud"
                        + ".zookeeper.discovery.ZookeeperInstance\",\"id\":\"" + name + "\",\"name\":\"" + name
                        + "\",\"metadata\":{\"instance_status\":\"UP\",\"zone\":\"zone-" + (instance % 3)
                        + "\",\"version\":\"1.4.2\"}},\"registrationTimeUTC\":1700000000000,"
                        + "\"serviceType\":\"DYNAMIC\",\"uriSpec\":{\"parts\":[{\"value\":\"scheme\",\"variable\":true},"
                        + "{\"value\":\"://\",\"variable\":false},{\"value\":\"address\",\"variable\":true},"
                        + "{\"value\":\":\",\"variable\":false},{\"value\":\"port\",\"variable\":true}]}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Creates the tree of {@code SERVICES} services with {@code INSTANCES} leaves each, in multi-op transactions of ten
     * services, at most 200 transactions in flight.
     *
     * @param root the root path, created first
     * @param dir the service directory's path below the root (for Dubbo: {@code <interface>/providers})
     * @param leaf the leaf's path below the root, by service and instance
     * @param data the leaf's data, by service and instance
     */
    static void write(String root, IntFunction<List<String>> dir, LeafPath leaf, LeafData data) throws Exception {
        writer.create().creatingParentsIfNeeded().forPath(root);
        Semaphore window = new Semaphore(200);
        int batches = SERVICES / 10;
        CountDownLatch done = new CountDownLatch(batches);
        for (int b = 0; b < batches; b++) {
            List<CuratorOp> ops = new ArrayList<>();
            for (int service = b * 10; service < b * 10 + 10; service++) {
                for (String d : dir.apply(service))
                    ops.add(writer.transactionOp().create().forPath(root + "/" + d));
                for (int i = 0; i < INSTANCES; i++) {
                    ops.add(writer.transactionOp()
                            .create()
                            .forPath(root + "/" + leaf.path(service, i), data.bytes(service, i)));
                }
            }
            window.acquire();
            writer.transaction()
                    .inBackground((c, e) -> {
                        if (e.getResultCode() != 0) System.out.println("[zk-bench] write failed: " + e);
                        window.release();
                        done.countDown();
                    })
                    .forOperations(ops);
        }
        if (!done.await(10, TimeUnit.MINUTES)) throw new IllegalStateException("writes did not finish");
    }

    interface LeafPath {
        String path(int service, int instance);
    }

    interface LeafData {
        byte[] bytes(int service, int instance);
    }

    @Test
    void dubboInterfaceLevel_10000x10() throws Exception {
        long t = System.nanoTime();
        write(
                "/dubbo",
                service -> List.of(
                        "com.example.bench.Service" + service, "com.example.bench.Service" + service + "/providers"),
                (service, i) -> providerName(service, i).substring("/dubbo/".length()),
                (service, i) -> new byte[0]);
        System.out.printf("[zk-bench] wrote %,d provider znodes in %d ms%n", SERVICES * INSTANCES, ms(t));
        run(
                "dubbo interface-level",
                "zkServicesPath: [/dubbo]",
                "com.example.bench.service%d.v-1-0-0.dubbo",
                (service, n) -> {
                    String url =
                            "dubbo://10.200." + (n / 250) + "." + (n % 250 + 1) + ":20880/com.example.bench.Service"
                                    + service + "?application=bench&interface=com.example.bench.Service" + service
                                    + "&side=provider&version=1.0.0";
                    writer.create()
                            .forPath("/dubbo/com.example.bench.Service" + service + "/providers/"
                                    + URLEncoder.encode(url, StandardCharsets.UTF_8));
                });
    }

    @Test
    void springCloud_10000x10() throws Exception {
        long t = System.nanoTime();
        write(
                "/services",
                service -> List.of("bench-svc-" + service),
                (service, i) -> "bench-svc-" + service + "/" + service + "-" + i,
                ZookeeperIngestBenchmark::springInstance);
        System.out.printf("[zk-bench] wrote %,d instance znodes in %d ms%n", SERVICES * INSTANCES, ms(t));
        run(
                "spring cloud",
                "zkServicesPath: [/services]",
                "bench-svc-%d.services.zookeeper",
                (service, n) -> writer.create()
                        .forPath("/services/bench-svc-" + service + "/extra-" + n, springInstance(service, 50 + n)));
    }

    interface Change {
        void make(int service, int n) throws Exception;
    }

    private void run(String label, String option, String hostFormat, Change change) throws Exception {
        RegistryConfig config =
                WatcherHarness.parse("type: zookeeper\nname: bench\naddresses: [\"" + zk.address() + "\"]\n" + option);
        ServiceAggregator[] aggregator = {new ServiceAggregator(ServiceAggregator.Options.DEFAULTS)};
        CompletableFuture<Long> complete = new CompletableFuture<>();
        AtomicReference<CompletableFuture<Long>> next = new AtomicReference<>();
        AtomicReference<String> nextHost = new AtomicReference<>();
        AtomicReference<Integer> nextCount = new AtomicReference<>();
        aggregator[0]
                .subscribe(s -> {
                    long now = System.nanoTime();
                    if (!complete.isDone()
                            && s.serviceCount() == SERVICES
                            && s.endpointCount() == (long) SERVICES * INSTANCES) complete.complete(now);
                    CompletableFuture<Long> f = next.get();
                    String host = nextHost.get();
                    if (f != null && host != null && s.changed().contains(host)) {
                        MeshService svc = s.service(host);
                        if (svc != null && svc.endpoints().size() == nextCount.get()) f.complete(now);
                    }
                })
                .join();
        Map<String, Long> upsertSeen = new ConcurrentHashMap<>();
        RegistryStatus status = new RegistryStatus("bench", "zookeeper");
        WatcherContext context = new WatcherContext(
                config,
                e -> {
                    if (e instanceof ServiceUpsert u) upsertSeen.put(u.host(), System.nanoTime());
                    ServiceAggregator a = aggregator[0];
                    if (a != null) a.accept(e);
                },
                status);
        RegistryWatcher[] watcher = {new ZookeeperWatcherProvider().create(config, context)};
        context = null;
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long processCpu = os.getProcessCpuTime();
        long start = System.nanoTime();
        watcher[0].start();
        long done = complete.get(10, TimeUnit.MINUTES);
        System.out.printf(
                "[zk-bench] %s: %,d services x %d instances: watcher start -> first complete snapshot %d ms"
                        + " (CPU: watcher thread %d ms, whole JVM incl. the ZooKeeper server %d ms; load average %.1f"
                        + " on %d cores)%n",
                label,
                SERVICES,
                INSTANCES,
                (done - start) / 1_000_000,
                threadCpuMillis("meshbridge-zk-bench"),
                (os.getProcessCpuTime() - processCpu) / 1_000_000,
                os.getSystemLoadAverage(),
                os.getAvailableProcessors());

        long[] latencies = new long[CHANGES];
        long[] watcherLatencies = new long[CHANGES];
        for (int i = 0; i < CHANGES; i++) {
            int service = (i * 37) % SERVICES;
            String host = hostFormat.formatted(service);
            MeshSnapshot before = aggregator[0].current();
            int count = before.service(host).endpoints().size() + 1;
            CompletableFuture<Long> f = new CompletableFuture<>();
            nextHost.set(host);
            nextCount.set(count);
            next.set(f);
            upsertSeen.remove(host);
            long t0 = System.nanoTime();
            change.make(service, i);
            long t1 = f.get(30, TimeUnit.SECONDS);
            latencies[i] = t1 - t0;
            watcherLatencies[i] = upsertSeen.getOrDefault(host, t1) - t0;
        }
        // heap figures after the changes, so that ZooKeeper's own memory is the same in all three
        long withEverything = usedHeapAfterGc();
        watcher[0].close();
        watcher[0] = null;
        long aggregatorOnly = usedHeapAfterGc();
        aggregator[0].close();
        aggregator[0] = null;
        long after = usedHeapAfterGc();
        System.out.printf(
                "[zk-bench] %s: retained heap after GC: watcher + catalog %.1f MiB (%.0f bytes per instance);"
                        + " watcher's own state %.1f MiB, aggregator catalog (with the endpoints both share) %.1f MiB%n",
                label,
                mib(withEverything - after),
                (double) (withEverything - after) / (SERVICES * INSTANCES),
                mib(withEverything - aggregatorOnly),
                mib(aggregatorOnly - after));
        System.out.printf(
                "[zk-bench] %s: ZooKeeper write -> changed snapshot over %d changes: p50 %.1f ms, p99 %.1f ms,"
                        + " max %.1f ms (of which write -> watcher upsert: p50 %.1f ms, p99 %.1f ms;"
                        + " aggregator quiet period %s)%n",
                label,
                CHANGES,
                percentile(latencies, 50),
                percentile(latencies, 99),
                percentile(latencies, 100),
                percentile(watcherLatencies, 50),
                percentile(watcherLatencies, 99),
                ServiceAggregator.Options.DEFAULTS.quietPeriod());
    }

    private static long threadCpuMillis(String name) {
        var threads = ManagementFactory.getThreadMXBean();
        for (long id : threads.getAllThreadIds()) {
            var info = threads.getThreadInfo(id);
            if (info != null && info.getThreadName().equals(name)) return threads.getThreadCpuTime(id) / 1_000_000;
        }
        return -1;
    }

    private static long usedHeapAfterGc() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            used = Math.min(
                    used,
                    ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static double percentile(long[] nanos, int p) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int index = Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1);
        return sorted[Math.max(0, index)] / 1e6;
    }

    private static double mib(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
