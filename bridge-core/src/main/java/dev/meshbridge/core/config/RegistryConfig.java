package dev.meshbridge.core.config;

import dev.meshbridge.core.model.Protocol;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One validated {@code registries[]} entry: the fields every registry has, plus the options of its type as an
 * immutable value from that type's provider. Two entries are equal exactly when a running watcher would not need a
 * restart to apply the new one.
 *
 * @param type registry type ({@code zookeeper}, {@code nacos}, ...)
 * @param name unique name of this registry in the bridge; appears in labels, metrics and logs
 * @param addresses server addresses as the type expects them ({@code host:port}, or URLs for Eureka)
 * @param emptyService what to do with a service that has no instances
 * @param syncTimeout how long {@code /ready} waits for this registry's first full sync before counting it as
 *     timed out
 * @param servicePorts virtual (service) port per port name, overriding the protocol defaults
 * @param options the type's own options, as its provider parsed them
 * @param hostNames what the watcher does with instances registered under a host name ({@code nonIpAddress}, {@code
 *     hostNameRefresh})
 * @param removals when what left the registry leaves the catalog ({@code reregistrationWindow}, {@code warmUp},
 *     {@code deletionGuard})
 * @param limits how much the registry may put into the catalog ({@code limits:})
 */
public record RegistryConfig(
        String type,
        String name,
        List<String> addresses,
        EmptyServicePolicy emptyService,
        Duration syncTimeout,
        SortedMap<String, Integer> servicePorts,
        Object options,
        HostNamePolicy hostNames,
        RemovalPolicy removals,
        RegistryLimits limits) {

    public RegistryConfig {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(name, "name");
        addresses = List.copyOf(addresses);
        Objects.requireNonNull(emptyService, "emptyService");
        Objects.requireNonNull(syncTimeout, "syncTimeout");
        servicePorts = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(servicePorts));
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(hostNames, "hostNames");
        Objects.requireNonNull(removals, "removals");
        Objects.requireNonNull(limits, "limits");
    }

    /** An entry with the default host-name policy (resolve, refreshed every 30 s), removal rules and limits. */
    public RegistryConfig(
            String type,
            String name,
            List<String> addresses,
            EmptyServicePolicy emptyService,
            Duration syncTimeout,
            SortedMap<String, Integer> servicePorts,
            Object options) {
        this(
                type,
                name,
                addresses,
                emptyService,
                syncTimeout,
                servicePorts,
                options,
                HostNamePolicy.DEFAULT,
                RemovalPolicy.DEFAULT,
                RegistryLimits.DEFAULTS);
    }

    /** The same entry with another host-name policy. */
    public RegistryConfig withHostNames(HostNamePolicy policy) {
        return new RegistryConfig(
                type, name, addresses, emptyService, syncTimeout, servicePorts, options, policy, removals, limits);
    }

    /** The same entry with other removal rules. */
    public RegistryConfig withRemovals(RemovalPolicy policy) {
        return new RegistryConfig(
                type, name, addresses, emptyService, syncTimeout, servicePorts, options, hostNames, policy, limits);
    }

    /** The type's options, cast to the provider's options type. */
    public <T> T options(Class<T> type) {
        return type.cast(options);
    }

    /**
     * The service (virtual) port for a port name: the configured {@code servicePorts} entry, else the protocol's
     * default ({@link Protocol#defaultServicePort()}), else the endpoint's own port.
     */
    public int servicePort(String portName, Protocol protocol, int endpointPort) {
        Integer configured = servicePorts.get(portName);
        if (configured != null) return configured;
        int byProtocol = protocol.defaultServicePort();
        return byProtocol > 0 ? byProtocol : endpointPort;
    }

    /** A config with only the given options, for tests and embedded use. */
    public static RegistryConfig of(String type, String name, List<String> addresses, Object options) {
        return new RegistryConfig(
                type, name, addresses, EmptyServicePolicy.DELETE, Duration.ofSeconds(30), new TreeMap<>(), options);
    }
}
