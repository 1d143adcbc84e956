package dev.meshbridge.core.spi;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.util.CompactSortedMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The full endpoint list of one service from one registry.
 *
 * @param key the shard
 * @param host the mesh host this service maps to (several shards may map to one host)
 * @param ports the service's ports; names unique; every endpoint port name must be one of them
 * @param endpoints all instances (routable or not); empty means "no instances"
 * @param labels service-level labels, already sanitized
 */
public record ServiceUpsert(
        ServiceKey key,
        String host,
        List<ServicePort> ports,
        List<Endpoint> endpoints,
        SortedMap<String, String> labels)
        implements RegistryEvent {

    public ServiceUpsert {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(host, "host");
        if (!Dns1123.isSubdomain(host)) throw new IllegalArgumentException("host '" + host + "' is not DNS-1123");
        ports = List.copyOf(ports);
        endpoints = List.copyOf(endpoints);
        labels = CompactSortedMap.copyOf(labels);
        Set<String> names = new HashSet<>();
        for (ServicePort p : ports) {
            if (!names.add(p.name()))
                throw new IllegalArgumentException(key + ": port name '" + p.name() + "' appears twice");
        }
        for (Endpoint e : endpoints) {
            for (String portName : e.ports().keySet()) {
                if (!names.contains(portName)) {
                    throw new IllegalArgumentException(key + ": endpoint " + e.address() + " uses port '" + portName
                            + "', which the service does not declare " + names);
                }
            }
        }
        for (Map.Entry<String, String> l : labels.entrySet()) {
            if (!Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue())) {
                throw new IllegalArgumentException(key + ": service label " + l.getKey() + "=" + l.getValue()
                        + " is not valid (sanitize it first)");
            }
        }
    }

    public ServiceUpsert(ServiceKey key, String host, List<ServicePort> ports, List<Endpoint> endpoints) {
        this(key, host, ports, endpoints, new TreeMap<>());
    }

    @Override
    public String registry() {
        return key.registry();
    }
}
