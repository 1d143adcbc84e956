package dev.meshbridge.app.admin;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.spi.RegistryStatus;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The bridge's own metrics: per registry (services, instances, skipped items, errors, dropped labels, up, time of the
 * last sync) and for the catalog as a whole. Prometheus names carry the {@code meshbridge_} prefix.
 */
public final class BridgeMetrics {

    private final MeterRegistry registry;
    private final ServiceAggregator aggregator;
    private final Map<RegistryStatus, List<Meter>> perRegistry = new ConcurrentHashMap<>();

    public BridgeMetrics(MeterRegistry registry, ServiceAggregator aggregator) {
        this.registry = registry;
        this.aggregator = aggregator;
        Gauge.builder(
                        "meshbridge.catalog.services",
                        aggregator,
                        a -> a.current().serviceCount())
                .description("Services (hosts) in the catalog")
                .register(registry);
        Gauge.builder(
                        "meshbridge.catalog.endpoints",
                        aggregator,
                        a -> a.current().endpointCount())
                .description("Endpoints in the catalog, routable or not")
                .register(registry);
        Gauge.builder("meshbridge.catalog.conflicts", aggregator, ServiceAggregator::hostConflictCount)
                .description("hosts that distinct services map to; all but the first are refused (/debug/catalog)")
                .register(registry);
        Gauge.builder("meshbridge.catalog.shared.hosts", aggregator, ServiceAggregator::sharedHostCount)
                .description("Hosts whose endpoints come from more than one registry service (shards of different"
                        + " registries or environments meeting in one host; see /debug/catalog?shared=true)")
                .register(registry);
        FunctionCounter.builder("meshbridge.catalog.snapshots", aggregator, ServiceAggregator::snapshotsPublished)
                .description("Catalog snapshots published")
                .register(registry);
        FunctionCounter.builder("meshbridge.aggregator.events", aggregator, ServiceAggregator::eventsReceived)
                .description("Registry events received by the aggregator")
                .register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** Registers the meters of one registry watcher. */
    public void add(RegistryStatus status) {
        Tags tags = Tags.of("registry", status.registry(), "type", status.type());
        List<Meter> meters = new ArrayList<>();
        meters.add(Gauge.builder("meshbridge.registry.up", status, s -> s.state() == RegistryStatus.State.UP ? 1 : 0)
                .description("1 while the registry is connected")
                .tags(tags)
                .register(registry));
        meters.add(Gauge.builder(
                        "meshbridge.registry.services", status, s -> counts(s).services())
                .description("Services from this registry in the catalog")
                .tags(tags)
                .register(registry));
        meters.add(Gauge.builder(
                        "meshbridge.registry.instances", status, s -> counts(s).endpoints())
                .description("Instances from this registry in the catalog")
                .tags(tags)
                .register(registry));
        meters.add(FunctionCounter.builder("meshbridge.registry.skipped", status, RegistryStatus::skippedCount)
                .description("Malformed registry items skipped")
                .tags(tags)
                .register(registry));
        meters.add(FunctionCounter.builder("meshbridge.registry.errors", status, RegistryStatus::errorCount)
                .description("Failed calls to the registry")
                .tags(tags)
                .register(registry));
        meters.add(
                FunctionCounter.builder("meshbridge.registry.dropped.labels", status, RegistryStatus::droppedLabelCount)
                        .description("Registry metadata entries that could not become valid labels")
                        .tags(tags)
                        .register(registry));
        meters.add(FunctionCounter.builder("meshbridge.registry.syncs", status, RegistryStatus::syncCount)
                .description("Complete syncs of the registry")
                .tags(tags)
                .register(registry));
        meters.add(Gauge.builder(
                        "meshbridge.registry.last.sync.timestamp",
                        status,
                        s -> s.lastSyncAt() == null ? 0 : s.lastSyncAt().toEpochMilli() / 1000.0)
                .description("Time of the last complete sync, seconds since the epoch (0 before the first)")
                .baseUnit("seconds")
                .tags(tags)
                .register(registry));
        meters.add(Gauge.builder(
                        "meshbridge.registry.deletion.guard.held.endpoints", status, RegistryStatus::guardHeldEndpoints)
                .description("Endpoints that left the registry and are still served because the deletion guard holds"
                        + " their removal (0 when it holds nothing)")
                .tags(tags)
                .register(registry));
        meters.add(
                FunctionCounter.builder("meshbridge.registry.deletion.guard.trips", status, RegistryStatus::guardTrips)
                        .description("Times the deletion guard started holding removals")
                        .tags(tags)
                        .register(registry));
        meters.add(Gauge.builder("meshbridge.registry.removals.held", status, s -> s.warmingUntil() != null ? 1 : 0)
                .description("1 while removals are held after a reconnect (the warm-up)")
                .tags(tags)
                .register(registry));
        List<Meter> previous = perRegistry.put(status, meters);
        if (previous != null) previous.forEach(registry::remove);
    }

    /** Removes the meters of a registry watcher that stopped. */
    public void remove(RegistryStatus status) {
        List<Meter> meters = perRegistry.remove(status);
        if (meters != null) meters.forEach(registry::remove);
    }

    private ServiceAggregator.RegistryCounts counts(RegistryStatus s) {
        return aggregator.registryCounts().getOrDefault(s.registry(), new ServiceAggregator.RegistryCounts(0, 0));
    }
}
