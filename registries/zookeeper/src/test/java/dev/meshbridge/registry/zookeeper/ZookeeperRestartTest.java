package dev.meshbridge.registry.zookeeper;

import static dev.meshbridge.registry.zookeeper.DubboInterfaceLevelTest.provider;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.testing.Flaps;
import dev.meshbridge.core.testing.ManualTicker;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

/**
 * A real ZooKeeper restarting under the watcher while the applications' own clients lose their sessions and register
 * again some seconds later, as they do in production: Dubbo's registry (its own {@code ZookeeperRegistry}, re-creating
 * its provider znodes on a new session after its retry period) and Spring Cloud instances (curator x-discovery,
 * re-registering after its reconnect). The watcher's time is a {@link ManualTicker}, so the warm-up lasts as long as
 * the test says.
 */
class ZookeeperRestartTest {

    private static final String SINGLE = "org.demo.Single";
    private static final String PAIR = "org.demo.Pair";

    private ZkServer zk;
    private CuratorFramework probe;

    @BeforeEach
    void start() throws Exception {
        zk = new ZkServer();
        probe = zk.client();
    }

    @AfterEach
    void stop() throws Exception {
        probe.close();
        zk.close();
    }

    /** The applications: their registry clients reach ZooKeeper through a proxy the test cuts, with 2 s sessions. */
    private static final class Applications implements AutoCloseable {
        final TcpProxy proxy;
        final DubboRegistryWriter dubbo;
        final CuratorFramework curator;
        final ServiceDiscovery<ZookeeperInstance> spring;

        Applications(ZkServer zk) throws Exception {
            proxy = new TcpProxy(zk.port());
            dubbo = new DubboRegistryWriter(proxy.address(), "/dubbo", "session=2000&retry.period=1500");
            curator = CuratorFrameworkFactory.builder()
                    .connectString(proxy.address())
                    .sessionTimeoutMs(2000)
                    .connectionTimeoutMs(2000)
                    .retryPolicy(new RetryForever(200))
                    .build();
            curator.start();
            if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper");
            spring = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
                    .client(curator)
                    .basePath("/services")
                    .serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class))
                    .build();
            spring.start();
            dubbo.register(provider("dubbo", "10.7.0.1:20880", SINGLE, ""));
            dubbo.register(provider("dubbo", "10.7.0.2:20880", PAIR, ""));
            dubbo.register(provider("dubbo", "10.7.0.3:20880", PAIR, ""));
            for (int i = 1; i <= 2; i++) {
                ServiceInstance<ZookeeperInstance> instance =
                        SpringCloudTest.springInstance("cart", "10.7.1." + i, 8080, null, Map.of());
                spring.registerService(instance);
            }
        }

        @Override
        public void close() throws Exception {
            spring.close();
            curator.close();
            dubbo.close();
            proxy.close();
        }
    }

    private int znodes() throws Exception {
        int n = 0;
        for (String path :
                List.of("/dubbo/" + SINGLE + "/providers", "/dubbo/" + PAIR + "/providers", "/services/cart")) {
            if (probe.checkExists().forPath(path) != null)
                n += probe.getChildren().forPath(path).size();
        }
        return n;
    }

    /**
     * ZooKeeper restarts with its data; the applications cannot reach it for longer than their sessions, so ZooKeeper
     * expires them and deletes their znodes (a single-provider Dubbo interface included), then the applications come
     * back and register again, Dubbo after its retry period.
     *
     * @return what the watcher sent that took something away meanwhile
     */
    private List<String> restartWhileApplicationsReregisterLate(String... options) throws Exception {
        ManualTicker ticker = new ManualTicker();
        try (Applications apps = new Applications(zk);
                WatcherHarness h = WatcherHarness.start(
                        new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM), zk.address(), options)) {
            h.awaitService("org.demo.single.dubbo", s -> s.endpoints().size() == 1);
            h.awaitService("org.demo.pair.dubbo", s -> s.endpoints().size() == 2);
            h.awaitService("cart.services.zookeeper", s -> s.endpoints().size() == 2);
            h.awaitSyncs(1);
            MeshSnapshot before = h.snapshot();
            int mark = h.events.events().size();

            apps.proxy.cut();
            zk.restart();
            // the watcher is back at once; the applications' sessions expire and their znodes go
            await().atMost(TestCatalog.TIMEOUT).ignoreExceptions().until(() -> h.syncs() >= 2 && znodes() == 0);
            apps.proxy.restore();
            await().atMost(TestCatalog.TIMEOUT).ignoreExceptions().until(() -> znodes() == 5);
            await().atMost(TestCatalog.TIMEOUT)
                    .until(() -> h.snapshot()
                                    .service("org.demo.pair.dubbo")
                                    .endpoints()
                                    .size()
                            == 2);

            // the warm-up ends with a full read
            int syncs = h.syncs();
            ticker.advance(ZookeeperWatcher.defaultWarmUp(h.config.options(ZookeeperOptions.class))
                    .plusSeconds(1));
            if (!h.config.removals().warmUpOr(Duration.ofSeconds(1)).isZero()) {
                await().atMost(TestCatalog.TIMEOUT).until(() -> h.syncs() > syncs);
            }
            ticker.advance(Duration.ofSeconds(1)); // past any re-registration window
            h.snapshot();
            List<String> flaps = Flaps.since(h.events.events(), mark);
            if (flaps.isEmpty()) {
                MeshSnapshot after = h.snapshot();
                for (String host : List.of("org.demo.single.dubbo", "org.demo.pair.dubbo", "cart.services.zookeeper")) {
                    assertThat(after.service(host).endpoints())
                            .extracting(Endpoint::address)
                            .containsExactlyElementsOf(before.service(host).endpoints().stream()
                                    .map(Endpoint::address)
                                    .toList());
                }
            }
            System.out.printf(
                    "ZooKeeper restart, applications re-registering late, options %s: %d transient removals %s%n",
                    List.of(options), flaps.size(), flaps);
            return flaps;
        }
    }

    @Test
    void restartWithItsData_applicationsReregisteringLate_nothingEverLeavesTheCatalog() throws Exception {
        assertThat(restartWhileApplicationsReregisterLate("sessionTimeout: 10s"))
                .isEmpty();
    }

    /** The same restart without the warm-up and the re-registration window: what the catalog went through before. */
    @Test
    void withoutWarmUpOrWindow_theSameRestartRemovesAndReaddsInstances() throws Exception {
        assertThat(restartWhileApplicationsReregisterLate(
                        "sessionTimeout: 10s",
                        "warmUp: 0s",
                        "reregistrationWindow: 0s",
                        "deletionGuard: {enabled: false}"))
                .isNotEmpty();
    }

    @Test
    void restartWithAnEmptyDataDirectory_tripsTheGuard_removesNothing_untilReleased() throws Exception {
        // providers written as persistent znodes (Dubbo's dynamic=false): only a wiped ZooKeeper loses them
        for (int i = 1; i <= 4; i++) {
            for (String iface : List.of("org.demo.A", "org.demo.B", "org.demo.C")) {
                String url = provider("dubbo", "10.8.0." + i + ":20880", iface, "dynamic=false");
                probe.create()
                        .creatingParentsIfNeeded()
                        .withMode(CreateMode.PERSISTENT)
                        .forPath("/dubbo/" + iface + "/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8));
            }
        }
        ManualTicker ticker = new ManualTicker();
        try (WatcherHarness h = WatcherHarness.start(
                new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM), zk.address(), "sessionTimeout: 10s")) {
            for (String host : List.of("org.demo.a.dubbo", "org.demo.b.dubbo", "org.demo.c.dubbo")) {
                h.awaitService(host, s -> s.endpoints().size() == 4);
            }
            h.awaitSyncs(1);
            MeshSnapshot before = h.snapshot();
            int mark = h.events.events().size();

            zk.restartEmpty();
            // a new session, a sync that finds nothing; the warm-up holds it, then the full read
            await().atMost(TestCatalog.TIMEOUT).until(() -> h.syncs() >= 2);
            ticker.advance(ZookeeperWatcher.defaultWarmUp(h.config.options(ZookeeperOptions.class))
                    .plusSeconds(1));
            await().atMost(TestCatalog.TIMEOUT).until(() -> h.syncs() >= 3 && h.status.guard() != null);

            assertThat(Flaps.since(h.events.events(), mark)).isEmpty();
            assertThat(h.snapshot().version()).isEqualTo(before.version());
            RegistryStatus.Guard guard = h.status.guard();
            assertThat(guard.scope()).isEqualTo("registry");
            assertThat(guard.heldEndpoints()).isEqualTo(12);
            assertThat(guard.services())
                    .extracting(RegistryStatus.HeldService::host)
                    .containsExactlyInAnyOrder("org.demo.a.dubbo", "org.demo.b.dubbo", "org.demo.c.dubbo");
            assertThat(guard.services()).allMatch(RegistryStatus.HeldService::gone);
            assertThat(h.events.events(RegistrySynced.class).getLast().services())
                    .hasSize(3);

            assertThat(h.status.release()).isTrue();
            h.catalog.awaitAbsent("org.demo.a.dubbo");
            h.catalog.awaitAbsent("org.demo.b.dubbo");
            h.catalog.awaitAbsent("org.demo.c.dubbo");
            assertThat(h.status.guard()).isNull();
        }
    }
}
