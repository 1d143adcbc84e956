package dev.meshbridge.core.model;

import java.util.Comparator;
import java.util.Objects;

/**
 * The identity of one service in one registry (one shard of the catalog): which registry it comes from and its
 * registry-native name. Parts a registry does not have are empty strings, never null.
 *
 * <p>Examples: Nacos {@code (nacos, prod, namespace=dev, group=DEFAULT_GROUP, name=orders)}; a Dubbo interface
 * {@code (zookeeper, zk1, name=org.demo.Greeter, group=g1, version=1.0.0)}; Consul {@code (consul, c1,
 * namespace=dc1, name=web)}.
 *
 * @param registryType the registry type ({@code zookeeper}, {@code nacos}, {@code consul}, {@code eureka})
 * @param registry the configured registry name, unique in the bridge
 * @param namespace namespace, datacenter or similar scope
 * @param group group (Nacos group, Dubbo group)
 * @param name service, interface or application name
 * @param version version (Dubbo)
 */
public record ServiceKey(
        String registryType, String registry, String namespace, String group, String name, String version)
        implements Comparable<ServiceKey> {

    private static final Comparator<ServiceKey> ORDER = Comparator.comparing(ServiceKey::registry)
            .thenComparing(ServiceKey::registryType)
            .thenComparing(ServiceKey::namespace)
            .thenComparing(ServiceKey::group)
            .thenComparing(ServiceKey::name)
            .thenComparing(ServiceKey::version);

    public ServiceKey {
        Objects.requireNonNull(registryType, "registryType");
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(name, "name");
        namespace = Objects.requireNonNullElse(namespace, "");
        group = Objects.requireNonNullElse(group, "");
        version = Objects.requireNonNullElse(version, "");
        if (name.isEmpty()) throw new IllegalArgumentException("service name is empty");
    }

    public static ServiceKey of(String registryType, String registry, String name) {
        return new ServiceKey(registryType, registry, "", "", name, "");
    }

    @Override
    public int compareTo(ServiceKey o) {
        return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
        StringBuilder sb =
                new StringBuilder(registryType).append(':').append(registry).append(':');
        if (!namespace.isEmpty()) sb.append(namespace).append('/');
        if (!group.isEmpty()) sb.append(group).append('/');
        sb.append(name);
        if (!version.isEmpty()) sb.append(':').append(version);
        return sb.toString();
    }
}
