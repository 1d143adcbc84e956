package dev.meshbridge.registry.zookeeper;

import static dev.meshbridge.registry.zookeeper.DubboInterfaceLevelTest.provider;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.KillSession;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

/**
 * Outages: the watcher's session expiring, its connection cut while writers go on, ZooKeeper restarting. The catalog
 * keeps its last state while the watcher is disconnected, then changes by exactly what changed in ZooKeeper.
 */
class ConnectionTest {

    private ZkServer zk;
    private DubboRegistryWriter dubbo;
    private CuratorFramework writer;
    private ServiceDiscovery<ZookeeperInstance> spring;

    @BeforeEach
    void start() throws Exception {
        zk = new ZkServer();
        dubbo = new DubboRegistryWriter(zk.address());
        writer = zk.client();
        spring = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
                .client(writer)
                .basePath("/services")
                .serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class))
                .build();
        spring.start();
    }

    @AfterEach
    void stop() throws Exception {
        spring.close();
        writer.close();
        dubbo.close();
        zk.close();
    }

    private static List<RegistryEvent> changesAfter(WatcherHarness h, int index) {
        List<RegistryEvent> all = h.events.events();
        return all.subList(index, all.size()).stream()
                .filter(e -> !(e instanceof RegistrySynced))
                .toList();
    }

    @Test
    void sessionExpiry_keepsTheCatalog_resyncsWithoutChanges_andFollowsLaterChanges() throws Exception {
        dubbo.register(provider("dubbo", "10.0.6.1:20880", "org.demo.Expiring", ""));
        spring.registerService(SpringCloudTest.springInstance("cart", "10.0.6.9", 8080, null, Map.of()));
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "sessionTimeout: 3s")) {
            h.awaitService("org.demo.expiring.dubbo", s -> s.endpoints().size() == 1);
            h.awaitService("cart.services.zookeeper", s -> s.endpoints().size() == 1);
            h.awaitSyncs(1);
            MeshSnapshot before = h.snapshot();
            int seen = h.events.events().size();

            KillSession.kill(h.zookeeperWatcher().client().getZookeeperClient().getZooKeeper());

            h.awaitSyncs(2);
            assertThat(changesAfter(h, seen)).isEmpty();
            assertThat(h.snapshot().version()).isEqualTo(before.version());
            assertThat(h.status.state()).isEqualTo(RegistryStatus.State.UP);

            dubbo.register(provider("dubbo", "10.0.6.2:20880", "org.demo.Expiring", ""));
            h.awaitService("org.demo.expiring.dubbo", s -> s.endpoints().size() == 2);
        }
    }

    @Test
    void connectionCut_keepsTheLastState_thenShowsExactlyWhatChangedMeanwhile() throws Exception {
        String kept = provider("dubbo", "10.0.7.1:20880", "org.demo.Kept", "");
        String grows = provider("dubbo", "10.0.7.2:20880", "org.demo.Grows", "");
        String goes = provider("dubbo", "10.0.7.3:20880", "org.demo.Goes", "");
        dubbo.register(kept);
        dubbo.register(grows);
        dubbo.register(goes);
        try (TcpProxy proxy = new TcpProxy(zk.port());
                WatcherHarness h = WatcherHarness.start(proxy.address(), "sessionTimeout: 20s", "warmUp: 0s")) {
            h.awaitService("org.demo.goes.dubbo", s -> true);
            h.awaitSyncs(1);
            MeshSnapshot before = h.snapshot();
            int seen = h.events.events().size();

            proxy.cut();
            await().atMost(TestCatalog.TIMEOUT).until(() -> h.status.state() == RegistryStatus.State.DOWN);

            dubbo.register(provider("dubbo", "10.0.7.4:20880", "org.demo.Grows", ""));
            dubbo.unregister(goes);
            spring.registerService(SpringCloudTest.springInstance("late", "10.0.7.9", 8080, null, Map.of()));

            await().during(Duration.ofMillis(600))
                    .atMost(TestCatalog.TIMEOUT)
                    .until(() -> h.snapshot().version().equals(before.version())
                            && h.events.events().size() == seen);
            assertThat(h.snapshot().service("org.demo.goes.dubbo")).isNotNull();

            proxy.restore();
            h.awaitSyncs(2);
            // with no warm-up, what left meanwhile leaves after the re-registration window
            h.awaitService("org.demo.goes.dubbo", s -> s.endpoints().isEmpty());
            MeshSnapshot after = h.snapshot();
            assertThat(after.service("org.demo.grows.dubbo").endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.7.2", "10.0.7.4");
            assertThat(after.service("late.services.zookeeper")).isNotNull();
            assertThat(after.service("org.demo.kept.dubbo").version())
                    .isEqualTo(before.service("org.demo.kept.dubbo").version());
            assertThat(changesAfter(h, seen))
                    .extracting(ConnectionTest::describe)
                    .containsExactlyInAnyOrder("upsert org.demo.Grows", "emptied org.demo.Goes", "upsert late");
            assertThat(h.status.state()).isEqualTo(RegistryStatus.State.UP);
        }
    }

    @Test
    void sessionExpiredWhileCut_newSessionResyncsEverything() throws Exception {
        dubbo.register(provider("dubbo", "10.0.8.1:20880", "org.demo.Long", ""));
        try (TcpProxy proxy = new TcpProxy(zk.port());
                // 4 s: a 1 s session (its client gives up on a silent connection after 2/3 of it) expired by itself
                // on a loaded machine before the cut, and the sync of that new session passed for the later resync
                WatcherHarness h = WatcherHarness.start(proxy.address(), "sessionTimeout: 4s")) {
            h.awaitService("org.demo.long.dubbo", s -> true);
            h.awaitSyncs(1);
            // an ephemeral node of the watcher's session shows when ZooKeeper has expired that session
            h.zookeeperWatcher()
                    .client()
                    .create()
                    .withMode(CreateMode.EPHEMERAL)
                    .forPath("/probe");

            proxy.cut();
            await().atMost(TestCatalog.TIMEOUT).until(() -> writer.checkExists().forPath("/probe") == null);
            dubbo.register(provider("dubbo", "10.0.8.2:20880", "org.demo.Long", ""));
            assertThat(h.snapshot().service("org.demo.long.dubbo").endpoints()).hasSize(1);

            int syncsBeforeRestore = h.syncs();
            proxy.restore();
            h.awaitSyncs(syncsBeforeRestore + 1);
            assertThat(h.snapshot().service("org.demo.long.dubbo").endpoints()).hasSize(2);
            dubbo.register(provider("dubbo", "10.0.8.3:20880", "org.demo.Long", ""));
            h.awaitService("org.demo.long.dubbo", s -> s.endpoints().size() == 3);
        }
    }

    @Test
    void zookeeperRestart_losesNothing_andLaterChangesAppear() throws Exception {
        dubbo.register(provider("dubbo", "10.0.9.1:20880", "org.demo.Durable", ""));
        spring.registerService(SpringCloudTest.springInstance("durable", "10.0.9.9", 8080, null, Map.of()));
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "sessionTimeout: 20s")) {
            h.awaitService("org.demo.durable.dubbo", s -> true);
            h.awaitService("durable.services.zookeeper", s -> true);
            h.awaitSyncs(1);
            MeshSnapshot before = h.snapshot();
            int seen = h.events.events().size();

            zk.restart();

            h.awaitSyncs(2);
            assertThat(changesAfter(h, seen)).isEmpty();
            assertThat(h.snapshot().version()).isEqualTo(before.version());

            dubbo.register(provider("dubbo", "10.0.9.2:20880", "org.demo.Durable", ""));
            h.awaitService("org.demo.durable.dubbo", s -> s.endpoints().size() == 2);
        }
    }

    private static String describe(RegistryEvent e) {
        return switch (e) {
            case ServiceUpsert u ->
                (u.endpoints().isEmpty() ? "emptied " : "upsert ") + u.key().name();
            case ServiceRemoval r -> "removal " + r.key().name();
            case RegistrySynced s -> "synced";
        };
    }
}
