package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.AdsTestClient;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.registry.zookeeper.ZookeeperOptions;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ProxylessZookeeperScenarios} with grpc-java's own xDS client ({@code io.grpc:grpc-xds}, the build's gRPC
 * version), and what only this client is run through here: the ZooKeeper watcher restarted by a configuration change
 * and ZooKeeper itself restarted, under steady calls, with no call failing; and the bridge itself restarted while its
 * registry is slow to sync or down (first answers held; the last good catalog served from the data directory).
 */
class GrpcXdsZookeeperEndToEndTest extends ProxylessZookeeperScenarios {

    private static final Logger log = LoggerFactory.getLogger(GrpcXdsZookeeperEndToEndTest.class);

    private static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    private static final String ENDPOINT = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

    /** Between the bridge and ZooKeeper in the restart tests: cut, the registry is down for the bridge only. */
    private TcpProxy proxy;
    /** The xDS port the restart tests keep across bridge restarts. */
    private int xdsPort;

    private final List<AutoCloseable> closeables = new java.util.ArrayList<>();

    @Override
    ProxylessClient newClient(int xdsPort) {
        return new GrpcJavaClient(xdsPort);
    }

    @AfterEach
    void stopProxy() throws Exception {
        for (AutoCloseable c : closeables) c.close();
        if (proxy != null) proxy.close();
    }

    @Test
    void watcherRestartedByAConfigChange_andZookeeperRestarted_noRpcFails() throws Exception {
        startWithTwoBackendsEach();
        RegistryReconciler.Running first = zookeeperWatcher();
        long sequence = bridge.aggregator().flushNow().join().sequence();

        client.startTraffic(List.of(ORDERS, SHOP, GREETER));
        try {
            awaitTraffic(20);

            // 1. the registry's entry changes: the reconciler stops this watcher and starts a new one
            Files.writeString(file, config(Duration.ofSeconds(12)));
            bridge.checkConfigFile();
            RegistryReconciler.Running second = zookeeperWatcher();
            assertThat(second.watcher()).isNotSameAs(first.watcher());
            assertThat(second.config().options(ZookeeperOptions.class).sessionTimeout())
                    .isEqualTo(Duration.ofSeconds(12));
            assertThat(first.status().state()).isEqualTo(RegistryStatus.State.STOPPED);
            await().atMost(WAIT).until(() -> second.status().hasSynced());
            awaitTraffic(40);
            assertNothingPublishedSince(sequence, "the new watcher's first sync found what the old one had");
            // the new watcher follows ZooKeeper
            springBackend("orders-3");
            awaitAnsweredBy(ORDERS, "orders-1", "orders-2", "orders-3");

            // 2. ZooKeeper restarts: the watcher is cut off, reconnects and resyncs, and the registering clients
            // re-register every instance (curator x-discovery deletes and re-creates them after a reconnect)
            sequence = bridge.aggregator().flushNow().join().sequence();
            Map<String, Long> registrations = apps.registrations();
            long syncs = second.status().syncCount();
            zk.restart();
            await().atMost(WAIT)
                    .until(() -> second.status().syncCount() > syncs
                            && second.status().state() == RegistryStatus.State.UP);
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(apps.registrations())
                            .hasSameSizeAs(registrations)
                            .allSatisfy((path, created) -> assertThat(created).isNotEqualTo(registrations.get(path))));
            awaitTraffic(40);
            assertNothingPublishedSince(sequence, "the restart and the re-registrations changed nothing");
            // the watcher still follows ZooKeeper
            dubboBackend("shop-3", Map.of());
            greeterBackend("greeter-3", Map.of());
            awaitAnsweredBy(SHOP, "shop-1", "shop-2", "shop-3");
            awaitAnsweredBy(GREETER, "greeter-1", "greeter-2", "greeter-3");
            awaitTraffic(40);
        } finally {
            ProxylessClient.Calls traffic = client.stopTraffic();
            log.info(
                    "RPCs through both restarts: answered={} failed={}",
                    traffic.answered(),
                    traffic.failures().size());
            assertThat(traffic.failures())
                    .as("RPCs that failed during the restarts")
                    .isEmpty();
            assertThat(traffic.answeredBy())
                    .containsKeys("orders-1", "orders-2", "shop-1", "shop-2", "greeter-1", "greeter-2");
        }
    }

    // ------------------------------------------------------------------ restarts: a restart never takes traffic away

    @Test
    void bridgeRestartsWhileItsRegistryIsSlowToSync_firstAnswersHeld_noRpcFails() throws Exception {
        startBehindProxy(Duration.ofSeconds(60), false);
        client.startTraffic(List.of(ORDERS, SHOP));
        try {
            awaitTraffic(20);
            proxy.cut();
            restartBridge();
            // the new bridge cannot read its registry yet: it answers nothing, and the clients keep what they have
            awaitTraffic(60);
            assertThat(bridge.ready()).isFalse();
            proxy.restore();
            await().atMost(WAIT).until(bridge::ready);
            awaitTraffic(40);
            springBackend("orders-3");
            awaitAnsweredBy(ORDERS, "orders-1", "orders-2", "orders-3");
            awaitTraffic(20);
        } finally {
            ProxylessClient.Calls traffic = client.stopTraffic();
            log.info("RPCs through a restart with a slow registry: answered={}", traffic.answered());
            assertThat(traffic.failures()).as("RPCs that failed").isEmpty();
        }
    }

    @Test
    void bridgeRestartsWhileItsRegistryIsDown_servesTheCatalogFile_thenPushesOnlyWhatChanged() throws Exception {
        startBehindProxy(Duration.ofSeconds(2), true);
        Path catalogFile = dir.resolve("data").resolve("catalog.json.gz");
        await().atMost(WAIT).until(() -> Files.exists(catalogFile));
        client.startTraffic(List.of(ORDERS, SHOP));
        try {
            awaitTraffic(20);
            proxy.cut();
            restartBridge();
            // the registry's sync timeout passes: the bridge serves what it served before, from the file
            await().atMost(WAIT).until(bridge::ready);
            assertThat(bridge.staleRegistries()).containsExactly("zk");
            assertThat(bridge.aggregator().current().service(ORDERS).endpoints())
                    .hasSize(2);
            awaitTraffic(60);

            // a plain ADS client holding everything, to see what is pushed when the registry comes back
            AdsTestClient watcher = new AdsTestClient(
                    xdsPort, Node.newBuilder().setId("watcher").build());
            closeables.add(watcher);
            watcher.openDelta();
            watcher.deltaSubscribe(CLUSTER, List.of(), Map.of());
            watcher.deltaAck(watcher.nextDelta());
            watcher.deltaSubscribe(ENDPOINT, List.of(), Map.of());
            DeltaDiscoveryResponse endpoints = watcher.nextDelta();
            assertThat(endpoints.getResourcesList())
                    .as("orders and shop, Envoy's form")
                    .hasSize(2);
            watcher.deltaAck(endpoints);

            // while it is down, one service changes in the registry; then it comes back
            springBackend("orders-3");
            proxy.restore();
            await().atMost(WAIT).until(() -> bridge.staleRegistries().isEmpty());
            awaitAnsweredBy(ORDERS, "orders-1", "orders-2", "orders-3");
            DeltaDiscoveryResponse change = watcher.nextDelta();
            assertThat(change.getTypeUrl()).isEqualTo(ENDPOINT);
            assertThat(change.getResourcesList())
                    .singleElement()
                    .satisfies(r -> assertThat(r.getName()).endsWith("||" + ORDERS));
            watcher.deltaAck(change);
            bridge.aggregator().flushNow().join();
            awaitTraffic(20);
            assertThat(watcher.pending()).as("nothing else was pushed").isZero();
        } finally {
            ProxylessClient.Calls traffic = client.stopTraffic();
            log.info("RPCs through a restart with the registry down: answered={}", traffic.answered());
            assertThat(traffic.failures()).as("RPCs that failed").isEmpty();
        }
    }

    private String restartConfig(Duration syncTimeout, boolean keepCatalog) {
        return """
                admin: {enabled: false}
                mcp: {enabled: false}
                xds: {bindAddress: 127.0.0.1, port: %d}
                reload: {enabled: false}
                data: {directory: "%s", writeInterval: 100ms}
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["127.0.0.1:%d"]
                    sessionTimeout: 10s
                    syncTimeout: %ds
                """.formatted(xdsPort, keepCatalog ? dir.resolve("data") : "", proxy.port(), syncTimeout.toSeconds());
    }

    /** Two backends of orders and shop, the bridge reaching ZooKeeper through {@link #proxy} on a fixed xDS port. */
    private void startBehindProxy(Duration syncTimeout, boolean keepCatalog) throws Exception {
        proxy = new TcpProxy(zk.port());
        try (ServerSocket free = new ServerSocket(0)) {
            xdsPort = free.getLocalPort();
        }
        springBackend("orders-1");
        springBackend("orders-2");
        dubboBackend("shop-1", Map.of());
        dubboBackend("shop-2", Map.of());
        Files.writeString(file, restartConfig(syncTimeout, keepCatalog));
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
        client = newClient(xdsPort);
        awaitAnsweredBy(ORDERS, "orders-1", "orders-2");
        awaitAnsweredBy(SHOP, "shop-1", "shop-2");
    }

    /** Stops the bridge and starts a new one on the same configuration and port, as a process restart does. */
    private void restartBridge() throws Exception {
        bridge.close();
        bridge = null;
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
    }

    private RegistryReconciler.Running zookeeperWatcher() {
        Collection<RegistryReconciler.Running> running = bridge.reconciler().running();
        assertThat(running)
                .singleElement()
                .satisfies(r -> assertThat(r.watcher()).isNotNull());
        return running.iterator().next();
    }

    /**
     * No catalog was published since the one numbered {@code sequence}: nothing changed for the clients and nothing was
     * pushed to them (the aggregator publishes only changes, and the xDS server pushes only what a catalog changed).
     */
    private void assertNothingPublishedSince(long sequence, String why) {
        assertThat(bridge.aggregator().flushNow().join().sequence()).as(why).isEqualTo(sequence);
    }
}
