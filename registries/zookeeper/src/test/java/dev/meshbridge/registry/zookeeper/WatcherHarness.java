package dev.meshbridge.registry.zookeeper;

import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.util.List;
import java.util.function.Predicate;

/**
 * A {@link ZookeeperWatcher} made by the real provider from a {@code bridge.yaml} entry, sending into a {@link
 * TestCatalog} (a real aggregator) and a {@link RecordingSink}.
 */
final class WatcherHarness implements AutoCloseable {

    final RegistryConfig config;
    final TestCatalog catalog = new TestCatalog();
    final RecordingSink events = new RecordingSink();
    final RegistryStatus status;
    final RegistryWatcher watcher;

    /**
     * @param entry the YAML of one {@code registries[]} entry, without the leading dash, e.g. {@code "type: zookeeper\n
     *     name: zk1\n addresses: [...]"}
     */
    WatcherHarness(String entry) throws ConfigException {
        this(entry, WatcherRuntime.system());
    }

    /** As {@link #WatcherHarness(String)}, with time and host-name lookups from {@code runtime}. */
    WatcherHarness(String entry, WatcherRuntime runtime) throws ConfigException {
        this.config = parse(entry);
        this.status = new RegistryStatus(config.name(), config.type());
        catalog.configure(config.name(), config.emptyService());
        WatcherContext context = new WatcherContext(
                config,
                e -> {
                    events.accept(e);
                    catalog.aggregator().accept(e);
                },
                status,
                runtime);
        this.watcher = RegistriesConfig.loadProviders().get(config.type()).create(config, context);
    }

    /** A harness for {@code name: zk} at {@code address} with extra option lines. */
    static WatcherHarness start(String address, String... options) throws ConfigException {
        return start(WatcherRuntime.system(), address, options);
    }

    static WatcherHarness start(WatcherRuntime runtime, String address, String... options) throws ConfigException {
        StringBuilder yaml = new StringBuilder("type: zookeeper\nname: zk\naddresses: [\"" + address + "\"]\n");
        for (String o : options) yaml.append(o).append('\n');
        WatcherHarness h = new WatcherHarness(yaml.toString(), runtime);
        h.watcher.start();
        return h;
    }

    static RegistryConfig parse(String entry) throws ConfigException {
        String indented = "  - " + entry.strip().replace("\n", "\n    ") + "\n";
        ConfigNode root = ConfigNode.parse("bridge.yaml", "registries:\n" + indented);
        List<RegistryConfig> list = RegistriesConfig.parse(root, RegistriesConfig.loadProviders());
        root.finish();
        return list.get(0);
    }

    int syncs() {
        return events.events(RegistrySynced.class).size();
    }

    void awaitSyncs(int n) {
        await().atMost(TestCatalog.TIMEOUT).until(() -> syncs() >= n);
    }

    MeshService awaitService(String host, Predicate<MeshService> condition) {
        return catalog.awaitService(host, condition);
    }

    MeshSnapshot snapshot() {
        return catalog.snapshot();
    }

    ZookeeperWatcher zookeeperWatcher() {
        return (ZookeeperWatcher) watcher;
    }

    @Override
    public void close() {
        watcher.close();
        catalog.close();
    }
}
