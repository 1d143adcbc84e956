package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;

import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.pojo.Instance;
import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.testing.TestCatalog;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How fast a change in Nacos reaches the catalog, measured end to end: a real nacos-client registers against the
 * {@link NacosTestServer}, the watcher follows it, and a listener on the real aggregator records the first snapshot
 * that shows the change. Prints p50 / p99; asserts nothing about time.
 */
@Tag("benchmark")
class NacosLatencyBenchmark {

    private static final int WARMUP = 50;
    private static final int CHANGES = 300;
    private static final int NEW_SERVICES = 30;

    /** Completes when a snapshot satisfies the condition it waits for. */
    private static final class Probe implements SnapshotListener {
        private volatile Predicate<Map<String, MeshService>> condition;
        private volatile CompletableFuture<Long> seen;

        CompletableFuture<Long> await(Predicate<Map<String, MeshService>> c) {
            CompletableFuture<Long> f = new CompletableFuture<>();
            seen = f;
            condition = c;
            return f;
        }

        @Override
        public void onSnapshot(dev.meshbridge.core.model.MeshSnapshot snapshot) {
            Predicate<Map<String, MeshService>> c = condition;
            CompletableFuture<Long> f = seen;
            if (c != null && f != null && !f.isDone() && c.test(snapshot.services())) f.complete(System.nanoTime());
        }
    }

    @Test
    void registrationToCatalog() throws Exception {
        for (int r = 0; r < Integer.getInteger("bench.rounds", 1); r++) {
            measureChanges(NacosTestServer.Version.V3_1_1, Duration.ZERO, CHANGES);
            measureChanges(NacosTestServer.Version.V2_5_1, Duration.ZERO, CHANGES);
        }
        measureChanges(NacosTestServer.Version.V3_1_1, Duration.ofMillis(500), 40);
    }

    @Test
    void newServiceToCatalog() throws Exception {
        measureNewServices(NacosTestServer.Version.V3_1_1, Duration.ZERO, "nacosRefreshInterval: 10m");
        measureNewServices(NacosTestServer.Version.V3_1_1, Duration.ofMillis(500), "nacosRefreshInterval: 10m");
        measureNewServices(NacosTestServer.Version.V2_5_1, Duration.ZERO, "nacosRefreshInterval: 1s");
        measureNewServices(NacosTestServer.Version.V2_5_1, Duration.ZERO, "nacosRefreshInterval: 250ms");
    }

    /** A test server, a real aggregator with a probe, one application's client and a running watcher. */
    private record Bench(
            NacosTestServer server, TestCatalog catalog, Probe probe, NamingService app, NacosWatcher watcher)
            implements AutoCloseable {

        /** Starts everything; the application has registered {@code seed} and the catalog shows it. */
        static Bench start(NacosTestServer.Version version, Duration pushDelay, String seed, String... fields)
                throws Exception {
            NacosTestServer server = NacosTestServer.builder()
                    .version(version)
                    .pushDelay(pushDelay)
                    .start();
            TestCatalog catalog = new TestCatalog();
            Probe probe = new Probe();
            catalog.aggregator().subscribe(probe).get(5, TimeUnit.SECONDS);
            NamingService app =
                    NacosTestSupport.registrant(server.address(), "public", null, null, Duration.ofHours(1));
            app.registerInstance(seed, springCloudInstance("10.0.0.1", 8080, 1.0, Map.of()));
            RegistryConfig config = NacosTestSupport.config("bench", server.address(), fields);
            NacosWatcher watcher = new NacosWatcher(config, catalog.context(config));
            watcher.start();
            catalog.awaitService(seed + ".default-group.public.nacos");
            return new Bench(server, catalog, probe, app, watcher);
        }

        @Override
        public void close() {
            watcher.close();
            NacosTestSupport.shutDown(app);
            catalog.close();
            server.close();
        }
    }

    private static void measureChanges(NacosTestServer.Version version, Duration pushDelay, int changes)
            throws Exception {
        try (Bench b = Bench.start(version, pushDelay, "orders")) {
            String host = "orders.default-group.public.nacos";
            long[] nanos = new long[changes];
            long[] rpc = new long[changes];
            for (int i = -WARMUP; i < changes; i++) {
                // distinct consecutive weights: 1.01, 1.02, ... cycling, each one a real registration
                double w = 1.0 + ((i + WARMUP) % 200 + 1) / 100.0;
                int expected = (int) Math.round(w * Endpoint.DEFAULT_WEIGHT);
                CompletableFuture<Long> seen = b.probe().await(s -> {
                    MeshService svc = s.get(host);
                    return svc != null && svc.endpoints().get(0).weight() == expected;
                });
                long t0 = System.nanoTime();
                b.app().registerInstance("orders", springCloudInstance("10.0.0.1", 8080, w, Map.of()));
                long t1 = System.nanoTime();
                long done;
                try {
                    done = seen.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new AssertionError("change " + i + " to weight " + expected + " not seen; catalog: "
                            + b.catalog().snapshot().service(host) + "; server: "
                            + b.server().instances("public", "DEFAULT_GROUP", "orders") + "; status "
                            + b.watcher());
                }
                if (i >= 0) {
                    nanos[i] = done - t0;
                    rpc[i] = t1 - t0;
                }
            }
            print("registration -> catalog, " + label(version, pushDelay), nanos);
            print("  of which the registration RPC", rpc);
        }
    }

    private static void measureNewServices(NacosTestServer.Version version, Duration pushDelay, String refresh)
            throws Exception {
        try (Bench b = Bench.start(version, pushDelay, "seed", refresh)) {
            long[] nanos = new long[NEW_SERVICES];
            ScheduledExecutorService arrivals = Executors.newSingleThreadScheduledExecutor();
            try {
                for (int i = -3; i < NEW_SERVICES; i++) {
                    String name = "new-" + (i + 3);
                    String host = name + ".default-group.public.nacos";
                    CompletableFuture<Long> seen = b.probe().await(s -> s.containsKey(host));
                    Instance instance = springCloudInstance("10.0.1." + (i + 4), 8080);
                    // a registration arrives at a random moment of the refresh cycle, as it does in production
                    long offset = ThreadLocalRandom.current().nextLong(1_000);
                    long t0 = arrivals.schedule(
                                    () -> {
                                        long start = System.nanoTime();
                                        b.app().registerInstance(name, instance);
                                        return start;
                                    },
                                    offset,
                                    TimeUnit.MILLISECONDS)
                            .get(10, TimeUnit.SECONDS);
                    long done = seen.get(30, TimeUnit.SECONDS);
                    if (i >= 0) nanos[i] = done - t0;
                }
            } finally {
                arrivals.shutdownNow();
            }
            print("new service -> catalog, " + label(version, pushDelay) + ", " + refresh, nanos);
            assertThat(b.catalog().snapshot().services()).hasSizeGreaterThan(NEW_SERVICES);
        }
    }

    private static String label(NacosTestServer.Version version, Duration pushDelay) {
        return "server " + version + " pushTaskDelay=" + pushDelay.toMillis() + "ms";
    }

    private static void print(String what, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        double p50 = sorted[sorted.length / 2] / 1e6;
        double p99 = sorted[(int) Math.ceil(sorted.length * 0.99) - 1] / 1e6;
        double max = sorted[sorted.length - 1] / 1e6;
        System.out.printf("BENCH %-75s n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms%n", what, nanos.length, p50, p99, max);
    }
}
