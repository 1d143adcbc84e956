package dev.meshbridge.core.spi;

import dev.meshbridge.core.model.ServiceKey;
import java.util.Objects;

/** The service is gone from its registry: its shard leaves the catalog (an upsert with no endpoints keeps the host). */
public record ServiceRemoval(ServiceKey key) implements RegistryEvent {

    public ServiceRemoval {
        Objects.requireNonNull(key, "key");
    }

    @Override
    public String registry() {
        return key.registry();
    }
}
