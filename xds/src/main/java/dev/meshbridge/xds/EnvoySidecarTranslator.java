package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.Drds;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboFilter;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MethodMatch;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.ProtocolType;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.SerializationType;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Makes the outbound listeners of Envoy sidecars and egress proxies: a pure, deterministic function from what the
 * catalog serves ({@link Entry} per host) to listeners and route configurations that reach every service by name.
 *
 * <ol>
 *   <li>HTTP family (HTTP/1.1, HTTP/2, gRPC, Triple): listener {@code outbound_<httpPort>} whose connection manager
 *       (codec auto: HTTP/1.1 and h2c) takes route configuration {@code outbound_<httpPort>} over RDS: one virtual
 *       host per service and port, named {@code <host>:<port>}, with the domains {@code <host>:<port>} and, on the
 *       service's default port ({@link #defaultHttpPort}), {@code <host>}; plus the short forms ({@link #shortForms}:
 *       {@code orders} and {@code orders.services} for {@code orders.services.zookeeper}, alone on the default port
 *       and with {@code :<port>}) that no other service of that route configuration claims. A short form two services
 *       claim is left out of both and noted. Each virtual host's one route sends every path to the
 *       service's cluster for that port, with no route timeout (streams stay open);
 *   <li>each {@code httpServicePorts} entry P: listener and route configuration {@code outbound_P} with a virtual
 *       host per service that has port P, domains {@code <host>}, {@code <host>:P} and the short forms;
 *   <li>Dubbo: listener {@code outbound_<dubboPort>} with {@code envoy.filters.network.dubbo_proxy} (Dubbo protocol,
 *       Hessian2) whose routes come over ADS as the Dubbo route configuration {@code outbound_<dubboPort>}: one entry
 *       per Dubbo interface, version and group ({@link DubboId}), every method to the service's cluster for its Dubbo
 *       port. Envoy takes the first entry that matches, and an entry with no version (or group) matches any, so the
 *       entries are ordered most specific first. Two services with the same interface, version and group: the first
 *       host wins, the other is noted;
 *   <li>TCP: a listener {@code outbound_<listenPort>} with {@code tcp_proxy} for each user mapping whose service and
 *       port are in the catalog (otherwise noted). Services of other protocols without a mapping are noted;
 *   <li>HTTPS ports are not routed (Envoy would send plain text to them): noted, and reachable through a TCP mapping.
 * </ol>
 *
 * <p>Every change to a service's served ports or Dubbo identity changes only the route configurations of its ports;
 * endpoint changes change nothing here (they are EDS).
 */
final class EnvoySidecarTranslator {

    static final String DUBBO_FILTER = "envoy.filters.network.dubbo_proxy";
    static final String DUBBO_ROUTER = "envoy.filters.dubbo.router";
    static final String TCP_FILTER = "envoy.filters.network.tcp_proxy";
    static final String OWNER = "sidecar";
    /** At most this many notes of one kind are kept; the rest are counted. */
    static final int MAX_NOTES = 100;

    private static final String HCM_TYPE =
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

    /**
     * A Dubbo service as {@code dubbo_proxy} routes to it: the interface, version and group a Dubbo consumer sends.
     */
    record DubboId(String iface, String version, String group) implements Comparable<DubboId> {
        private static final Comparator<DubboId> ORDER = Comparator.comparing(DubboId::iface)
                // most specific first: Envoy takes the first entry that matches, and an empty part matches anything
                .thenComparing(d -> d.version().isEmpty())
                .thenComparing(d -> d.group().isEmpty())
                .thenComparing(DubboId::version)
                .thenComparing(DubboId::group);

        @Override
        public int compareTo(DubboId o) {
            return ORDER.compare(this, o);
        }

        @Override
        public String toString() {
            return iface + (version.isEmpty() ? "" : ":" + version) + (group.isEmpty() ? "" : " group " + group);
        }
    }

    /**
     * What decides a service's outbound routes.
     *
     * @param host the catalog host
     * @param ports the ports that have a cluster
     * @param dubbo the Dubbo interfaces it serves, or empty
     */
    record Entry(String host, List<ServicePort> ports, List<DubboId> dubbo) {
        Entry {
            Objects.requireNonNull(host, "host");
            ports = List.copyOf(ports);
            dubbo = List.copyOf(dubbo);
        }
    }

    /**
     * The entry of a translated service.
     *
     * @param service the catalog service
     * @param served its translation, whose clusters tell which ports are served
     */
    static Entry entry(MeshService service, ServiceResources served) {
        List<ServicePort> ports = EnvoyTranslator.servedPorts(served);
        boolean dubboPort = ports.stream().anyMatch(p -> p.protocol() == Protocol.DUBBO);
        return new Entry(service.host(), ports, dubboPort ? dubboIds(service) : List.of());
    }

    /**
     * The Dubbo identities of a service, from its {@code dubbo.interface} label: with the version and group of each
     * source named by that interface (a ZooKeeper interface-level source keeps them as the provider URLs give them,
     * untouched by the label rules), else with the {@code dubbo.version} and {@code dubbo.group} labels (Nacos's
     * {@code providers:} names). A Dubbo application's host has no interface label: it is reached through the
     * interface hosts its mapping gives.
     */
    static List<DubboId> dubboIds(MeshService service) {
        String iface = service.labels().get("dubbo.interface");
        if (iface == null || iface.isEmpty()) return List.of();
        Set<DubboId> out = new LinkedHashSet<>();
        for (ServiceKey k : service.sources()) {
            if (k.name().equals(iface)) out.add(new DubboId(iface, k.version(), k.group()));
        }
        if (out.isEmpty()) {
            out.add(new DubboId(
                    iface,
                    service.labels().getOrDefault("dubbo.version", ""),
                    service.labels().getOrDefault("dubbo.group", "")));
        }
        return List.copyOf(out);
    }

    private final SidecarOptions options;
    private final EnvoyTranslator base;
    private final Duration noTimeout = Duration.getDefaultInstance();
    private final Any dubboRouter;

    EnvoySidecarTranslator(EnvoyTranslator base, SidecarOptions options) {
        this.base = Objects.requireNonNull(base, "base");
        this.options = Objects.requireNonNull(options, "options");
        this.dubboRouter = EnvoyTranslator.pack(
                io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.router.v3.Router.getDefaultInstance(),
                "type.googleapis.com/envoy.extensions.filters.network.dubbo_proxy.router.v3.Router");
    }

    SidecarOptions options() {
        return options;
    }

    /** Listener, route configuration and Dubbo route configuration names: {@code outbound_<listen port>}. */
    static String name(int listenPort) {
        return "outbound_" + listenPort;
    }

    /** The sidecar's resources for these services (sorted by host). */
    SidecarResources translate(SortedMap<String, Entry> services) {
        List<XdsResource> out = new ArrayList<>();
        Notes notes = new Notes();
        if (!options.enabled()) return new SidecarResources(List.of(), List.of());
        for (Entry e : services.values()) {
            for (ServicePort p : e.ports()) {
                if (p.protocol() == Protocol.HTTPS)
                    notes.add(
                            "https-not-routed",
                            e.host() + ":" + p.number()
                                    + " (HTTPS: Envoy would send plain text to it; map it as TCP to reach it)");
                if (p.protocol() == Protocol.TCP && !mapped(e.host(), p.number()))
                    notes.add(
                            "tcp-not-mapped",
                            e.host() + ":" + p.number() + " (no TCP listener: add it to xds.sidecar.tcp)");
            }
        }
        if (options.httpPort() != 0) {
            httpListener(options.httpPort(), httpRoutes(options.httpPort(), services, 0, notes), out);
        }
        for (int port : options.httpServicePorts()) {
            httpListener(port, httpRoutes(port, services, port, notes), out);
        }
        if (options.dubboPort() != 0) dubbo(services, out, notes);
        for (SidecarOptions.TcpMapping m : options.tcp()) tcp(m, services, out, notes);
        out.sort((a, b) ->
                a.type() != b.type() ? a.type().compareTo(b.type()) : a.name().compareTo(b.name()));
        return new SidecarResources(out, notes.list());
    }

    private boolean mapped(String host, int port) {
        for (SidecarOptions.TcpMapping m : options.tcp()) {
            if (m.service().equals(host) && m.port() == port) return true;
        }
        return false;
    }

    // ------------------------------------------------------------------ HTTP

    /** The HTTP-family ports Envoy can route to as plain HTTP/1.1 or HTTP/2 (HTTPS is not among them). */
    private static boolean routable(ServicePort p) {
        return p.protocol().isHttp() && p.protocol() != Protocol.HTTPS;
    }

    /**
     * The port a request without a port in its {@code Host} goes to: the first HTTP, HTTP/2, gRPC, then Triple port.
     */
    static ServicePort defaultHttpPort(List<ServicePort> ports) {
        Protocol[] preference = {Protocol.HTTP, Protocol.HTTP2, Protocol.GRPC, Protocol.TRIPLE};
        for (Protocol want : preference) {
            for (ServicePort p : ports) {
                if (p.protocol() == want) return p;
            }
        }
        return null;
    }

    /** A virtual host being built: its service, port and candidate domains. */
    private record Candidate(String host, ServicePort port, List<String> exact, List<String> shortForms) {}

    /**
     * The route configuration of an HTTP listener.
     *
     * @param onlyPort 0: every service port; otherwise only services with this port
     */
    private RouteConfiguration httpRoutes(
            int listenPort, SortedMap<String, Entry> services, int onlyPort, Notes notes) {
        List<Candidate> candidates = new ArrayList<>();
        // Envoy compares domains without regard to case, and refuses a route configuration that has one in two
        // virtual hosts: short names are counted, and exact names gathered, in lower case
        Map<String, Integer> claims = new HashMap<>();
        Set<String> exactNames = new HashSet<>();
        for (Entry e : services.values()) {
            List<ServicePort> http =
                    e.ports().stream().filter(EnvoySidecarTranslator::routable).toList();
            if (http.isEmpty()) continue;
            ServicePort dflt = onlyPort == 0 ? defaultHttpPort(http) : null;
            for (ServicePort p : http) {
                if (onlyPort != 0 && p.number() != onlyPort) continue;
                boolean bare = onlyPort != 0 || p == dflt;
                List<String> exact = new ArrayList<>();
                List<String> shorts = new ArrayList<>();
                exact.add(e.host() + ":" + p.number());
                if (bare) exact.add(e.host());
                for (String s : shortForms(e.host())) {
                    if (bare) shorts.add(s);
                    shorts.add(s + ":" + p.number());
                }
                for (String s : shorts) claims.merge(lower(s), 1, Integer::sum);
                for (String x : exact) exactNames.add(lower(x));
                candidates.add(new Candidate(e.host(), p, exact, shorts));
            }
        }
        String name = name(listenPort);
        RouteConfiguration.Builder rc = RouteConfiguration.newBuilder().setName(name);
        Set<String> ambiguous = new java.util.TreeSet<>();
        Set<String> taken = new HashSet<>();
        Set<String> caseTwins = new java.util.TreeSet<>();
        for (Candidate c : candidates) {
            VirtualHost.Builder vh = VirtualHost.newBuilder()
                    .setName(XdsNames.virtualHost(c.host(), c.port().number()));
            for (String x : c.exact()) {
                // two hosts that differ only by case: the first (in host order) keeps the name
                if (taken.add(lower(x))) {
                    vh.addDomains(x);
                } else {
                    caseTwins.add(x);
                }
            }
            for (String s : c.shortForms()) {
                // a domain may belong to one virtual host only (Envoy refuses the route configuration otherwise):
                // a short name that another service also answers to, or that is another service's own name, is left out
                String key = lower(s);
                if (claims.get(key) == 1 && !exactNames.contains(key)) {
                    vh.addDomains(s);
                } else {
                    ambiguous.add(s);
                }
            }
            if (vh.getDomainsCount() == 0) continue; // Envoy requires at least one domain; noted as a case twin
            vh.addRoutes(Route.newBuilder()
                    .setMatch(RouteMatch.newBuilder().setPrefix("/"))
                    .setRoute(RouteAction.newBuilder()
                            .setCluster(XdsNames.cluster(c.host(), c.port().number()))
                            // no route timeout: gRPC streams and long polls stay open (Envoy's default is 15 s)
                            .setTimeout(noTimeout)));
            rc.addVirtualHosts(vh);
        }
        if (!ambiguous.isEmpty()) {
            List<String> shown = ambiguous.stream().limit(10).toList();
            notes.add(
                    "ambiguous-short-name",
                    name + ": " + ambiguous.size() + " short names would reach more than one service and are left out: "
                            + String.join(", ", shown) + (ambiguous.size() > shown.size() ? ", ..." : ""));
        }
        if (!caseTwins.isEmpty()) {
            List<String> shown = caseTwins.stream().limit(10).toList();
            notes.add(
                    "host-differs-only-by-case",
                    name + ": " + caseTwins.size() + " names differ only by case from another service's (Envoy"
                            + " matches them as one) and are left out: " + String.join(", ", shown)
                            + (caseTwins.size() > shown.size() ? ", ..." : ""));
        }
        return rc.build();
    }

    /** A domain as Envoy compares it: without regard to case. */
    private static String lower(String domain) {
        return domain.toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * The short names a client uses for a host: its first label (a Spring Cloud service id, a Eureka application, a
     * Consul service: {@code orders} for {@code orders.services.zookeeper}) and the host without its last label (the
     * registry's suffix: {@code orders.services}), when they differ from the host and from each other.
     */
    static List<String> shortForms(String host) {
        List<String> out = new ArrayList<>();
        int first = host.indexOf('.');
        if (first <= 0) return out;
        out.add(host.substring(0, first));
        int last = host.lastIndexOf('.');
        if (last > first) out.add(host.substring(0, last));
        return out;
    }

    private void httpListener(int port, RouteConfiguration routes, List<XdsResource> out) {
        String name = name(port);
        HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                .setStatPrefix(name)
                .setRds(Rds.newBuilder().setConfigSource(EnvoyTranslator.ADS).setRouteConfigName(name))
                .addHttpFilters(HttpFilter.newBuilder()
                        .setName(EnvoyTranslator.ROUTER_FILTER)
                        .setTypedConfig(base.routerFilter()))
                .build();
        out.add(listener(
                port,
                Filter.newBuilder()
                        .setName(EnvoyIngressTranslator.HCM_FILTER)
                        .setTypedConfig(EnvoyTranslator.pack(hcm, HCM_TYPE))
                        .build()));
        out.add(EnvoyTranslator.resource(XdsType.ROUTE, name, routes, false));
    }

    private XdsResource listener(int port, Filter filter) {
        Listener l = Listener.newBuilder()
                .setName(name(port))
                .setAddress(Address.newBuilder()
                        .setSocketAddress(SocketAddress.newBuilder()
                                .setAddress(options.bindAddress())
                                .setPortValue(port)))
                .addFilterChains(FilterChain.newBuilder().addFilters(filter))
                .build();
        return EnvoyTranslator.resource(XdsType.LISTENER, l.getName(), l, true);
    }

    // ------------------------------------------------------------------ Dubbo

    private void dubbo(SortedMap<String, Entry> services, List<XdsResource> out, Notes notes) {
        String name = name(options.dubboPort());
        TreeMap<DubboId, String> routes = new TreeMap<>();
        for (Entry e : services.values()) {
            ServicePort port = e.ports().stream()
                    .filter(p -> p.protocol() == Protocol.DUBBO)
                    .findFirst()
                    .orElse(null);
            if (port == null) continue;
            if (e.dubbo().isEmpty()) {
                notes.add(
                        "dubbo-without-interface",
                        e.host() + " (no Dubbo interface known: call it through an" + " interface host)");
                continue;
            }
            for (DubboId id : e.dubbo()) {
                String cluster = XdsNames.cluster(e.host(), port.number());
                String was = routes.putIfAbsent(id, cluster);
                if (was != null && !was.equals(cluster))
                    notes.add("dubbo-duplicate", id + " is served by " + was + "; " + cluster + " is not routed");
            }
        }
        MultipleRouteConfiguration.Builder mrc =
                MultipleRouteConfiguration.newBuilder().setName(name);
        routes.forEach((id, cluster) ->
                mrc.addRouteConfig(
                        io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.RouteConfiguration.newBuilder()
                                .setName(id.toString())
                                .setInterface(id.iface())
                                .setVersion(id.version())
                                .setGroup(id.group())
                                .addRoutes(
                                        io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.Route.newBuilder()
                                                .setMatch(io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3
                                                        .RouteMatch.newBuilder()
                                                        // every method: Envoy needs a method matcher on each route
                                                        .setMethod(MethodMatch.newBuilder()
                                                                .setName(StringMatcher.newBuilder()
                                                                        .setSafeRegex(RegexMatcher.newBuilder()
                                                                                .setRegex(".*")))))
                                                .setRoute(io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3
                                                        .RouteAction.newBuilder()
                                                        .setCluster(cluster)))));
        DubboProxy proxy = DubboProxy.newBuilder()
                .setStatPrefix(name)
                .setProtocolType(ProtocolType.Dubbo)
                .setSerializationType(SerializationType.Hessian2)
                .setDrds(Drds.newBuilder().setConfigSource(EnvoyTranslator.ADS).setRouteConfigName(name))
                .addDubboFilters(DubboFilter.newBuilder().setName(DUBBO_ROUTER).setConfig(dubboRouter))
                .build();
        out.add(listener(
                options.dubboPort(),
                Filter.newBuilder()
                        .setName(DUBBO_FILTER)
                        .setTypedConfig(EnvoyTranslator.pack(
                                proxy,
                                "type.googleapis.com/envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy"))
                        .build()));
        out.add(EnvoyTranslator.resource(XdsType.DUBBO_ROUTE, name, mrc.build(), false));
    }

    // ------------------------------------------------------------------ TCP

    private void tcp(
            SidecarOptions.TcpMapping m, SortedMap<String, Entry> services, List<XdsResource> out, Notes notes) {
        Entry e = services.get(m.service());
        boolean served = e != null && e.ports().stream().anyMatch(p -> p.number() == m.port());
        if (!served) {
            notes.add(
                    "tcp-mapping-unavailable",
                    m.service() + ":" + m.port() + " -> " + name(m.listenPort())
                            + " (not in the catalog: no listener until it is)");
            return;
        }
        TcpProxy proxy = TcpProxy.newBuilder()
                .setStatPrefix(name(m.listenPort()))
                .setCluster(XdsNames.cluster(m.service(), m.port()))
                .build();
        out.add(listener(
                m.listenPort(),
                Filter.newBuilder()
                        .setName(TCP_FILTER)
                        .setTypedConfig(EnvoyTranslator.pack(
                                proxy, "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy"))
                        .build()));
    }

    /** Notes for {@code /debug/xds}, bounded per kind. */
    private static final class Notes {
        private final Map<String, List<String>> byKind = new TreeMap<>();
        private final Map<String, Integer> dropped = new TreeMap<>();

        void add(String kind, String note) {
            List<String> l = byKind.computeIfAbsent(kind, k -> new ArrayList<>());
            if (l.size() < MAX_NOTES) {
                l.add(note);
            } else {
                dropped.merge(kind, 1, Integer::sum);
            }
        }

        List<SidecarResources.Note> list() {
            List<SidecarResources.Note> out = new ArrayList<>();
            byKind.forEach((k, l) -> l.forEach(n -> out.add(new SidecarResources.Note(k, n))));
            dropped.forEach((k, n) -> out.add(new SidecarResources.Note(k, "... and " + n + " more")));
            return out;
        }
    }
}
