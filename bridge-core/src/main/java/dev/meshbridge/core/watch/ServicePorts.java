package dev.meshbridge.core.watch;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The one rule for a service's ports, from the ports its endpoints serve. Per port name:
 *
 * <ol>
 *   <li>the protocol is the one the endpoints give that name; when they disagree, the first in {@link Protocol}
 *       order, so the result does not depend on instance order;
 *   <li>the number is the configured {@code servicePorts} entry, else the protocol's default (dubbo 20880, tri 50051,
 *       http 80...), else the lowest endpoint port of that name (see {@link RegistryConfig#servicePort}).
 * </ol>
 *
 * Collect with {@link #add} for every port of every endpoint, then read {@link #list()}.
 */
public final class ServicePorts {

    private final RegistryConfig config;
    private final Map<String, Protocol> protocols = new TreeMap<>();
    private final Map<String, Integer> lowest = new TreeMap<>();

    public ServicePorts(RegistryConfig config) {
        this.config = config;
    }

    /** One endpoint port: its name, protocol (null for TCP) and real number. */
    public ServicePorts add(String name, Protocol protocol, int endpointPort) {
        Protocol p = protocol == null ? Protocol.TCP : protocol;
        protocols.merge(name, p, (a, b) -> a.compareTo(b) <= 0 ? a : b);
        lowest.merge(name, endpointPort, Math::min);
        return this;
    }

    /** The service ports of these endpoints, each port name's protocol given by {@code protocolOf}. */
    public static List<ServicePort> of(
            RegistryConfig config, List<Endpoint> endpoints, Function<String, Protocol> protocolOf) {
        ServicePorts ports = new ServicePorts(config);
        for (Endpoint e : endpoints)
            e.ports().forEach((name, number) -> ports.add(name, protocolOf.apply(name), number));
        return ports.list();
    }

    /** The service ports, sorted by name. */
    public List<ServicePort> list() {
        List<ServicePort> out = new ArrayList<>(protocols.size());
        protocols.forEach((name, protocol) ->
                out.add(new ServicePort(name, config.servicePort(name, protocol, lowest.get(name)), protocol)));
        return out;
    }
}
