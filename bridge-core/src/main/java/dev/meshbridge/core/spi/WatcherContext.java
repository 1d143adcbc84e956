package dev.meshbridge.core.spi;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.util.Objects;

/**
 * What a watcher gets from the bridge.
 *
 * @param config its validated configuration entry
 * @param events where it sends events (thread-safe)
 * @param status where it reports connection state, syncs, skipped items and errors
 * @param runtime time and host-name lookups (real ones in production; tests inject their own)
 */
public record WatcherContext(RegistryConfig config, EventSink events, RegistryStatus status, WatcherRuntime runtime) {

    public WatcherContext {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(runtime, "runtime");
    }

    /** A context with real time and the system resolver. */
    public WatcherContext(RegistryConfig config, EventSink events, RegistryStatus status) {
        this(config, events, status, WatcherRuntime.system());
    }

    public String registry() {
        return config.name();
    }
}
