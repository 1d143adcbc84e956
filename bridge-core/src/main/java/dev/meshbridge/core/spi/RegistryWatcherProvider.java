package dev.meshbridge.core.spi;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes watchers of one registry type; found through {@link java.util.ServiceLoader}, one per type. A registry module
 * registers its provider in {@code META-INF/services/dev.meshbridge.core.spi.RegistryWatcherProvider}.
 */
public interface RegistryWatcherProvider {

    /** The {@code type} value in {@code registries[]} this provider serves, e.g. {@code zookeeper}. */
    String type();

    /** The port used for an address given without one (and for Higress's {@code domain} without {@code port}). */
    int defaultPort();

    /**
     * Parses and validates the type's own fields of one {@code registries[]} entry. Problems are recorded on {@code
     * entry} (with their line); the result must still be non-null. The returned value must be immutable and have
     * value equality: the reconciler restarts a watcher exactly when its options stop being equal.
     */
    Object parseOptions(ConfigNode entry);

    /**
     * Normalizes the entry's addresses: by default each must be {@code host[:port]} and gets {@link #defaultPort()}
     * when it has no port. Types whose addresses are URLs override this.
     */
    default List<String> normalizeAddresses(List<String> raw, ConfigNode entry) {
        List<String> out = new ArrayList<>();
        for (String a : raw) {
            String s = a.trim();
            if (s.contains("://")) s = s.substring(s.indexOf("://") + 3);
            if (s.endsWith("/")) s = s.substring(0, s.length() - 1);
            int colon = s.lastIndexOf(':');
            if (colon < 0 || s.endsWith("]")) {
                out.add(s + ":" + defaultPort());
                continue;
            }
            String port = s.substring(colon + 1);
            try {
                int p = Integer.parseInt(port);
                if (p < 1 || p > 65535) throw new NumberFormatException();
                out.add(s);
            } catch (NumberFormatException e) {
                entry.problem("addresses", "address '" + a + "' has an invalid port '" + port + "'");
            }
        }
        return out;
    }

    /** Creates (does not start) a watcher for a validated entry. */
    RegistryWatcher create(RegistryConfig config, WatcherContext context);
}
