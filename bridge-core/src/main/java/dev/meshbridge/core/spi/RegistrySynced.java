package dev.meshbridge.core.spi;

import dev.meshbridge.core.model.ServiceKey;
import java.util.Objects;
import java.util.Set;

/**
 * A full sync of one registry finished: {@code services} is every service it has now. Shards of this registry that
 * are not listed are removed (under the registry's empty-service policy). Send it after the upserts of the sync.
 */
public record RegistrySynced(String registry, Set<ServiceKey> services) implements RegistryEvent {

    public RegistrySynced {
        Objects.requireNonNull(registry, "registry");
        services = Set.copyOf(services);
        for (ServiceKey k : services) {
            if (!k.registry().equals(registry)) {
                throw new IllegalArgumentException("service " + k + " is not from registry " + registry);
            }
        }
    }
}
