package dev.meshbridge.registry.eureka;

import static dev.meshbridge.registry.eureka.EurekaWatcherTest.fast;
import static dev.meshbridge.registry.eureka.testing.EurekaRegistrar.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.RemovalPolicy;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Outages, failover, restarts, credentials and delta drift against real Eureka servers in-process: the catalog keeps
 * its last good state through every failure and follows the registry again once it can read it.
 */
class EurekaOutageTest {

    private final TestCatalog catalog = new TestCatalog();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private WatcherContext context;

    @TempDir
    Path tmp;

    @AfterEach
    void cleanUp() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) resources.get(i).close();
        catalog.close();
    }

    private <T extends AutoCloseable> T closeLater(T resource) {
        resources.add(resource);
        return resource;
    }

    private EurekaWatcher watch(RegistryConfig config) {
        context = catalog.context(config);
        EurekaWatcher w = closeLater(new EurekaWatcher(context));
        w.start();
        return w;
    }

    private EurekaWatcher watch(EurekaOptions options, String... serviceUrls) {
        return watch(RegistryConfig.of("eureka", "eu", List.of(serviceUrls), options));
    }

    private RegistryStatus status() {
        return context.status();
    }

    private void awaitState(RegistryStatus.State state) {
        await().atMost(TestCatalog.TIMEOUT).until(() -> status().state() == state);
    }

    private static List<String> addresses(MeshService s) {
        return s.endpoints().stream().map(Endpoint::address).sorted().toList();
    }

    /** Watches every published snapshot and remembers whether the host ever went missing after it first appeared. */
    private AtomicBoolean lostAfterFirstSeen(String host) {
        AtomicBoolean seen = new AtomicBoolean();
        AtomicBoolean lost = new AtomicBoolean();
        catalog.aggregator().subscribe((MeshSnapshot snapshot) -> {
            if (snapshot.service(host) != null) {
                seen.set(true);
            } else if (seen.get()) {
                lost.set(true);
            }
        });
        return lost;
    }

    @Test
    void twoServers_firstFails_failsOverToTheSecondWithoutLosingState() {
        EmbeddedEurekaServer a = closeLater(EmbeddedEurekaServer.start());
        EmbeddedEurekaServer b = closeLater(EmbeddedEurekaServer.start());
        EurekaRegistrar toA = closeLater(new EurekaRegistrar(a.serviceUrl()));
        EurekaRegistrar toB = closeLater(new EurekaRegistrar(b.serviceUrl()));
        // what peer replication gives: both servers know both instances
        for (EurekaRegistrar r : List.of(toA, toB)) {
            r.register(springCloudInstance("orders", "10.1.0.1", 8080).build());
            r.register(springCloudInstance("orders", "10.1.0.2", 8080).build());
        }
        AtomicBoolean lost = lostAfterFirstSeen("orders.eureka");
        EurekaWatcher watcher = watch(fast().build(), a.serviceUrl(), b.serviceUrl());
        catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 2);
        assertThat(watcher.stats().server()).isEqualTo(a.serviceUrl());

        a.close();
        toB.register(springCloudInstance("orders", "10.1.0.3", 8080).build());

        MeshService orders =
                catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 3);
        assertThat(addresses(orders)).containsExactly("10.1.0.1", "10.1.0.2", "10.1.0.3");
        await().atMost(TestCatalog.TIMEOUT).until(() -> watcher.stats().failovers() == 1);
        assertThat(watcher.stats().server()).isEqualTo(b.serviceUrl());
        assertThat(status().state()).isEqualTo(RegistryStatus.State.UP);
        assertThat(status().errorCount()).isPositive();
        assertThat(lost).isFalse();
    }

    @Test
    void serverRestart_keepsTheLastStateWhileDown_thenFollowsTheNewRegistry() {
        EmbeddedEurekaServer first = EmbeddedEurekaServer.start();
        int port = first.port();
        String url = first.serviceUrl();
        try (EurekaRegistrar r = new EurekaRegistrar(url)) {
            r.register(springCloudInstance("orders", "10.2.0.1", 8080).build());
            r.register(springCloudInstance("orders", "10.2.0.2", 8080).build());
        }
        AtomicBoolean lost = lostAfterFirstSeen("orders.eureka");
        // a restarted Eureka starts empty until its clients register again: the warm-up holds removals meanwhile
        // (1 s here; EurekaRestartTest shows the default on a driven clock), the keep policy then the last endpoints
        watch(new RegistryConfig(
                        "eureka",
                        "eu",
                        List.of(url),
                        EmptyServicePolicy.keep(Duration.ofSeconds(60)),
                        Duration.ofSeconds(30),
                        new TreeMap<>(),
                        fast().build())
                .withRemovals(RemovalPolicy.DEFAULT.withWarmUp(Duration.ofSeconds(1))));
        MeshService before =
                catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 2);

        first.close();
        awaitState(RegistryStatus.State.DOWN);
        assertThat(status().lastError()).contains(url);
        assertThat(catalog.service("orders.eureka")).isEqualTo(before);

        EmbeddedEurekaServer second =
                closeLater(EmbeddedEurekaServer.builder().port(port).start());
        EurekaRegistrar r = closeLater(new EurekaRegistrar(second.serviceUrl()));
        // the client of 10.2.0.1 renews, gets 404 and registers again; 10.2.0.2 died during the outage; a new one
        r.register(springCloudInstance("orders", "10.2.0.1", 8080).build());
        r.register(springCloudInstance("orders", "10.2.0.3", 8080).build());

        MeshService after =
                catalog.awaitService("orders.eureka", s -> addresses(s).equals(List.of("10.2.0.1", "10.2.0.3")));
        assertThat(after.routableEndpoints()).hasSize(2);
        awaitState(RegistryStatus.State.UP);
        assertThat(lost).isFalse();
    }

    @Test
    void badCredentials_refused_reportedWithoutTheSecret_andNothingPublished() {
        EmbeddedEurekaServer server = closeLater(
                EmbeddedEurekaServer.builder().basicAuth("bridge", "s3cret").start());
        EurekaRegistrar r = closeLater(new EurekaRegistrar(server.serviceUrl(), "bridge", "s3cret"));
        r.register(springCloudInstance("orders", "10.3.0.1", 8080).build());

        watch(
                fast().credentials(Secret.literal("bridge"), Secret.literal("not-the-password"))
                        .build(),
                server.serviceUrl());

        awaitState(RegistryStatus.State.DOWN);
        assertThat(status().lastError()).contains("401").doesNotContain("not-the-password");
        assertThat(status().hasSynced()).isFalse();
        assertThat(catalog.snapshot().serviceCount()).isZero();
    }

    @Test
    void passwordRotatedOnTheServer_keepsTheLastState_untilTheSecretFileHasTheNewOne() throws IOException {
        EmbeddedEurekaServer server = closeLater(
                EmbeddedEurekaServer.builder().basicAuth("bridge", "old-pw").start());
        EurekaRegistrar r = closeLater(new EurekaRegistrar(server.serviceUrl(), "bridge", "old-pw"));
        r.register(springCloudInstance("orders", "10.4.0.1", 8080).build());
        Path passwordFile = Files.writeString(tmp.resolve("eureka-password"), "old-pw\n");
        watch(
                fast().credentials(Secret.literal("bridge"), Secret.file(passwordFile))
                        .build(),
                server.serviceUrl());
        MeshService before = catalog.awaitService("orders.eureka");

        server.requireCredentials("bridge", "new-pw");
        awaitState(RegistryStatus.State.DOWN);
        assertThat(status().lastError()).contains("401").doesNotContain("old-pw");
        assertThat(catalog.service("orders.eureka")).isEqualTo(before);
        EurekaRegistrar rotated = closeLater(new EurekaRegistrar(server.serviceUrl(), "bridge", "new-pw"));
        rotated.register(springCloudInstance("orders", "10.4.0.2", 8080).build());

        Files.writeString(passwordFile, "new-pw\n");

        MeshService after =
                catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 2);
        assertThat(addresses(after)).containsExactly("10.4.0.1", "10.4.0.2");
        awaitState(RegistryStatus.State.UP);
    }

    @Test
    void changeMissingFromTheDelta_hashMismatch_fallsBackToAFullFetch() {
        // the server forgets deltas after 100 ms; the watcher polls every second, so it misses the change in the delta
        EmbeddedEurekaServer server = closeLater(EmbeddedEurekaServer.builder()
                .deltaRetention(Duration.ofMillis(100))
                .start());
        EurekaRegistrar r = closeLater(new EurekaRegistrar(server.serviceUrl()));
        r.register(springCloudInstance("orders", "10.5.0.1", 8080).build());
        EurekaWatcher watcher = watch(
                fast().fetchInterval(Duration.ofSeconds(1))
                        .maxBackoff(Duration.ofSeconds(2))
                        .build(),
                server.serviceUrl());
        catalog.awaitService("orders.eureka");
        long deltas = watcher.stats().deltaFetches();
        await().atMost(TestCatalog.TIMEOUT)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> watcher.stats().deltaFetches() > deltas);

        r.register(springCloudInstance("orders", "10.5.0.2", 8080).build());

        catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 2);
        assertThat(watcher.stats().hashMismatches()).isPositive();
        assertThat(watcher.stats().fullFetches()).isEqualTo(2);
    }

    @Test
    void serverRefusingDeltas_isReadWithFullFetches() {
        EmbeddedEurekaServer server =
                closeLater(EmbeddedEurekaServer.builder().disableDelta().start());
        EurekaRegistrar r = closeLater(new EurekaRegistrar(server.serviceUrl()));
        r.register(springCloudInstance("orders", "10.6.0.1", 8080).build());
        EurekaWatcher watcher = watch(fast().build(), server.serviceUrl());
        catalog.awaitService("orders.eureka");

        r.register(springCloudInstance("orders", "10.6.0.2", 8080).build());

        catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 2);
        assertThat(watcher.stats().deltaFetches()).isZero();
        assertThat(watcher.stats().fullFetches()).isGreaterThanOrEqualTo(2);
        assertThat(status().state()).isEqualTo(RegistryStatus.State.UP);
    }
}
