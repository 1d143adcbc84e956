package dev.meshbridge.registry.eureka;

import static dev.meshbridge.registry.eureka.testing.EurekaRegistrar.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Time from a status change in Eureka (an operator's {@code OUT_OF_SERVICE}, then back {@code UP}) to the catalog
 * that shows it, through the real aggregator with its default coalescing. Changes are made at random moments
 * (uniform over one fetch interval), as they happen in production, not right after a poll.
 */
@Tag("benchmark")
class EurekaLatencyBenchmarkTest {

    private record Expected(Health health, long sentAtNanos, CompletableFuture<Long> seenAtNanos) {}

    @Test
    void statusChange_toChangedCatalog_defaultInterval() throws Exception {
        run(EurekaOptions.DEFAULT_FETCH_INTERVAL, 50);
    }

    @Test
    void statusChange_toChangedCatalog_halfSecondInterval() throws Exception {
        run(Duration.ofMillis(500), 100);
    }

    @Test
    void deltaRequest_roundTrip() throws Exception {
        try (EmbeddedEurekaServer server = EmbeddedEurekaServer.start();
                EurekaRegistrar registrar = new EurekaRegistrar(server.serviceUrl());
                EurekaHttp http = new EurekaHttp(Duration.ofSeconds(5), Duration.ofSeconds(10))) {
            for (int i = 0; i < 50; i++) {
                registrar.register(springCloudInstance("app" + (i % 10), "10.20." + (i / 250) + "." + (i % 250), 8080)
                        .build());
            }
            List<Long> micros = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                long t0 = System.nanoTime();
                http.fetch(server.serviceUrl(), true, null);
                if (i >= 100) micros.add((System.nanoTime() - t0) / 1_000);
            }
            Collections.sort(micros);
            System.out.printf(
                    Locale.ROOT,
                    "eureka delta GET (50 instances changed in the last 3 min) + decode: p50=%.2f ms p99=%.2f ms%n",
                    micros.get(micros.size() / 2) / 1000.0,
                    micros.get(micros.size() * 99 / 100) / 1000.0);
        }
    }

    private void run(Duration interval, int samples) throws Exception {
        try (EmbeddedEurekaServer server = EmbeddedEurekaServer.start();
                EurekaRegistrar registrar = new EurekaRegistrar(server.serviceUrl());
                ServiceAggregator aggregator = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS)) {
            InstanceInfo target =
                    springCloudInstance("orders", "10.30.0.1", 8080).build();
            registrar.register(target);
            for (int i = 2; i <= 5; i++) {
                registrar.register(
                        springCloudInstance("orders", "10.30.0." + i, 8080).build());
            }
            AtomicReference<Expected> expected = new AtomicReference<>();
            aggregator.subscribe(snapshot -> {
                Expected e = expected.get();
                MeshService s = snapshot.service("orders.eureka");
                if (e == null || s == null) return;
                for (Endpoint endpoint : s.endpoints()) {
                    if (endpoint.address().equals("10.30.0.1") && endpoint.health() == e.health()) {
                        e.seenAtNanos().complete(System.nanoTime());
                    }
                }
            });
            RegistryConfig config = RegistryConfig.of(
                    "eureka",
                    "bench",
                    List.of(server.serviceUrl()),
                    EurekaOptions.builder().fetchInterval(interval).build());
            aggregator.configureRegistry(config.name(), config.emptyService());
            RegistryStatus status = new RegistryStatus(config.name(), config.type());
            CompletableFuture<Long> first = new CompletableFuture<>();
            expected.set(new Expected(Health.HEALTHY, System.nanoTime(), first));
            try (EurekaWatcher watcher = new EurekaWatcher(new WatcherContext(config, aggregator, status))) {
                watcher.start();
                first.get(30, TimeUnit.SECONDS);

                List<Long> millis = new ArrayList<>();
                CountDownLatch never = new CountDownLatch(1);
                for (int i = 0; i < samples; i++) {
                    never.await(ThreadLocalRandom.current().nextLong(interval.toNanos()), TimeUnit.NANOSECONDS);
                    boolean out = i % 2 == 0;
                    Expected e = new Expected(
                            out ? Health.DRAINING : Health.HEALTHY, System.nanoTime(), new CompletableFuture<>());
                    expected.set(e);
                    registrar.overrideStatus(target, out ? InstanceStatus.OUT_OF_SERVICE : InstanceStatus.UP);
                    long seen = e.seenAtNanos().get(interval.toMillis() * 3 + 10_000, TimeUnit.MILLISECONDS);
                    millis.add((seen - e.sentAtNanos()) / 1_000_000);
                }
                Collections.sort(millis);
                double mean =
                        millis.stream().mapToLong(Long::longValue).average().orElse(0);
                System.out.printf(
                        Locale.ROOT,
                        "eureka status change -> catalog, fetchInterval=%s, %d samples: p50=%d ms p90=%d ms p99=%d ms"
                                + " max=%d ms mean=%.0f ms (stats %s)%n",
                        EurekaOptions.format(interval),
                        samples,
                        millis.get(samples / 2),
                        millis.get(samples * 90 / 100),
                        millis.get(Math.min(samples - 1, samples * 99 / 100)),
                        millis.get(samples - 1),
                        mean,
                        watcher.stats());
                assertThat(millis).hasSize(samples);
            }
        }
    }
}
