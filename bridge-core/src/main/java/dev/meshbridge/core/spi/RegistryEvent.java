package dev.meshbridge.core.spi;

/**
 * What a watcher tells the aggregator. The contract every watcher keeps:
 *
 * <ol>
 *   <li>a {@link ServiceUpsert} carries the <em>full</em> endpoint list of one service from one registry (one
 *       shard), never a partial change; sending the same list again changes nothing;
 *   <li>an upsert with an empty list, or a {@link ServiceRemoval}, means the service has no instances: the registry's
 *       empty-service policy decides whether it goes at once or after a grace period;
 *   <li>a {@link RegistrySynced} lists every service the registry has after a full (re)sync, first at start and again
 *       after each reconnect; shards of that registry not in the list are removed as in 2;
 *   <li>errors are not events: a watcher that loses its registry reports it on its {@link RegistryStatus} and sends
 *       nothing, so the last good state stays.
 * </ol>
 */
public sealed interface RegistryEvent permits ServiceUpsert, ServiceRemoval, RegistrySynced {

    /** The registry (by configured name) this event is about. */
    String registry();
}
