package dev.meshbridge.core.watch;

import java.util.Objects;

/**
 * What a watcher takes from its environment rather than from the system directly, so tests can drive it: time
 * (delays, retries, refreshes) and host-name lookups.
 *
 * @param ticker time and delayed tasks
 * @param lookup how host names are looked up
 */
public record WatcherRuntime(Ticker ticker, HostResolver.Lookup lookup) {

    private static final WatcherRuntime SYSTEM = new WatcherRuntime(Ticker.system(), HostResolver.Lookup.SYSTEM);

    public WatcherRuntime {
        Objects.requireNonNull(ticker, "ticker");
        Objects.requireNonNull(lookup, "lookup");
    }

    /** Real time and the system resolver. */
    public static WatcherRuntime system() {
        return SYSTEM;
    }
}
