package dev.meshbridge.core.model;

import dev.meshbridge.core.naming.Dns1123;
import java.util.Objects;

/**
 * One port of a service as the mesh sees it: a name that endpoints use to give their real port, the virtual port
 * number clients address, and the protocol.
 *
 * @param name a DNS-1123 label, unique within the service ({@code http}, {@code dubbo}, {@code tri}...)
 * @param number the service (virtual) port, 1..65535
 * @param protocol the application protocol
 */
public record ServicePort(String name, int number, Protocol protocol) implements Comparable<ServicePort> {

    public ServicePort {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(protocol, "protocol");
        if (!Dns1123.isLabel(name)) {
            throw new IllegalArgumentException("port name '" + name + "' is not a DNS-1123 label");
        }
        if (number < 1 || number > 65535) {
            throw new IllegalArgumentException("port " + name + ": number " + number + " is out of 1..65535");
        }
    }

    @Override
    public int compareTo(ServicePort o) {
        int c = Integer.compare(number, o.number);
        return c != 0 ? c : name.compareTo(o.name);
    }
}
