package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.registry.zookeeper.ZookeeperOptions;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ProxylessZookeeperScenarios} with grpc-java's own xDS client ({@code io.grpc:grpc-xds}, the build's gRPC
 * version), and what only this client is run through here: the ZooKeeper watcher restarted by a configuration change
 * and ZooKeeper itself restarted, under steady calls, with no call failing.
 */
class GrpcXdsZookeeperEndToEndTest extends ProxylessZookeeperScenarios {

    private static final Logger log = LoggerFactory.getLogger(GrpcXdsZookeeperEndToEndTest.class);

    @Override
    ProxylessClient newClient(int xdsPort) {
        return new GrpcJavaClient(xdsPort);
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
