package dev.meshbridge.core.spi;

import dev.meshbridge.core.model.ServiceKey;
import java.util.Objects;

/** The service is gone from its registry (same effect as an upsert with no endpoints). */
public record ServiceRemoval(ServiceKey key) implements RegistryEvent {

    public ServiceRemoval {
        Objects.requireNonNull(key, "key");
    }

    @Override
    public String registry() {
        return key.registry();
    }
}
