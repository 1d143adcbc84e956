package dev.meshbridge.core.route;

import dev.meshbridge.core.naming.Dns1123;
import java.util.Objects;

/**
 * A Kubernetes Service as a route destination, addressed by its cluster-local host name; the bridge does not resolve
 * its endpoints.
 *
 * @param namespace the Service's namespace
 * @param name the Service's name
 * @param host its cluster-local host, {@code name.namespace.svc.cluster.local} with the default cluster domain
 * @param port the service port number, or 0 when the port is given by name
 * @param portName the service port name, or empty when given by number
 */
public record KubernetesServiceDestination(String namespace, String name, String host, int port, String portName)
        implements Destination {

    public KubernetesServiceDestination {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(portName, "portName");
        if (!Dns1123.isSubdomain(host)) throw new IllegalArgumentException("service host '" + host + "' is invalid");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("service port " + port + " out of range");
        if ((port == 0) == portName.isEmpty())
            throw new IllegalArgumentException("service " + namespace + "/" + name + ": give a port number or name");
    }

    /** The host of a Service in a cluster domain: {@code name.namespace.svc.<clusterDomain>}. */
    public static String hostOf(String name, String namespace, String clusterDomain) {
        return name + "." + namespace + ".svc." + clusterDomain;
    }
}
