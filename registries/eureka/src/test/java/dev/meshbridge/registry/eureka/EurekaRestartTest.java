package dev.meshbridge.registry.eureka;

import static dev.meshbridge.registry.eureka.testing.EurekaRegistrar.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.netflix.appinfo.InstanceInfo;
import com.netflix.discovery.shared.Application;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.RemovalPolicy;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.Flaps;
import dev.meshbridge.core.testing.JumpTicker;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.WatcherRuntime;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A real Eureka server (in-process) restarting under the watcher: it comes back empty, and each client finds out at
 * its next renewal (answered 404) and registers again, as Spring Cloud Netflix's client does, the renewals of the
 * instances spread over one renewal period (30 s in production, 1 s here). The watcher's time is a {@link
 * JumpTicker}.
 */
class EurekaRestartTest {

    private static final Duration RENEWAL = Duration.ofSeconds(1);

    private static List<String> restart(RemovalPolicy removals) throws Exception {
        List<InstanceInfo> instances = List.of(
                springCloudInstance("orders", "10.40.0.1", 8080).build(),
                springCloudInstance("orders", "10.40.0.2", 8080).build(),
                springCloudInstance("orders", "10.40.0.3", 8080).build(),
                springCloudInstance("single", "10.40.1.1", 8080).build(),
                springCloudInstance("pay", "10.40.2.1", 8080).build(),
                springCloudInstance("pay", "10.40.2.2", 8080).build());
        EmbeddedEurekaServer first = EmbeddedEurekaServer.start();
        int port = first.port();
        EmbeddedEurekaServer second = null;
        ScheduledExecutorService renewals = Executors.newScheduledThreadPool(1);
        AtomicBoolean renewing = new AtomicBoolean(true);
        try (TestCatalog catalog = new TestCatalog();
                JumpTicker ticker = new JumpTicker();
                EurekaRegistrar clients = new EurekaRegistrar(first.serviceUrl())) {
            for (InstanceInfo i : instances) clients.register(i);
            // each instance renews once per period, at its own offset; a 404 makes it register again
            for (int n = 0; n < instances.size(); n++) {
                InstanceInfo i = instances.get(n);
                renewals.scheduleAtFixedRate(
                        () -> {
                            if (!renewing.get()) return;
                            try {
                                clients.renew(i);
                            } catch (RuntimeException e) {
                                // the server is down: the client tries again at its next renewal
                            }
                        },
                        RENEWAL.toMillis() * n / instances.size(),
                        RENEWAL.toMillis(),
                        TimeUnit.MILLISECONDS);
            }
            RegistryConfig config = RegistryConfig.of(
                            "eureka",
                            "eu",
                            List.of(first.serviceUrl()),
                            EurekaWatcherTest.fast()
                                    .fetchInterval(Duration.ofMillis(300))
                                    .build())
                    .withRemovals(removals);
            RecordingSink events = new RecordingSink();
            WatcherContext base = catalog.context(config);
            RegistryStatus status = base.status();
            List<String> flaps;
            try (EurekaWatcher watcher = new EurekaWatcher(new WatcherContext(
                    config,
                    e -> {
                        events.accept(e);
                        base.events().accept(e);
                    },
                    status,
                    new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM)))) {
                watcher.start();
                catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 3);
                catalog.awaitService("single.eureka", s -> s.endpoints().size() == 1);
                catalog.awaitService("pay.eureka", s -> s.endpoints().size() == 2);
                await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);
                MeshSnapshot before = catalog.snapshot();
                int mark = events.events().size();

                first.close();
                await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
                // the clients renew (and so register again) only once the watcher has been back long enough to read
                // the empty server, so the partial state is seen whatever the watcher's reconnect timing
                renewing.set(false);
                second = EmbeddedEurekaServer.builder().port(port).start();
                EmbeddedEurekaServer restarted = second;
                await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.UP);
                Flaps.awaitWhilePartial(removals == RemovalPolicy.DEFAULT, events::events, mark);
                renewing.set(true);
                await().atMost(TestCatalog.TIMEOUT)
                        .until(() -> count(restarted, "ORDERS") == 3
                                && count(restarted, "SINGLE") == 1
                                && count(restarted, "PAY") == 2
                                && status.state() == RegistryStatus.State.UP);
                catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 3);

                int syncs = events.events(RegistrySynced.class).size();
                ticker.jump(EurekaWatcher.DEFAULT_WARM_UP.plusSeconds(1));
                if (!removals.warmUpOr(Duration.ofSeconds(1)).isZero()) {
                    await().atMost(TestCatalog.TIMEOUT)
                            .until(() -> events.events(RegistrySynced.class).size() > syncs);
                }
                ticker.jump(Duration.ofSeconds(1));
                catalog.awaitService("pay.eureka", s -> s.endpoints().size() == 2);
                flaps = Flaps.since(events.events(), mark);
                if (flaps.isEmpty()) {
                    MeshSnapshot after = catalog.snapshot();
                    for (String host : List.of("orders.eureka", "single.eureka", "pay.eureka")) {
                        assertThat(after.service(host).endpoints())
                                .extracting(Endpoint::address)
                                .containsExactlyElementsOf(before.service(host).endpoints().stream()
                                        .map(Endpoint::address)
                                        .toList());
                    }
                }
            }
            System.out.printf(
                    "Eureka restart, clients registering again at their next renewal, removals %s: %d transient"
                            + " removals %s%n",
                    removals, flaps.size(), flaps);
            return flaps;
        } finally {
            renewals.shutdownNow();
            first.close();
            if (second != null) second.close();
        }
    }

    private static int count(EmbeddedEurekaServer server, String app) {
        Application a = server.registry().getApplication(app);
        return a == null ? 0 : a.getInstances().size();
    }

    @Test
    void restart_clientsRegisteringAgainOverARenewalPeriod_nothingLeavesTheCatalog() throws Exception {
        assertThat(restart(RemovalPolicy.DEFAULT)).isEmpty();
    }

    /** The same restart without the warm-up and the re-registration window: what the catalog went through before. */
    @Test
    void withoutWarmUpOrWindow_theSameRestartFlaps() throws Exception {
        assertThat(restart(RemovalPolicy.IMMEDIATE)).isNotEmpty();
    }
}
