package dev.meshbridge.xds;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.IpAddresses;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What an Envoy sidecar or egress proxy gets: the {@code xds.sidecar:} section. Its outbound listeners reach every
 * catalog service by name; only nodes in the sidecar role get them ({@link NodeRoles}).
 *
 * @param enabled serve the outbound listeners to sidecars
 * @param bindAddress the address the listeners bind in Envoy
 * @param httpPort the HTTP listener every HTTP-family service (HTTP/1.1, HTTP/2, gRPC, Triple) is reached through, by
 *     its {@code Host} or {@code :authority}; 0: none
 * @param httpServicePorts more HTTP listeners, one per service port, each reaching the services that have that port
 *     (for transparent setups where the application calls {@code orders.zookeeper:80})
 * @param dubboPort the Dubbo listener ({@code dubbo_proxy}), routing by interface, version and group; 0: none
 * @param tcp user-mapped TCP listeners for services of other protocols
 */
public record SidecarOptions(
        boolean enabled,
        String bindAddress,
        int httpPort,
        List<Integer> httpServicePorts,
        int dubboPort,
        List<TcpMapping> tcp) {

    public static final SidecarOptions DEFAULTS =
            new SidecarOptions(true, XdsOptions.DEFAULT_BIND_ADDRESS, 15001, List.of(), 20880, List.of());

    /** No outbound listener at all. */
    public static final SidecarOptions DISABLED =
            new SidecarOptions(false, XdsOptions.DEFAULT_BIND_ADDRESS, 0, List.of(), 0, List.of());

    /**
     * A TCP listener the user maps to one service port.
     *
     * @param service the catalog host
     * @param port the service port
     * @param listenPort the port Envoy listens on
     */
    public record TcpMapping(String service, int port, int listenPort) {
        public TcpMapping {
            Objects.requireNonNull(service, "service");
            if (port < 1 || port > 65535 || listenPort < 1 || listenPort > 65535)
                throw new IllegalArgumentException("tcp mapping ports must be in 1..65535");
        }
    }

    public SidecarOptions {
        Objects.requireNonNull(bindAddress, "bindAddress");
        if (!IpAddresses.isBare(bindAddress))
            throw new IllegalArgumentException("sidecar bindAddress '" + bindAddress + "' is not an IP address");
        httpServicePorts = List.copyOf(httpServicePorts);
        tcp = List.copyOf(tcp);
        Set<Integer> used = new HashSet<>();
        for (int p : listenPorts(httpPort, httpServicePorts, dubboPort, tcp)) {
            if (p < 1 || p > 65535) throw new IllegalArgumentException("sidecar port " + p + " is out of 1..65535");
            if (!used.add(p)) throw new IllegalArgumentException("sidecar port " + p + " is used by two listeners");
        }
    }

    private static List<Integer> listenPorts(int http, List<Integer> services, int dubbo, List<TcpMapping> tcp) {
        List<Integer> out = new ArrayList<>();
        if (http != 0) out.add(http);
        out.addAll(services);
        if (dubbo != 0) out.add(dubbo);
        for (TcpMapping t : tcp) out.add(t.listenPort());
        return out;
    }

    static SidecarOptions parse(ConfigNode section) {
        boolean enabled = section.bool("enabled", true);
        String bind = section.string("bindAddress", DEFAULTS.bindAddress()).trim();
        if (!IpAddresses.isBare(bind)) {
            section.problem("bindAddress", "expected an IP address such as 0.0.0.0 or 127.0.0.1, got '" + bind + "'");
            bind = DEFAULTS.bindAddress();
        }
        Set<Integer> used = new HashSet<>();
        int http = section.integer("httpPort", DEFAULTS.httpPort(), 0, 65535);
        if (http != 0) used.add(http);
        List<Integer> services = new ArrayList<>();
        for (String s : section.strings("httpServicePorts")) {
            int p = port(s);
            if (p < 0) {
                section.problem("httpServicePorts", "'" + s + "' is not a port in 1..65535");
            } else if (!used.add(p)) {
                section.problem("httpServicePorts", "port " + p + " is already used by another sidecar listener");
            } else {
                services.add(p);
            }
        }
        int dubbo = section.integer("dubboPort", DEFAULTS.dubboPort(), 0, 65535);
        if (dubbo != 0 && !used.add(dubbo)) {
            section.problem("dubboPort", "port " + dubbo + " is already used by another sidecar listener");
            dubbo = 0;
        }
        List<TcpMapping> tcp = new ArrayList<>();
        for (ConfigNode item : section.list("tcp")) {
            String service = item.requiredString("service");
            int port = item.integer("port", 0, 1, 65535);
            int listen = item.integer("listenPort", port, 1, 65535);
            if (service == null || service.isEmpty() || port == 0) continue;
            if (!Dns1123.isSubdomain(service)) {
                item.problem("service", "'" + service + "' is not a catalog host (a DNS-1123 name)");
            } else if (!used.add(listen)) {
                item.problem("listenPort", "port " + listen + " is already used by another sidecar listener");
            } else {
                tcp.add(new TcpMapping(service, port, listen));
            }
        }
        return new SidecarOptions(enabled, bind, http, services, dubbo, tcp);
    }

    private static int port(String s) {
        try {
            int p = Integer.parseInt(s.trim());
            return p >= 1 && p <= 65535 ? p : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
