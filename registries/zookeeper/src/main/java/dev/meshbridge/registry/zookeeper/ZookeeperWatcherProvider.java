package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;
import java.util.ArrayList;
import java.util.List;

/** Makes {@link ZookeeperWatcher}s for {@code type: zookeeper} entries (default port 2181). */
public final class ZookeeperWatcherProvider implements RegistryWatcherProvider {

    public static final String TYPE = "zookeeper";
    public static final int DEFAULT_PORT = 2181;

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public int defaultPort() {
        return DEFAULT_PORT;
    }

    @Override
    public Object parseOptions(ConfigNode entry) {
        return ZookeeperOptions.parse(entry);
    }

    /** As the default, but an address with a path ({@code zk1:2181/prod}) is refused with a pointer to chroot. */
    @Override
    public List<String> normalizeAddresses(List<String> raw, ConfigNode entry) {
        List<String> plain = new ArrayList<>();
        for (String a : raw) {
            String s = a.contains("://") ? a.substring(a.indexOf("://") + 3) : a;
            int slash = s.indexOf('/');
            if (slash >= 0 && slash < s.length() - 1) {
                entry.problem(
                        "addresses",
                        "address '" + a + "' has a path; write host:port here and the path as chroot: "
                                + s.substring(slash));
                continue;
            }
            plain.add(a);
        }
        return RegistryWatcherProvider.super.normalizeAddresses(plain, entry);
    }

    @Override
    public RegistryWatcher create(RegistryConfig config, WatcherContext context) {
        return new ZookeeperWatcher(config, config.options(ZookeeperOptions.class), context);
    }
}
