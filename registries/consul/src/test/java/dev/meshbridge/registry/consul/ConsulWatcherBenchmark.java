package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.net.HostAndPort;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.WatcherContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.model.agent.ImmutableRegCheck;
import org.kiwiproject.consul.model.agent.ImmutableRegistration;
import org.kiwiproject.consul.model.agent.Registration;

/**
 * Time from a change in Consul to the catalog a user sees: the clock starts before the registration (or check update)
 * is sent and stops when the aggregator publishes the changed catalog, through the real client, the watcher's blocking
 * queries and the real aggregator, against {@link ConsulTestServer} on loopback. Background services (200 by default,
 * two instances each, {@code -Dbench.background}) keep that many blocking queries open; {@code -Dbench.changes} sets
 * the changes per kind (300). Prints p50, p90, p99 and max per kind of change, with the aggregator's production
 * coalescing and with none.
 *
 * <p>Run: {@code ./mvnw -q -pl registries/consul -am verify -Dgroups=benchmark -DexcludedGroups=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dtest=ConsulWatcherBenchmark}
 */
@Tag("benchmark")
class ConsulWatcherBenchmark {

    static final int BACKGROUND = Integer.getInteger("bench.background", 200);
    static final int CHANGES = Integer.getInteger("bench.changes", 300);
    static final int WARMUP = 30;

    /** Waits on the aggregator's thread for a snapshot that shows the expected change. */
    private static final class Arrival {
        private record Expectation(Predicate<MeshSnapshot> wanted, CountDownLatch latch, long[] arrived) {}

        private volatile Expectation current = new Expectation(s -> false, new CountDownLatch(0), new long[1]);

        void onSnapshot(MeshSnapshot s) {
            Expectation e = current;
            if (e.latch().getCount() > 0 && e.wanted().test(s)) {
                e.arrived()[0] = System.nanoTime();
                e.latch().countDown();
            }
        }

        void expect(Predicate<MeshSnapshot> condition) {
            current = new Expectation(condition, new CountDownLatch(1), new long[1]);
        }

        long await() throws InterruptedException {
            Expectation e = current;
            assertThat(e.latch().await(20, TimeUnit.SECONDS))
                    .as("change reached the catalog")
                    .isTrue();
            return e.arrived()[0];
        }
    }

    @Test
    void registrationToCatalog_latency() throws Exception {
        for (ServiceAggregator.Options coalescing : List.of(
                ServiceAggregator.Options.DEFAULTS, new ServiceAggregator.Options(Duration.ZERO, Duration.ZERO))) {
            run(coalescing);
        }
    }

    private void run(ServiceAggregator.Options coalescing) throws Exception {
        try (ConsulTestServer server = ConsulTestServer.builder().acl("root").start();
                ServiceAggregator aggregator = new ServiceAggregator(coalescing)) {
            Consul consul = Consul.builder()
                    .withHostAndPort(HostAndPort.fromString(server.address()))
                    .withTokenAuth("root")
                    .build();
            for (int i = 0; i < BACKGROUND; i++) {
                for (int j = 0; j < 2; j++) {
                    consul.agentClient()
                            .register(instance("bg-" + i, "bg-" + i + "-" + j, "10.1." + i % 250 + "." + j));
                }
            }
            Arrival arrival = new Arrival();
            aggregator.subscribe(arrival::onSnapshot).join();
            arrival.expect(s -> s.serviceCount() == BACKGROUND);
            RegistryWatcher watcher = watcher(server, aggregator);
            arrival.await();

            List<Long> newService = new ArrayList<>();
            List<Long> newInstance = new ArrayList<>();
            List<Long> healthFlip = new ArrayList<>();
            for (int i = 0; i < WARMUP + CHANGES; i++) {
                String name = "svc-" + i;
                String host = name + ".dc1.consul";
                arrival.expect(s -> s.service(host) != null);
                long t0 = System.nanoTime();
                consul.agentClient().register(instance(name, name + "-a", "10.2.0.1"));
                long d1 = arrival.await() - t0;

                arrival.expect(s ->
                        s.service(host) != null && s.service(host).endpoints().size() == 2);
                t0 = System.nanoTime();
                consul.agentClient().register(instance(name, name + "-b", "10.2.0.2"));
                long d2 = arrival.await() - t0;

                arrival.expect(s -> unhealthy(s.service(host), "10.2.0.1"));
                t0 = System.nanoTime();
                consul.agentClient().fail(name + "-a");
                long d3 = arrival.await() - t0;

                if (i >= WARMUP) {
                    newService.add(d1);
                    newInstance.add(d2);
                    healthFlip.add(d3);
                }
            }
            watcher.close();
            consul.destroy();
            String label = coalescing.quietPeriod().isZero()
                    ? "no coalescing"
                    : "aggregator defaults (quiet " + coalescing.quietPeriod().toMillis() + " ms, max "
                            + coalescing.maxDelay().toMillis() + " ms)";
            System.out.printf(
                    Locale.ROOT,
                    "consul registration -> catalog, %d changes each, %d background services, %s%n",
                    CHANGES,
                    BACKGROUND,
                    label);
            print("new service (catalog + health query)", newService);
            print("new instance of a service (health query)", newInstance);
            print("check passing -> critical (health query)", healthFlip);
        }
    }

    private static boolean unhealthy(MeshService s, String address) {
        return s != null
                && s.endpoints().stream().anyMatch(e -> e.address().equals(address) && e.health() == Health.UNHEALTHY);
    }

    private static Registration instance(String name, String id, String address) {
        return ImmutableRegistration.builder()
                .id(id)
                .name(name)
                .address(address)
                .port(8080)
                .putMeta("zone", "a")
                .addTags("secure=false")
                .check(ImmutableRegCheck.builder()
                        .ttl("3600s")
                        .status("passing")
                        .build())
                .build();
    }

    private static RegistryWatcher watcher(ConsulTestServer server, ServiceAggregator aggregator) throws Exception {
        ConfigNode root = ConfigNode.parse("bridge.yaml", """
                registries:
                  - type: consul
                    name: bench
                    addresses: [%s]
                    consulToken: root
                    warningHealth: healthy
                """.formatted(server.address()));
        ConsulRegistryProvider provider = new ConsulRegistryProvider();
        RegistryConfig config =
                RegistriesConfig.parse(root, Map.of("consul", provider)).get(0);
        root.finish();
        aggregator.configureRegistry(config.name(), config.emptyService());
        RegistryWatcher w = provider.create(
                config, new WatcherContext(config, aggregator, new RegistryStatus(config.name(), config.type())));
        w.start();
        return w;
    }

    private static void print(String what, List<Long> nanos) {
        List<Long> sorted = new ArrayList<>(nanos);
        Collections.sort(sorted);
        System.out.printf(
                Locale.ROOT,
                "  %-42s p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  max %6.2f ms%n",
                what,
                ms(sorted, 0.50),
                ms(sorted, 0.90),
                ms(sorted, 0.99),
                sorted.get(sorted.size() - 1) / 1e6);
    }

    private static double ms(List<Long> sorted, double q) {
        int i = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, i)) / 1e6;
    }
}
