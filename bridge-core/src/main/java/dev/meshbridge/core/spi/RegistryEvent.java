package dev.meshbridge.core.spi;

/**
 * What a watcher tells the aggregator. The contract every watcher keeps:
 *
 * <ol>
 *   <li>a {@link ServiceUpsert} carries the <em>full</em> endpoint list of one service from one registry (one
 *       shard), never a partial change; sending the same list again changes nothing;
 *   <li>an upsert with an empty list means the registry still knows the service but it has no instance: its host
 *       stays in the catalog with no endpoints (its Envoy cluster and ServiceEntry stay, so routes naming it never
 *       point at a missing cluster); a {@link ServiceRemoval} means the registry no longer has the service: its shard
 *       goes. In both cases the registry's empty-service policy may first keep the last endpoints for a grace period;
 *   <li>a {@link RegistrySynced} lists every service the registry has after a full (re)sync, first at start and again
 *       after each reconnect; shards of that registry not in the list are removed as by a {@link ServiceRemoval};
 *   <li>watchers send through the kit's {@code ShardPublisher}, which holds removals back for the re-registration
 *       window, during a warm-up after a reconnect, and while the deletion guard holds them;
 *   <li>errors are not events: a watcher that loses its registry reports it on its {@link RegistryStatus} and sends
 *       nothing, so the last good state stays.
 * </ol>
 */
public sealed interface RegistryEvent permits ServiceUpsert, ServiceRemoval, RegistrySynced {

    /** The registry (by configured name) this event is about. */
    String registry();
}
