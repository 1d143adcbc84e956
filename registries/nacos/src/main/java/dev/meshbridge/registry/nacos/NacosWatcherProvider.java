package dev.meshbridge.registry.nacos;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;

/** Makes {@link NacosWatcher}s for {@code type: nacos} registries (Nacos 2.x and 3.x servers, default port 8848). */
public final class NacosWatcherProvider implements RegistryWatcherProvider {

    public static final int DEFAULT_PORT = 8848;

    @Override
    public String type() {
        return NacosWatcher.TYPE;
    }

    @Override
    public int defaultPort() {
        return DEFAULT_PORT;
    }

    @Override
    public Object parseOptions(ConfigNode entry) {
        return NacosOptions.parse(entry);
    }

    @Override
    public RegistryWatcher create(RegistryConfig config, WatcherContext context) {
        return new NacosWatcher(config, context);
    }
}
