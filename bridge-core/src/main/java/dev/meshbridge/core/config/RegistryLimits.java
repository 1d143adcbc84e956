package dev.meshbridge.core.config;

/**
 * How much one registry may put into the catalog: the {@code limits:} map of a {@code registries[]} entry. What passes
 * a limit is left out and reported (a WARN naming the item and the limit, {@code meshbridge_registry_skipped_total} or
 * {@code meshbridge_registry_dropped_labels_total}); the rest of the registry keeps working.
 *
 * @param maxServices services the registry may serve; a new service past it is left out until another goes
 * @param maxInstances instances over all its services that the registry has now; a change that would pass it is left
 *     out (the service keeps what it had). Endpoints still served after they left (re-registration window, warm-up,
 *     deletion guard) do not count
 * @param maxLabelsPerInstance labels one instance may carry; the rest (in key order) are dropped
 */
public record RegistryLimits(int maxServices, int maxInstances, int maxLabelsPerInstance) {

    public static final RegistryLimits DEFAULTS = new RegistryLimits(20_000, 200_000, 128);

    public RegistryLimits {
        if (maxServices < 1 || maxInstances < 1 || maxLabelsPerInstance < 0) {
            throw new IllegalArgumentException("registry limits must be positive");
        }
    }

    /** Parses the {@code limits:} map of a registry entry (problems recorded on the node). */
    public static RegistryLimits parse(ConfigNode s) {
        return new RegistryLimits(
                s.integer("maxServices", DEFAULTS.maxServices(), 1, Integer.MAX_VALUE),
                s.integer("maxInstances", DEFAULTS.maxInstances(), 1, Integer.MAX_VALUE),
                s.integer("maxLabelsPerInstance", DEFAULTS.maxLabelsPerInstance(), 0, 10_000));
    }
}
