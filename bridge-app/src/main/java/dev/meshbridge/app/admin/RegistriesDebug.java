package dev.meshbridge.app.admin;

import dev.meshbridge.app.RegistryReconciler;
import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code /debug/registries}: each configured registry, its options (credentials masked, host naming schemes as the
 * templates in force), state and counters, and its removal rules with what they hold now (a warm-up after a reconnect,
 * the deletion guard).
 */
public final class RegistriesDebug implements DebugSource {

    /** One registry. */
    public record Registry(
            String name,
            String type,
            List<String> addresses,
            String state,
            boolean synced,
            Instant lastSync,
            String lastError,
            Instant lastErrorAt,
            int services,
            long instances,
            long skipped,
            long errors,
            long droppedLabels,
            Removals removals,
            Object options) {}

    /**
     * The registry's removal rules and what they hold.
     *
     * @param reregistrationWindow how long an instance that left is still served
     * @param warmUp the warm-up in force after a reconnect
     * @param heldUntil removals are held until then (a warm-up is running), or null
     * @param guard the deletion guard's rule
     * @param deletionGuard what the guard holds now, or null
     * @param guardTrips how many times it tripped
     */
    public record Removals(
            java.time.Duration reregistrationWindow,
            java.time.Duration warmUp,
            Instant heldUntil,
            dev.meshbridge.core.config.RemovalPolicy.Guard guard,
            Object deletionGuard,
            long guardTrips) {}

    private final Supplier<java.util.Collection<RegistryReconciler.Running>> running;
    private final ServiceAggregator aggregator;

    public RegistriesDebug(
            Supplier<java.util.Collection<RegistryReconciler.Running>> running, ServiceAggregator aggregator) {
        this.running = running;
        this.aggregator = aggregator;
    }

    @Override
    public String name() {
        return "registries";
    }

    @Override
    public String description() {
        return "configured registries: connection state, last sync, counters, options (credentials masked, host"
                + " templates in force)";
    }

    @Override
    public Object debug(Map<String, String> query) {
        Map<String, ServiceAggregator.RegistryCounts> counts = aggregator.registryCounts();
        return running.get().stream()
                .map(r -> {
                    var c = counts.getOrDefault(r.config().name(), new ServiceAggregator.RegistryCounts(0, 0));
                    var s = r.status();
                    return new Registry(
                            r.config().name(),
                            r.config().type(),
                            // an address with user:password@ in it (a URL a registry accepts) is shown without
                            r.config().addresses().stream()
                                    .map(dev.meshbridge.core.util.LogText::safe)
                                    .toList(),
                            s.state().name(),
                            s.hasSynced(),
                            s.lastSyncAt(),
                            s.lastError(),
                            s.lastErrorAt(),
                            c.services(),
                            c.endpoints(),
                            s.skippedCount(),
                            s.errorCount(),
                            s.droppedLabelCount(),
                            new Removals(
                                    r.config().removals().reregistrationWindow(),
                                    s.warmUp(),
                                    s.warmingUntil(),
                                    r.config().removals().guard(),
                                    s.guard() == null ? null : dev.meshbridge.app.Bridge.guard(s.guard()),
                                    s.guardTrips()),
                            r.config().options());
                })
                .toList();
    }
}
