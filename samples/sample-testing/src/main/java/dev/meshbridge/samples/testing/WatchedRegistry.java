package dev.meshbridge.samples.testing;

import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.testing.TestCatalog;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The bridge's real watcher for one registry entry (made by the provider the bridge finds through {@code
 * ServiceLoader}), sending into a {@link TestCatalog}: what a sample registers is asserted as the catalog the bridge
 * would serve.
 */
public final class WatchedRegistry implements AutoCloseable {

    private final TestCatalog catalog = new TestCatalog();
    private final RegistryWatcher watcher;
    private final AtomicBoolean closed = new AtomicBoolean();

    private WatchedRegistry(RegistryConfig config) {
        RegistryWatcherProvider provider = RegistriesConfig.loadProviders().get(config.type());
        if (provider == null) throw new IllegalStateException("no watcher for registry type " + config.type());
        watcher = provider.create(config, catalog.context(config));
    }

    /** Creates and starts the watcher. */
    public static WatchedRegistry start(RegistryConfig config) {
        WatchedRegistry w = new WatchedRegistry(config);
        w.watcher.start();
        return w;
    }

    public TestCatalog catalog() {
        return catalog;
    }

    /**
     * Waits until {@code host} is in the catalog with a healthy, routable endpoint at {@code address} whose port
     * {@code portName} is {@code port}; returns the service.
     */
    public MeshService awaitEndpoint(String host, String address, String portName, int port) {
        return catalog.awaitService(
                host, s -> s.endpoints().stream().anyMatch(e -> serves(e, address, portName, port)));
    }

    private static boolean serves(Endpoint e, String address, String portName, int port) {
        return e.address().equals(address)
                && Integer.valueOf(port).equals(e.ports().get(portName))
                && e.routable()
                && e.health() == Health.HEALTHY;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        watcher.close();
        catalog.close();
    }
}
