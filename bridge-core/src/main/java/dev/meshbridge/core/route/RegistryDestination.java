package dev.meshbridge.core.route;

import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.util.CompactSortedMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A service of the registry catalog as a route destination.
 *
 * @param host the mesh host of the service ({@code MeshService#host()}), lower case
 * @param port the service port to use, or 0 for the service's own port (see {@link #servicePort(List)})
 * @param subset a subset name, or empty: a name alone refers to a subset defined elsewhere (an Istio DestinationRule,
 *     as with Higress); with {@code subsetLabels} it names the endpoints carrying those labels
 * @param subsetLabels endpoint labels selecting the subset, or empty
 */
public record RegistryDestination(String host, int port, String subset, SortedMap<String, String> subsetLabels)
        implements Destination {

    public RegistryDestination {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(subset, "subset");
        String problem = Dns1123.subdomainProblem(host);
        if (problem != null) throw new IllegalArgumentException("destination host '" + host + "' " + problem);
        if (port < 0 || port > 65535) throw new IllegalArgumentException("destination port " + port + " out of range");
        if (!subset.isEmpty() && !Dns1123.isLabel(subset))
            throw new IllegalArgumentException("subset '" + subset + "' is not a DNS-1123 label");
        subsetLabels = CompactSortedMap.copyOf(subsetLabels);
        for (Map.Entry<String, String> l : subsetLabels.entrySet()) {
            if (!Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue()))
                throw new IllegalArgumentException(
                        "subset label " + l.getKey() + "=" + l.getValue() + " is not a valid label");
        }
        if (!subsetLabels.isEmpty() && subset.isEmpty())
            throw new IllegalArgumentException("subset labels need a subset name");
    }

    /**
     * The port of the service this destination sends to: the one numbered {@link #port()}; without a number, the
     * service's first HTTP-family port (HTTP, HTTPS, HTTP/2, gRPC, Triple: what an HTTP route can reach), else its
     * first port. Empty when the service has no such port.
     *
     * @param ports the service's ports, in the catalog's order
     */
    public Optional<ServicePort> servicePort(List<ServicePort> ports) {
        if (port != 0) {
            for (ServicePort p : ports) {
                if (p.number() == port) return Optional.of(p);
            }
            return Optional.empty();
        }
        for (ServicePort p : ports) {
            if (p.protocol().isHttp()) return Optional.of(p);
        }
        return ports.isEmpty() ? Optional.empty() : Optional.of(ports.get(0));
    }

    /** The whole service on its default port. */
    public static RegistryDestination of(String host) {
        return new RegistryDestination(host, 0, "", new TreeMap<>());
    }

    public static RegistryDestination of(String host, int port) {
        return new RegistryDestination(host, port, "", new TreeMap<>());
    }
}
