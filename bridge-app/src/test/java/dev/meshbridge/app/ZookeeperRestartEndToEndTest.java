package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.testing.JumpTicker;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.WatcherRuntime;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole bridge over a real ZooKeeper that restarts, seen by grpc-java: an ADS stream recording every endpoint and
 * cluster the xDS server takes away ({@link EndpointStream}) and grpc-java's own xDS client making calls throughout.
 * The applications are real registering clients (Dubbo's own {@code ZookeeperRegistry}, curator x-discovery for Dubbo
 * 3 applications and Spring Cloud) behind a proxy, with 10 s sessions, so a restart costs them their sessions and they
 * register again seconds later. The watchers' time is a {@link JumpTicker}, so the warm-up ends when the test says.
 *
 * <p>Both run in real time as well, so nothing here may depend on the machine's pace: with 2 s sessions a loaded
 * machine (load average 15 on 2 cores) expired an application's session before the restart, and the instance really
 * left the registry (curator x-discovery even failed to register it again); and the warm-up the restart test relies
 * on is set longer than any test run, so that it ends at the test's jump and not on the wall clock.
 */
class ZookeeperRestartEndToEndTest {

    private static final Logger log = LoggerFactory.getLogger(ZookeeperRestartEndToEndTest.class);
    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The applications' ZooKeeper sessions: short enough for a restart to expire them, longer than a stall. */
    private static final Duration APP_SESSION = Duration.ofSeconds(10);

    private static final String GREETER = ProxylessZookeeperScenarios.GREETER;
    private static final String SHOP = ProxylessZookeeperScenarios.SHOP;
    private static final String ORDERS = ProxylessZookeeperScenarios.ORDERS;

    @TempDir
    Path dir;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private final JumpTicker ticker = new JumpTicker();
    private ZkServer zk;
    private TcpProxy appsProxy;
    private boolean appsCut;
    private Bridge bridge;
    private ZookeeperApps.DubboProvider oneMore;

    @AfterEach
    void close() throws Exception {
        // the applications unregister as they close: let them reach ZooKeeper
        if (appsCut) appsProxy.restore();
        for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
        ticker.close();
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        closing.add(c);
        return c;
    }

    /** ZooKeeper, the applications behind their proxy (one Dubbo provider of org.demo.Greeter, two of shop and orders). */
    private void startRegistry() throws Exception {
        zk = closeLater(new ZkServer());
        appsProxy = closeLater(new TcpProxy(zk.port()));
        ZookeeperApps apps =
                closeLater(new ZookeeperApps("127.0.0.1:" + appsProxy.port(), APP_SESSION, Duration.ofMillis(1500)));
        apps.registerDubboInterface("org.demo.Greeter", "greeter", backend("greeter-1"), Map.of());
        apps.registerDubbo("shop", backend("shop-1"));
        apps.registerDubbo("shop", backend("shop-2"));
        apps.registerSpring("orders", backend("orders-1"));
        apps.registerSpring("orders", backend("orders-2"));
    }

    private int backend(String name) throws Exception {
        return closeLater(new IdentityBackend(name)).port();
    }

    private void startBridge(String... registryFields) throws Exception {
        StringBuilder yaml = new StringBuilder("""
                admin: {port: 0}
                mcp: {enabled: false}
                xds: {bindAddress: 127.0.0.1, port: 0}
                reload: {interval: 1h}
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["%s"]
                    sessionTimeout: 10s
                """.formatted(zk.address()));
        for (String f : registryFields) yaml.append("    ").append(f).append('\n');
        Path file = dir.resolve("bridge.yaml");
        Files.writeString(file, yaml);
        bridge = closeLater(Bridge.start(
                BridgeConfig.load(file, PROVIDERS),
                file,
                PROVIDERS,
                new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM)));
    }

    private RegistryStatus status() {
        return bridge.reconciler().running().iterator().next().status();
    }

    private EndpointStream streamWithEverything() {
        EndpointStream stream = closeLater(new EndpointStream(bridge.xdsPort()));
        await().atMost(WAIT)
                .until(() -> stream.endpointsOf(GREETER).size() == 1
                        && stream.endpointsOf(SHOP).size() == 2
                        && stream.endpointsOf(ORDERS).size() == 2);
        return stream;
    }

    /** Provider and instance znodes the applications have in ZooKeeper now. */
    private int registrations(CuratorFramework probe) throws Exception {
        int n = 0;
        for (String path : List.of("/dubbo/org.demo.Greeter/providers", "/services/shop", "/services/orders")) {
            if (probe.checkExists().forPath(path) != null)
                n += probe.getChildren().forPath(path).size();
        }
        return n;
    }

    private HttpResponse<String> admin(String method, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort() + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * ZooKeeper restarts with its data; the applications cannot reach it until their sessions have expired (their
     * znodes go, the single provider of org.demo.Greeter included), then register again, Dubbo after its retry period.
     *
     * @return what the xDS stream saw taken away, and the calls that failed meanwhile
     */
    private List<List<String>> restartWhileApplicationsReregisterLate(String... registryFields) throws Exception {
        startRegistry();
        startBridge(registryFields);
        GrpcJavaClient client = closeLater(new GrpcJavaClient(bridge.xdsPort()));
        EndpointStream stream = streamWithEverything();
        // grpc-java resolves a host through xDS on its channel's first call, and that call waits for it; on a loaded
        // machine that wait outlasted the 5 s deadline once. Every host answers once before the counted traffic.
        for (String host : List.of(GREETER, SHOP, ORDERS)) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> client.call(host, 1).answered() == 1);
        }
        stream.mark();
        client.startTraffic(List.of(GREETER, SHOP, ORDERS));
        ProxylessClient.Calls calls;
        try (CuratorFramework probe = zk.client()) {
            await().atMost(WAIT).until(() -> client.traffic().answered() >= 30);
            long syncs = status().syncCount();

            appsProxy.cut();
            appsCut = true;
            zk.restart();
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> registrations(probe) == 0 && status().syncCount() > syncs);
            appsProxy.restore();
            appsCut = false;
            await().atMost(WAIT).ignoreExceptions().until(() -> registrations(probe) == 5);
            long answered = client.traffic().answered();
            await().atMost(WAIT).until(() -> client.traffic().answered() >= answered + 30);

            // the warm-up ends with a full read of ZooKeeper
            long beforeFullRead = status().syncCount();
            ticker.jump(status().warmUp().plusSeconds(1));
            if (status().warmUp() != null && !status().warmUp().isZero()) {
                await().atMost(WAIT).until(() -> status().syncCount() > beforeFullRead);
            }
            ticker.jump(Duration.ofSeconds(1));
            long after = client.traffic().answered();
            await().atMost(WAIT).until(() -> client.traffic().answered() >= after + 30);
        } finally {
            calls = client.stopTraffic();
        }
        log.info(
                "ZooKeeper restart under the whole bridge, fields {}: {} removals on the xDS stream {}, {} of {} calls"
                        + " failed",
                List.of(registryFields),
                stream.removals().size(),
                stream.removals(),
                calls.failures().size(),
                calls.answered() + calls.failures().size());
        return List.of(stream.removals(), calls.failures());
    }

    @Test
    void restartWithItsData_applicationsReregisteringLate_noEndpointLeavesTheXdsStream_noCallFails() throws Exception {
        // the default warm-up (session timeout + 30 s) runs on the wall clock too: longer here, to end at the jump
        List<List<String>> seen = restartWhileApplicationsReregisterLate("warmUp: 10m");
        assertThat(seen.get(0)).as("endpoints and clusters the xDS stream lost").isEmpty();
        assertThat(seen.get(1)).as("calls that failed").isEmpty();
    }

    /** The same restart without the warm-up and the re-registration window: what a client went through before. */
    @Test
    void withoutWarmUpOrWindow_theSameRestartTakesEndpointsAway() throws Exception {
        List<List<String>> seen = restartWhileApplicationsReregisterLate(
                "warmUp: 0s", "reregistrationWindow: 0s", "deletionGuard: {enabled: false}");
        assertThat(seen.get(0)).as("endpoints and clusters the xDS stream lost").isNotEmpty();
    }

    @Test
    void restartWithAnEmptyDataDirectory_guardHoldsEverything_healthzNamesIt_releaseRemoves() throws Exception {
        startRegistry();
        // five endpoints: below the guard's default minEndpoints (10), from which its share rule applies
        startBridge("deletionGuard: {minEndpoints: 2}");
        EndpointStream stream = streamWithEverything();
        stream.mark();
        long syncs = status().syncCount();

        // the applications stay away; ZooKeeper comes back with nothing
        appsProxy.cut();
        appsCut = true;
        zk.restartEmpty();
        await().atMost(WAIT).until(() -> status().syncCount() > syncs);
        ticker.jump(Duration.ofSeconds(41));
        await().atMost(WAIT).until(() -> status().guard() != null);

        assertThat(stream.removals()).as("what the xDS stream lost").isEmpty();
        assertThat(stream.endpointsOf(GREETER)).hasSize(1);
        HttpResponse<String> health = admin("GET", "/healthz");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body())
                .contains("\"deletionGuard\"")
                .contains("\"scope\" : \"registry\"")
                .contains("\"heldEndpoints\" : 5")
                .contains("\"host\" : \"org.demo.greeter.dubbo\"")
                .contains("\"host\" : \"shop.dubbo\"")
                .contains("\"host\" : \"orders.services.zookeeper\"")
                .contains("POST /admin/registries/zk/release")
                .contains("the deletion guard holds removals of registries [zk]");
        assertThat(admin("GET", "/debug/registries").body())
                .contains("\"deletionGuard\"")
                .contains("\"heldEndpoints\" : 5");
        assertThat(admin("GET", "/metrics").body())
                .contains("meshbridge_registry_deletion_guard_held_endpoints{registry=\"zk\",type=\"zookeeper\"} 5.0")
                .contains("meshbridge_registry_deletion_guard_trips_total{registry=\"zk\",type=\"zookeeper\"} 1.0");

        HttpResponse<String> released = admin("POST", "/admin/registries/zk/release");
        assertThat(released.statusCode()).isEqualTo(200);
        assertThat(released.body()).contains("\"released\" : true").contains("\"heldEndpoints\" : 5");
        await().atMost(WAIT)
                .until(() -> stream.endpointsOf(GREETER).isEmpty()
                        && stream.endpointsOf(SHOP).isEmpty()
                        && stream.endpointsOf(ORDERS).isEmpty());
        try {
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> bridge.aggregator().current().service(GREETER) == null);
        } catch (Throwable t) {
            log.error(
                    "DEBUG service {} clusters {} debug {}",
                    bridge.aggregator().current().service(GREETER),
                    stream.clusters(),
                    admin("GET", "/debug/registries").body());
            throw t;
        }
        assertThat(admin("GET", "/healthz").body()).doesNotContain("deletionGuard");
        assertThat(admin("POST", "/admin/registries/zk/release").statusCode()).isEqualTo(409);
        assertThat(admin("POST", "/admin/registries/nope/release").statusCode()).isEqualTo(404);
    }

    /**
     * The registry and the bridge, with one more Dubbo interface with a single provider registered directly (no proxy)
     * by Dubbo's own registry, in {@link #oneMore}.
     */
    private ZookeeperApps startWithOneMoreProvider(String iface, String application, String... registryFields)
            throws Exception {
        startRegistry();
        ZookeeperApps apps = closeLater(new ZookeeperApps(zk));
        oneMore = apps.registerDubboInterface(iface, application, backend(application + "-1"), Map.of());
        startBridge(registryFields);
        return apps;
    }

    /** The stream once it has everything and the one more provider at {@code host}, marked. */
    private EndpointStream streamWithOneMore(String host) {
        EndpointStream stream = streamWithEverything();
        await().atMost(WAIT).until(() -> stream.endpointsOf(host).size() == 1);
        stream.mark();
        return stream;
    }

    /**
     * What was measured before: Dubbo deleting and re-creating a provider znode 13 times with gaps of 0 to 100 ms
     * (a reconnecting registry, a rolling restart on the same address) took the single provider's endpoint, its
     * cluster and its ServiceEntry away 8 times. Now none of it leaves the xDS stream.
     */
    @Test
    void aSingleDubboProviderReregistered13TimesWithinMilliseconds_neverLeavesTheXdsStream() throws Exception {
        // the re-registration window runs on the wall clock too: a gap of 100 ms took longer than the default 500 ms
        // on a loaded machine, so the window here is longer than any gap can get, and the test jumps past it
        Duration window = Duration.ofSeconds(30);
        ZookeeperApps apps = startWithOneMoreProvider(
                "org.demo.Flappy", "flappy", "reregistrationWindow: " + window.toSeconds() + "s");
        ZookeeperApps.DubboProvider flappy = oneMore;
        EndpointStream stream = streamWithOneMore("org.demo.flappy.dubbo");

        java.util.Random random = new java.util.Random(16);
        java.util.concurrent.ScheduledExecutorService dubbo =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(13);
        try {
            long at = 0;
            for (int i = 0; i < 13; i++) {
                dubbo.schedule(() -> apps.unregister(flappy), at, java.util.concurrent.TimeUnit.MILLISECONDS);
                at += random.nextInt(101);
                dubbo.schedule(
                        () -> {
                            apps.registerDubboInterface("org.demo.Flappy", "flappy", flappy.port(), Map.of());
                            done.countDown();
                        },
                        at,
                        java.util.concurrent.TimeUnit.MILLISECONDS);
                at += random.nextInt(101);
            }
            assertThat(done.await(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS))
                    .isTrue();
        } finally {
            dubbo.shutdownNow();
        }
        // the watcher has read the provider list after the last re-registration once a provider registered after it
        // is served (one listing holds both): jumping past the window before that would end the window of the last
        // removal, whose re-registration the watcher had not read yet (a CI run under load lost the endpoint so, for
        // as long as the watcher took to read it back; a real window lasts far longer than that read)
        apps.registerDubboInterface("org.demo.Flappy", "flappy", backend("flappy-2"), Map.of());
        await().atMost(WAIT)
                .until(() -> stream.endpointsOf("org.demo.flappy.dubbo").size() == 2);
        // past the re-registration window anything that was going to leave has left; a third provider registered
        // after that reaches the stream behind it (one owner thread, one stream)
        ticker.jump(window.plusSeconds(1));
        apps.registerDubboInterface("org.demo.Flappy", "flappy", backend("flappy-3"), Map.of());
        await().atMost(WAIT)
                .until(() -> stream.endpointsOf("org.demo.flappy.dubbo").size() == 3);
        assertThat(stream.removals()).as("what the xDS stream lost").isEmpty();
    }

    @Test
    void theLastProviderLeaving_emptiesTheEndpoints_butKeepsTheClusterWhileDubboKnowsTheInterface() throws Exception {
        ZookeeperApps apps = startWithOneMoreProvider("org.demo.Lonely", "lonely");
        ZookeeperApps.DubboProvider only = oneMore;
        EndpointStream stream = streamWithOneMore("org.demo.lonely.dubbo");

        apps.unregister(only);
        ticker.jump(Duration.ofSeconds(1));
        await().atMost(WAIT)
                .until(() -> stream.endpointsOf("org.demo.lonely.dubbo").isEmpty());
        assertThat(stream.removals())
                .as("an endpoint left; no cluster did")
                .singleElement()
                .asString()
                .contains("org.demo.lonely.dubbo lost");
        assertThat(stream.clusters()).anyMatch(c -> c.contains("org.demo.lonely.dubbo"));
        assertThat(bridge.aggregator().current().service("org.demo.lonely.dubbo"))
                .isNotNull();
    }
}
