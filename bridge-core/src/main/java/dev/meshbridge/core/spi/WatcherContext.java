package dev.meshbridge.core.spi;

import dev.meshbridge.core.config.RegistryConfig;
import java.util.Objects;

/**
 * What a watcher gets from the bridge.
 *
 * @param config its validated configuration entry
 * @param events where it sends events (thread-safe)
 * @param status where it reports connection state, syncs, skipped items and errors
 */
public record WatcherContext(RegistryConfig config, EventSink events, RegistryStatus status) {

    public WatcherContext {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(status, "status");
    }

    public String registry() {
        return config.name();
    }
}
