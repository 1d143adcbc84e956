package dev.meshbridge.app;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.util.LogText;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the running watchers equal to the configured registries, as Higress's registry reconciler does.
 *
 * <p>{@link #apply} compares the new {@code registries:} list with the running watchers by name:
 *
 * <ol>
 *   <li>a new name starts a watcher;
 *   <li>a removed name stops its watcher and removes its services from the catalog, after the new names' watchers
 *       have had their first sync (or their {@code syncTimeout} passed): make before break, so a renamed registry's
 *       services are never missing in between;
 *   <li>a changed entry (not {@code equals}) restarts only that watcher; its services stay in the catalog meanwhile,
 *       and the new watcher's first full sync removes what it no longer finds; the new watcher counts as ready
 *       while it resyncs when the old one had synced (its state is still served);
 *   <li>an unchanged entry is left alone: its watcher keeps its connections and state.
 * </ol>
 */
public final class RegistryReconciler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RegistryReconciler.class);

    /** One running watcher with its configuration and status. */
    public record Running(RegistryConfig config, RegistryWatcher watcher, RegistryStatus status) {}

    private final ServiceAggregator aggregator;
    private final Map<String, RegistryWatcherProvider> providers;
    private final Consumer<RegistryStatus> onAdded;
    private final Consumer<RegistryStatus> onRemoved;
    private final WatcherRuntime runtime;
    private final Map<String, Running> running = new LinkedHashMap<>();
    private boolean closed;

    /**
     * @param onAdded called for each new registry status (to register its metrics)
     * @param onRemoved called for each status that goes away
     */
    public RegistryReconciler(
            ServiceAggregator aggregator,
            Map<String, RegistryWatcherProvider> providers,
            Consumer<RegistryStatus> onAdded,
            Consumer<RegistryStatus> onRemoved) {
        this(aggregator, providers, onAdded, onRemoved, WatcherRuntime.system());
    }

    /** @param runtime the watchers' time and host-name lookups */
    public RegistryReconciler(
            ServiceAggregator aggregator,
            Map<String, RegistryWatcherProvider> providers,
            Consumer<RegistryStatus> onAdded,
            Consumer<RegistryStatus> onRemoved,
            WatcherRuntime runtime) {
        this.aggregator = aggregator;
        this.providers = Map.copyOf(providers);
        this.onAdded = onAdded;
        this.onRemoved = onRemoved;
        this.runtime = runtime;
    }

    /** Brings the running watchers in line with {@code configs}; returns what it did, one line per registry. */
    public synchronized List<String> apply(List<RegistryConfig> configs) {
        if (closed) return List.of();
        List<String> actions = new ArrayList<>();
        Map<String, RegistryConfig> wanted = new LinkedHashMap<>();
        for (RegistryConfig c : configs) wanted.put(c.name(), c);

        List<Running> started = new ArrayList<>();
        for (RegistryConfig c : wanted.values()) {
            Running r = running.get(c.name());
            if (r != null && r.config().equals(c)) continue;
            RegistryStatus previous = null;
            if (r != null) {
                stop(r);
                onRemoved.accept(r.status());
                previous = r.status();
                actions.add("restarted " + c.name());
            } else {
                actions.add("started " + c.name());
            }
            Running next = start(c, previous);
            running.put(c.name(), next);
            if (r == null) started.add(next);
        }
        List<String> removed = new ArrayList<>();
        for (String name : running.keySet()) {
            if (!wanted.containsKey(name)) removed.add(name);
        }
        if (!removed.isEmpty()) awaitFirstSync(started);
        for (String name : removed) {
            Running r = running.remove(name);
            stop(r);
            aggregator.removeRegistry(name);
            onRemoved.accept(r.status());
            actions.add("removed " + name);
        }
        for (String a : actions) log.info("registries: {}", a);
        return actions;
    }

    /** Waits until each new registry has synced once or passed its {@code syncTimeout} (make before break). */
    private static void awaitFirstSync(List<Running> started) {
        for (Running r : started) {
            long deadline = System.nanoTime() + r.config().syncTimeout().toNanos();
            while (r.watcher() != null && !r.status().hasSynced() && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
            }
        }
    }

    private Running start(RegistryConfig config, RegistryStatus previous) {
        RegistryStatus status = new RegistryStatus(config.name(), config.type());
        status.takeOverFrom(previous);
        onAdded.accept(status);
        aggregator.configureRegistry(config.name(), config.emptyService());
        RegistryWatcherProvider provider = providers.get(config.type());
        RegistryWatcher watcher = null;
        try {
            watcher = provider.create(config, new WatcherContext(config, aggregator, status, runtime));
            watcher.start();
            log.info(
                    "registry={} type={} addresses={} watching",
                    config.name(),
                    config.type(),
                    config.addresses().stream().map(LogText::safe).toList());
        } catch (RuntimeException e) {
            status.error("cannot start the watcher", e);
            status.disconnected("watcher failed to start: " + e.getMessage());
            if (watcher != null) closeQuietly(watcher);
            watcher = null;
        }
        return new Running(config, watcher, status);
    }

    private static void stop(Running r) {
        if (r.watcher() != null) closeQuietly(r.watcher());
        r.status().stopped();
    }

    private static void closeQuietly(RegistryWatcher w) {
        try {
            w.close();
        } catch (RuntimeException e) {
            log.warn("watcher {} failed to close cleanly", w, e);
        }
    }

    /** The running registries, in configuration order. */
    public synchronized Collection<Running> running() {
        return List.copyOf(running.values());
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        List<Running> all = new ArrayList<>(running.values());
        java.util.Collections.reverse(all);
        for (Running r : all) stop(r);
        running.clear();
    }
}
