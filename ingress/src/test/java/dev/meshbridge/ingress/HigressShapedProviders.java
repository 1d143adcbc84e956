package dev.meshbridge.ingress;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

/**
 * Registry types that accept the fields of Higress's McpBridge {@code registries[]} entries, standing in for the
 * registry modules (which parse the same field names) so the McpBridge conversion is checked without them. Each
 * refuses an unknown field, as every provider does through {@link ConfigNode}.
 */
final class HigressShapedProviders {

    record ZookeeperOptions(List<String> zkServicesPath) {}

    record NacosOptions(
            String nacosNamespaceId,
            List<String> nacosGroups,
            Duration nacosRefreshInterval,
            dev.meshbridge.core.config.Secret nacosUsername,
            dev.meshbridge.core.config.Secret nacosPassword) {}

    record ConsulOptions(String consulDatacenter, dev.meshbridge.core.config.Secret consulToken) {}

    private HigressShapedProviders() {}

    static Map<String, RegistryWatcherProvider> all() {
        return Map.of(
                "zookeeper",
                provider("zookeeper", 2181, e -> new ZookeeperOptions(e.strings("zkServicesPath"))),
                "nacos",
                provider(
                        "nacos",
                        8848,
                        e -> new NacosOptions(
                                e.string("nacosNamespaceId", ""),
                                e.strings("nacosGroups"),
                                e.duration("nacosRefreshInterval", Duration.ofSeconds(30), ChronoUnit.NANOS),
                                e.secret("nacosUsername").orElse(null),
                                e.secret("nacosPassword").orElse(null))),
                "consul",
                provider(
                        "consul",
                        8500,
                        e -> new ConsulOptions(
                                e.string("consulDatacenter", ""),
                                e.secret("consulToken").orElse(null))));
    }

    private static RegistryWatcherProvider provider(
            String type, int port, java.util.function.Function<ConfigNode, Object> parse) {
        return new RegistryWatcherProvider() {
            @Override
            public String type() {
                return type;
            }

            @Override
            public int defaultPort() {
                return port;
            }

            @Override
            public Object parseOptions(ConfigNode entry) {
                return parse.apply(entry);
            }

            @Override
            public RegistryWatcher create(RegistryConfig config, WatcherContext context) {
                throw new UnsupportedOperationException("conversion tests start no watcher");
            }
        };
    }
}
