package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Renaming a registry in {@code bridge.yaml} at run time, on a real ZooKeeper: the renamed registry's watcher connects
 * and syncs before the old one is stopped and its services removed (make before break), so no snapshot the servers
 * push is without them. Before, the old registry's services were gone for the new watcher's connect and first read
 * (85 ms measured, issue 18).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RegistryRenameTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();

    @TempDir
    Path dir;

    private static String config(String name, String zk, String confirm) {
        return """
                admin: {port: 0}
                xds: {port: 0, bindAddress: 127.0.0.1}
                mcp: {enabled: false}
                reload: {interval: 1h, confirmRemoval: [%s]}
                data: {directory: ""}
                registries:
                  - type: zookeeper
                    name: %s
                    addresses: ["%s"]
                """.formatted(confirm, name, zk);
    }

    @Test
    void aRenamedZookeeperRegistry_keepsItsServicesInEverySnapshot() throws Exception {
        try (ZkServer zk = new ZkServer();
                ZookeeperApps apps = new ZookeeperApps(zk)) {
            apps.registerDubboInterface("org.demo.Orders", "orders", 20001, Map.of());
            Path file = dir.resolve("bridge.yaml");
            Files.writeString(file, config("zk-a", zk.address(), ""));
            try (Bridge bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS)) {
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> bridge.aggregator().current().services().containsKey("org.demo.orders.dubbo"));
                List<Set<String>> seen = new CopyOnWriteArrayList<>();
                bridge.aggregator()
                        .subscribe(s -> seen.add(Set.copyOf(s.services().keySet())))
                        .join();

                Files.writeString(file, config("zk-b", zk.address(), "zk-a"));
                bridge.checkConfigFile();
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> bridge.reconciler().running().stream()
                                .map(r -> r.config().name())
                                .toList()
                                .equals(List.of("zk-b")));
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> bridge.aggregator().current().services().get("org.demo.orders.dubbo") != null
                                && bridge.aggregator()
                                        .current()
                                        .services()
                                        .get("org.demo.orders.dubbo")
                                        .sources()
                                        .first()
                                        .registry()
                                        .equals("zk-b"));

                assertThat(seen)
                        .as("every snapshot from the edit on")
                        .isNotEmpty()
                        .allSatisfy(hosts -> assertThat(hosts).contains("org.demo.orders.dubbo"));
            }
        }
    }
}
