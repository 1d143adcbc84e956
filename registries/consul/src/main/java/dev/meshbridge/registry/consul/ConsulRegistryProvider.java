package dev.meshbridge.registry.consul;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The {@code consul} registry type: parses its options and creates {@link ConsulWatcher}s. */
public final class ConsulRegistryProvider implements RegistryWatcherProvider {

    public static final String TYPE = "consul";
    public static final int DEFAULT_PORT = 8500;

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
        return ConsulOptions.parse(entry);
    }

    /**
     * Addresses are {@code host[:port]}; a {@code http://} prefix is accepted, and {@code https://} only together with
     * a {@code tls} section (HTTPS is switched on there, for every address).
     */
    @Override
    public List<String> normalizeAddresses(List<String> raw, ConfigNode entry) {
        List<String> plain = new ArrayList<>();
        boolean tls = entry.has("tls");
        for (String a : raw) {
            String s = a.trim();
            String lower = s.toLowerCase(Locale.ROOT);
            if (lower.startsWith("https://") && !tls) {
                entry.problem("addresses", "'" + a + "' is https: add tls: {enabled: true} (and caFile if needed)");
            } else if (s.contains("://") && !lower.startsWith("http://") && !lower.startsWith("https://")) {
                entry.problem("addresses", "'" + a + "' must be host:port (or an http/https URL)");
                continue;
            }
            plain.add(s);
        }
        return RegistryWatcherProvider.super.normalizeAddresses(plain, entry);
    }

    @Override
    public RegistryWatcher create(RegistryConfig config, WatcherContext context) {
        return new ConsulWatcher(context);
    }
}
