package dev.meshbridge.core.testing;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;
import java.util.List;

/**
 * A registry type {@code static} for tests and the embedded demo of other modules: its services are given in the
 * configuration (an option {@code services: [name, ...]}) and it sends nothing by itself; tests drive the sink.
 */
public final class TestRegistryProvider implements RegistryWatcherProvider {

    /** Options of the test type. */
    public record Options(List<String> services, String label) {}

    @Override
    public String type() {
        return "test";
    }

    @Override
    public int defaultPort() {
        return 9999;
    }

    @Override
    public Object parseOptions(ConfigNode entry) {
        return new Options(entry.strings("services"), entry.string("label", ""));
    }

    @Override
    public RegistryWatcher create(RegistryConfig config, WatcherContext context) {
        return new RegistryWatcher() {
            @Override
            public void start() {
                context.status().connected();
                context.status().synced();
            }

            @Override
            public void close() {
                context.status().stopped();
            }
        };
    }
}
