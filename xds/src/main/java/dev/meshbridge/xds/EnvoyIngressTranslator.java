package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.PathRewrite;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.SecretRef;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.TlsMaterial;
import dev.meshbridge.core.route.WeightedDestination;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.FilterChainMatch;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.config.route.v3.DirectResponseAction;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatchAndSubstitute;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Translates the Ingress route table of a snapshot into what a plain Envoy needs to serve it: a pure, deterministic
 * function of the table and of the ports of the services the table names (same input, same bytes, same versions).
 *
 * <ol>
 *   <li>an HTTP listener, and an HTTPS listener when a TLS section has a certificate: one filter chain per Secret,
 *       matched by SNI on its hosts (a TLS section without hosts is the chain for every other name), its certificate
 *       over SDS as the Secret {@code kubernetes://<namespace>/<name>}; both listeners route through one
 *       RouteConfiguration over RDS;
 *   <li>one virtual host per Ingress host, and {@code *} for rules without a host; in each, Exact paths first, then
 *       prefixes, longest first (Kubernetes's precedence), then the default backend; Exact is Envoy's {@code path},
 *       Prefix its {@code path_separated_prefix} (element-wise), {@code /} a plain prefix;
 *   <li>a registry destination goes to its service's cluster {@code outbound|<port>||<host>} (the one the service
 *       already has); with subset labels to a subset cluster {@code outbound|<port>|<subset>|<host>} that shares the
 *       service's endpoints (EDS service name) and selects them by their {@code envoy.lb} labels (subset load
 *       balancing, no fallback); a Kubernetes Service to a STRICT_DNS cluster on its cluster-local host and port;
 *   <li>several destinations are weighted clusters; a destination that cannot be reached (not in the catalog, a port
 *       the service lacks, a subset known by name only, a Service port given by name) keeps its share and answers
 *       503: a route whose every destination is unreachable is a direct response 503 naming them, a share of a
 *       weighted route goes to the cluster {@code meshbridge_unavailable}, which has no endpoint;
 *   <li>path rewrites become {@code prefix_rewrite}, or {@code regex_rewrite} where a prefix rewrite would double a
 *       slash or a whole path is replaced;
 *   <li>what Envoy would refuse (a path with {@code ?} or {@code #}) is left out and reported.
 * </ol>
 */
final class EnvoyIngressTranslator {

    /** The {@code host} of what this translator reports as left out. */
    static final String OWNER = "ingress";

    static final String HCM_FILTER = "envoy.filters.network.http_connection_manager";
    static final String TLS_INSPECTOR = "envoy.filters.listener.tls_inspector";
    static final String TLS_TRANSPORT = "envoy.transport_sockets.tls";
    static final String HCM_TYPE =
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
    private static final String TLS_INSPECTOR_TYPE =
            "type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector";
    private static final String DOWNSTREAM_TLS_TYPE =
            "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";
    /** Envoy's edge-proxy recommendation for the per-connection buffer. */
    private static final int CONNECTION_BUFFER_BYTES = 32_768;

    private final EnvoyTranslator base;
    private final XdsOptions.Ingress options;
    private final Any tlsInspector;

    EnvoyIngressTranslator(EnvoyTranslator base, XdsOptions.Ingress options) {
        this.base = Objects.requireNonNull(base, "base");
        this.options = Objects.requireNonNull(options, "options");
        this.tlsInspector = EnvoyTranslator.pack(TlsInspector.getDefaultInstance(), TLS_INSPECTOR_TYPE);
    }

    XdsOptions.Ingress options() {
        return options;
    }

    /**
     * Translates a route table.
     *
     * @param servedPorts the ports of a catalog host that have a cluster, or null when the catalog has no such host
     */
    IngressResources translate(RouteTable table, Function<String, List<ServicePort>> servedPorts) {
        if (table.isEmpty()) return IngressResources.empty(table.version());
        return new Build(table, servedPorts).run();
    }

    /** What the translation of a route table depends on for one host: its served ports (0 when absent). */
    static long signature(List<ServicePort> ports) {
        if (ports == null) return 0;
        Hash64 h = new Hash64().putInt(ports.size());
        for (ServicePort p : ports) {
            h.putString(p.name()).putInt(p.number()).putInt(p.protocol().ordinal());
        }
        long v = h.finish();
        return v == 0 ? 1 : v;
    }

    /** Where one share of a route's traffic goes. */
    private record Target(String cluster, Struct labels, String missing) {
        static Target missing(String why) {
            return new Target(XdsNames.UNAVAILABLE_CLUSTER, null, why);
        }
    }

    /** A subset cluster to make: the service, its port, the subset, and the label key sets routes select it by. */
    private record SubsetCluster(String host, ServicePort port, String subset, Set<List<String>> keySets) {}

    /** The state of one translation. */
    private final class Build {
        private final RouteTable table;
        private final Function<String, List<ServicePort>> servedPorts;
        private final SortedMap<String, Long> dependencies = new TreeMap<>();
        private final SortedMap<String, SubsetCluster> subsetClusters = new TreeMap<>();
        private final SortedMap<String, KubernetesServiceDestination> dnsClusters = new TreeMap<>();
        private final List<ServiceResources.Skipped> skipped = new ArrayList<>();
        private final List<String> unavailable = new ArrayList<>();
        private boolean needsUnavailableCluster;

        Build(RouteTable table, Function<String, List<ServicePort>> servedPorts) {
            this.table = table;
            this.servedPorts = servedPorts;
        }

        IngressResources run() {
            List<XdsResource> out = new ArrayList<>();
            boolean http = options.httpPort() > 0;
            SortedMap<SecretRef, TlsMaterial> secrets = new TreeMap<>();
            SortedMap<String, SecretRef> sniHosts = new TreeMap<>();
            if (options.httpsPort() > 0) {
                for (Map.Entry<String, TlsEntry> e : table.tls().entrySet()) {
                    TlsEntry t = e.getValue();
                    if (t.material().isEmpty()) continue;
                    secrets.putIfAbsent(t.secret(), t.material().get());
                    sniHosts.put(e.getKey(), t.secret());
                }
            }
            boolean https = !secrets.isEmpty();
            if (!http && !https) {
                return new IngressResources(table.version(), List.of(), List.of(), Map.of(), List.of());
            }
            out.add(EnvoyTranslator.resource(XdsType.ROUTE, XdsNames.INGRESS_ROUTE, routeConfiguration(), true));
            if (http) {
                Listener l = httpListener();
                out.add(EnvoyTranslator.resource(XdsType.LISTENER, l.getName(), l, true));
            }
            if (https) {
                Listener l = httpsListener(sniHosts);
                out.add(EnvoyTranslator.resource(XdsType.LISTENER, l.getName(), l, true));
                for (Map.Entry<SecretRef, TlsMaterial> s : secrets.entrySet()) {
                    String name =
                            XdsNames.secret(s.getKey().namespace(), s.getKey().name());
                    // secrets are sent to clients that name them, never to a wildcard subscription
                    out.add(EnvoyTranslator.resource(XdsType.SECRET, name, secret(name, s.getValue()), false));
                }
            }
            for (SubsetCluster c : subsetClusters.values()) {
                Cluster cluster = subsetCluster(c);
                out.add(EnvoyTranslator.resource(XdsType.CLUSTER, cluster.getName(), cluster, true));
            }
            for (KubernetesServiceDestination d : dnsClusters.values()) {
                Cluster cluster = dnsCluster(d);
                out.add(EnvoyTranslator.resource(XdsType.CLUSTER, cluster.getName(), cluster, true));
            }
            if (needsUnavailableCluster) {
                Cluster cluster = unavailableCluster();
                out.add(EnvoyTranslator.resource(XdsType.CLUSTER, cluster.getName(), cluster, true));
            }
            out.sort(Comparator.comparing(XdsResource::type).thenComparing(XdsResource::name));
            return new IngressResources(table.version(), out, skipped, dependencies, unavailable);
        }

        // -------------------------------------------------------------- routes

        private RouteConfiguration routeConfiguration() {
            SortedMap<String, List<HttpRoute>> byHost = new TreeMap<>();
            for (HttpRoute r : table.routes()) {
                byHost.computeIfAbsent(r.match().host(), h -> new ArrayList<>()).add(r);
            }
            Route fallback = table.defaultBackend().map(d -> route(d, true)).orElse(null);
            if (fallback != null) byHost.computeIfAbsent("", h -> new ArrayList<>());
            RouteConfiguration.Builder rc = RouteConfiguration.newBuilder().setName(XdsNames.INGRESS_ROUTE);
            VirtualHost anyHost = null;
            for (Map.Entry<String, List<HttpRoute>> e : byHost.entrySet()) {
                List<HttpRoute> routes = new ArrayList<>(e.getValue());
                routes.sort(KUBERNETES_PRECEDENCE);
                String host = e.getKey().isEmpty() ? "*" : e.getKey();
                VirtualHost.Builder vh = VirtualHost.newBuilder().setName(host).addDomains(host);
                boolean catchAll = false;
                for (HttpRoute r : routes) {
                    Route route = route(r, false);
                    if (route == null) continue;
                    vh.addRoutes(route);
                    catchAll |= r.match().pathType() == PathType.PREFIX
                            && r.match().path().equals("/");
                }
                if (fallback != null && !catchAll) vh.addRoutes(fallback);
                if (e.getKey().isEmpty()) {
                    anyHost = vh.build();
                } else {
                    rc.addVirtualHosts(vh);
                }
            }
            // `*` last: Envoy matches exact domains, then wildcards, then `*`, whatever the order; this reads better
            if (anyHost != null) rc.addVirtualHosts(anyHost);
            return rc.build();
        }

        /** The route of an Ingress route, or null when Envoy would refuse it (reported). */
        private Route route(HttpRoute r, boolean defaultBackend) {
            String path = r.match().path();
            String label = (defaultBackend ? "default backend" : r.match().toString()) + " of " + r.owner();
            if (path.indexOf('?') >= 0 || path.indexOf('#') >= 0) {
                skipped.add(new ServiceResources.Skipped(
                        OWNER,
                        label,
                        "invalid-path",
                        "path '" + path + "' holds '?' or '#', which never match a request path"));
                return null;
            }
            RouteMatch.Builder match = RouteMatch.newBuilder();
            if (r.match().pathType() == PathType.EXACT) {
                match.setPath(path);
            } else if (path.equals("/")) {
                match.setPrefix("/");
            } else {
                match.setPathSeparatedPrefix(path);
            }
            Route.Builder route = Route.newBuilder()
                    .setName(r.owner().key() + (defaultBackend ? " default backend" : ""))
                    .setMatch(match);

            LinkedHashMap<Target, Long> shares = new LinkedHashMap<>();
            List<String> missing = new ArrayList<>();
            for (WeightedDestination wd : r.destinations()) {
                Target t = target(wd);
                if (t.missing() != null) {
                    missing.add(t.missing());
                    unavailable.add(label + ": " + t.missing());
                }
                if (wd.weight() == 0) continue;
                Target key = t.missing() == null ? t : Target.missing("");
                shares.merge(key, (long) wd.weight(), Long::sum);
            }
            boolean allMissing = shares.keySet().stream().allMatch(t -> t.missing() != null);
            if (allMissing) {
                return route.setDirectResponse(DirectResponseAction.newBuilder()
                                .setStatus(503)
                                .setBody(DataSource.newBuilder()
                                        .setInlineString("meshbridge: no destination of this route is available: "
                                                + String.join("; ", missing) + "\n")))
                        .build();
            }
            RouteAction.Builder action = RouteAction.newBuilder();
            if (shares.size() == 1) {
                Target only = shares.keySet().iterator().next();
                action.setCluster(only.cluster());
                if (only.labels() != null) action.setMetadataMatch(lbMatch(only.labels()));
            } else {
                WeightedCluster.Builder weighted = WeightedCluster.newBuilder();
                for (Map.Entry<Target, Long> s : shares.entrySet()) {
                    Target t = s.getKey();
                    if (t.missing() != null) needsUnavailableCluster = true;
                    WeightedCluster.ClusterWeight.Builder cw = WeightedCluster.ClusterWeight.newBuilder()
                            .setName(t.cluster())
                            .setWeight(UInt32Value.of((int) Math.min(s.getValue(), Integer.MAX_VALUE)));
                    if (t.labels() != null) cw.setMetadataMatch(lbMatch(t.labels()));
                    weighted.addClusters(cw);
                }
                action.setWeightedClusters(weighted);
            }
            r.rewrite().ifPresent(w -> rewrite(action, r, w));
            return route.setRoute(action).build();
        }

        private Target target(WeightedDestination wd) {
            return switch (wd.destination()) {
                case RegistryDestination d -> registryTarget(d);
                case KubernetesServiceDestination d -> kubernetesTarget(d);
            };
        }

        private List<ServicePort> ports(String host) {
            List<ServicePort> ports = servedPorts.apply(host);
            dependencies.put(host, signature(ports));
            return ports;
        }

        private Target registryTarget(RegistryDestination d) {
            List<ServicePort> ports = ports(d.host());
            if (ports == null) return Target.missing(d.host() + " is not in the catalog");
            ServicePort port = d.servicePort(ports).orElse(null);
            if (port == null) {
                List<Integer> numbers = ports.stream().map(ServicePort::number).toList();
                return Target.missing(
                        d.port() == 0
                                ? d.host() + " has no port that can be served"
                                : d.host() + " has no port " + d.port() + " (it has " + numbers + ")");
            }
            if (d.subset().isEmpty()) return new Target(XdsNames.cluster(d.host(), port.number()), null, null);
            if (d.subsetLabels().isEmpty()) {
                return Target.missing("subset '" + d.subset() + "' of " + d.host()
                        + " has no labels here; name the endpoints' labels instead (key=value)");
            }
            // the subset's keys are on this host's endpoints whatever xds.lbMetadataLabels says (see XdsCore)
            String name = XdsNames.subsetCluster(d.host(), port.number(), d.subset());
            subsetClusters
                    .computeIfAbsent(name, n -> new SubsetCluster(d.host(), port, d.subset(), new TreeSet<>(KEYS)))
                    .keySets()
                    .add(List.copyOf(d.subsetLabels().keySet()));
            Struct.Builder labels = Struct.newBuilder();
            d.subsetLabels().forEach((k, v) -> labels.putFields(k, EnvoyTranslator.string(v)));
            return new Target(name, labels.build(), null);
        }

        private Target kubernetesTarget(KubernetesServiceDestination d) {
            if (d.port() == 0) {
                return Target.missing("Service " + d.namespace() + "/" + d.name() + " port '" + d.portName()
                        + "' is given by name; Envoy needs its number");
            }
            // a catalog service with this very host: its cluster has this name already
            if (ports(d.host()) != null) return registryTarget(RegistryDestination.of(d.host(), d.port()));
            String name = XdsNames.cluster(d.host(), d.port());
            dnsClusters.putIfAbsent(name, d);
            return new Target(name, null, null);
        }

        private void rewrite(RouteAction.Builder action, HttpRoute r, PathRewrite w) {
            String path = r.match().path();
            String target = w.target();
            if (r.match().pathType() == PathType.EXACT) {
                action.setPrefixRewrite(target);
            } else if (w.kind() == PathRewrite.Kind.WHOLE_PATH) {
                action.setRegexRewrite(regexRewrite("^.*$", target));
            } else if (path.equals("/")) {
                // the matched prefix is "/": keep the slash after the target ("/a" → target + "/a")
                if (!target.equals("/")) action.setPrefixRewrite(target + "/");
            } else if (target.equals("/")) {
                // "/p/a" → "/a" and "/p" → "/": a prefix rewrite to "/" would give "//a"
                action.setRegexRewrite(regexRewrite("^" + re2Quote(path) + "/?", "/"));
            } else {
                action.setPrefixRewrite(target);
            }
        }

        // -------------------------------------------------------------- listeners and secrets

        private Listener httpListener() {
            return listener(options.httpPort())
                    .addFilterChains(FilterChain.newBuilder().addFilters(hcm("ingress_http")))
                    .build();
        }

        private Listener httpsListener(SortedMap<String, SecretRef> sniHosts) {
            // one filter chain per Secret, its hosts as server names; a TLS section without hosts is the chain for
            // every other name (no server_names)
            SortedMap<SecretRef, List<String>> hostsBySecret = new TreeMap<>();
            SecretRef fallback = null;
            for (Map.Entry<String, SecretRef> e : sniHosts.entrySet()) {
                if (e.getKey().isEmpty()) {
                    fallback = e.getValue();
                } else {
                    hostsBySecret
                            .computeIfAbsent(e.getValue(), s -> new ArrayList<>())
                            .add(e.getKey());
                }
            }
            Listener.Builder l = listener(options.httpsPort())
                    .addListenerFilters(
                            ListenerFilter.newBuilder().setName(TLS_INSPECTOR).setTypedConfig(tlsInspector));
            for (Map.Entry<SecretRef, List<String>> e : hostsBySecret.entrySet()) {
                l.addFilterChains(tlsChain(e.getKey(), e.getValue()));
            }
            if (fallback != null) l.addFilterChains(tlsChain(fallback, List.of()));
            return l.build();
        }

        private Listener.Builder listener(int port) {
            return Listener.newBuilder()
                    .setName(XdsNames.ingressListener(options.bindAddress(), port))
                    .setAddress(Address.newBuilder()
                            .setSocketAddress(SocketAddress.newBuilder()
                                    .setAddress(options.bindAddress())
                                    .setPortValue(port)))
                    .setPerConnectionBufferLimitBytes(UInt32Value.of(CONNECTION_BUFFER_BYTES));
        }

        private FilterChain tlsChain(SecretRef secret, List<String> hosts) {
            String sds = XdsNames.secret(secret.namespace(), secret.name());
            DownstreamTlsContext tls = DownstreamTlsContext.newBuilder()
                    .setCommonTlsContext(CommonTlsContext.newBuilder()
                            .addTlsCertificateSdsSecretConfigs(
                                    SdsSecretConfig.newBuilder().setName(sds).setSdsConfig(EnvoyTranslator.ADS))
                            .addAlpnProtocols("h2")
                            .addAlpnProtocols("http/1.1"))
                    .build();
            FilterChain.Builder chain = FilterChain.newBuilder()
                    .setName(hosts.isEmpty() ? sds + " (other names)" : sds)
                    .addFilters(hcm("ingress_https"))
                    .setTransportSocket(TransportSocket.newBuilder()
                            .setName(TLS_TRANSPORT)
                            .setTypedConfig(EnvoyTranslator.pack(tls, DOWNSTREAM_TLS_TYPE)));
            if (!hosts.isEmpty())
                chain.setFilterChainMatch(FilterChainMatch.newBuilder().addAllServerNames(hosts));
            return chain.build();
        }

        /**
         * The HTTP connection manager of both listeners, with Envoy's edge-proxy settings: the client address is the
         * peer's, paths are normalized (dot segments, repeated and escaped slashes) before routing, the Host port is
         * ignored when matching virtual hosts, WebSocket upgrades pass.
         */
        private Filter hcm(String statPrefix) {
            HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                    .setStatPrefix(statPrefix)
                    .setRds(Rds.newBuilder()
                            .setConfigSource(EnvoyTranslator.ADS)
                            .setRouteConfigName(XdsNames.INGRESS_ROUTE))
                    .setUseRemoteAddress(BoolValue.of(true))
                    .setNormalizePath(BoolValue.of(true))
                    .setMergeSlashes(true)
                    .setPathWithEscapedSlashesAction(
                            HttpConnectionManager.PathWithEscapedSlashesAction.UNESCAPE_AND_REDIRECT)
                    .setStripAnyHostPort(true)
                    .addUpgradeConfigs(
                            HttpConnectionManager.UpgradeConfig.newBuilder().setUpgradeType("websocket"))
                    .addHttpFilters(HttpFilter.newBuilder()
                            .setName(EnvoyTranslator.ROUTER_FILTER)
                            .setTypedConfig(base.routerFilter()))
                    .build();
            return Filter.newBuilder()
                    .setName(HCM_FILTER)
                    .setTypedConfig(EnvoyTranslator.pack(hcm, HCM_TYPE))
                    .build();
        }

        private Secret secret(String name, TlsMaterial m) {
            return Secret.newBuilder()
                    .setName(name)
                    .setTlsCertificate(TlsCertificate.newBuilder()
                            .setCertificateChain(DataSource.newBuilder().setInlineString(m.certificateChain()))
                            .setPrivateKey(DataSource.newBuilder().setInlineString(m.privateKey())))
                    .build();
        }

        // -------------------------------------------------------------- clusters

        private Cluster subsetCluster(SubsetCluster c) {
            Cluster.LbSubsetConfig.Builder subsets = Cluster.LbSubsetConfig.newBuilder()
                    .setFallbackPolicy(Cluster.LbSubsetConfig.LbSubsetFallbackPolicy.NO_FALLBACK);
            for (List<String> keys : c.keySets()) {
                subsets.addSubsetSelectors(
                        Cluster.LbSubsetConfig.LbSubsetSelector.newBuilder().addAllKeys(keys));
            }
            Cluster.Builder b = Cluster.newBuilder()
                    .setName(XdsNames.subsetCluster(c.host(), c.port().number(), c.subset()))
                    .setType(Cluster.DiscoveryType.EDS)
                    .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder()
                            .setEdsConfig(EnvoyTranslator.ADS)
                            .setServiceName(
                                    XdsNames.endpoints(c.host(), c.port().number())))
                    .setConnectTimeout(base.connectTimeout())
                    .setCommonLbConfig(base.commonLbConfig())
                    .setLbSubsetConfig(subsets)
                    .setMetadata(bridgeMetadata(Map.of(
                            "host", c.host(),
                            "port", c.port().name(),
                            "protocol", c.port().protocol().portName(),
                            "subset", c.subset())));
            if (EnvoyTranslator.http2(c.port().protocol())) {
                b.putTypedExtensionProtocolOptions(EnvoyTranslator.HTTP_PROTOCOL_OPTIONS, base.http2Options());
            }
            return b.build();
        }

        private Cluster dnsCluster(KubernetesServiceDestination d) {
            String name = XdsNames.cluster(d.host(), d.port());
            return Cluster.newBuilder()
                    .setName(name)
                    .setType(Cluster.DiscoveryType.STRICT_DNS)
                    .setDnsLookupFamily(Cluster.DnsLookupFamily.V4_PREFERRED)
                    .setConnectTimeout(base.connectTimeout())
                    .setLoadAssignment(ClusterLoadAssignment.newBuilder()
                            .setClusterName(name)
                            .addEndpoints(LocalityLbEndpoints.newBuilder()
                                    .addLbEndpoints(LbEndpoint.newBuilder()
                                            .setEndpoint(io.envoyproxy.envoy.config.endpoint.v3.Endpoint.newBuilder()
                                                    .setAddress(Address.newBuilder()
                                                            .setSocketAddress(SocketAddress.newBuilder()
                                                                    .setAddress(d.host())
                                                                    .setPortValue(d.port())))))))
                    .setMetadata(bridgeMetadata(
                            Map.of("host", d.host(), "port", String.valueOf(d.port()), "kind", "kubernetes-service")))
                    .build();
        }

        private Cluster unavailableCluster() {
            return Cluster.newBuilder()
                    .setName(XdsNames.UNAVAILABLE_CLUSTER)
                    .setType(Cluster.DiscoveryType.STATIC)
                    .setConnectTimeout(base.connectTimeout())
                    .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName(XdsNames.UNAVAILABLE_CLUSTER))
                    .build();
        }
    }

    /** Kubernetes's precedence within a host: Exact paths, then prefixes, longest first; ties by path. */
    static final Comparator<HttpRoute> KUBERNETES_PRECEDENCE = Comparator.<HttpRoute>comparingInt(
                    r -> r.match().pathType() == PathType.EXACT ? 0 : 1)
            .thenComparing(
                    Comparator.<HttpRoute>comparingInt(r -> r.match().path().length())
                            .reversed())
            .thenComparing(r -> r.match().path());

    private static final Comparator<List<String>> KEYS =
            (a, b) -> String.join("\n", a).compareTo(String.join("\n", b));

    private static Metadata lbMatch(Struct labels) {
        return Metadata.newBuilder()
                .putFilterMetadata(EnvoyTranslator.LB_METADATA, labels)
                .build();
    }

    private static Metadata bridgeMetadata(Map<String, String> fields) {
        Struct.Builder s = Struct.newBuilder();
        new TreeMap<>(fields).forEach((k, v) -> s.putFields(k, EnvoyTranslator.string(v)));
        return Metadata.newBuilder()
                .putFilterMetadata(EnvoyTranslator.BRIDGE_METADATA, s.build())
                .build();
    }

    private static RegexMatchAndSubstitute regexRewrite(String pattern, String substitution) {
        return RegexMatchAndSubstitute.newBuilder()
                .setPattern(RegexMatcher.newBuilder().setRegex(pattern))
                .setSubstitution(substitution.replace("\\", "\\\\"))
                .build();
    }

    /** Quotes a literal for RE2: every character that is not a letter, digit, '/', '-' or '_' is escaped. */
    static String re2Quote(String literal) {
        StringBuilder sb = new StringBuilder(literal.length() + 8);
        for (int i = 0; i < literal.length(); i++) {
            char c = literal.charAt(i);
            boolean plain = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '/'
                    || c == '-'
                    || c == '_';
            if (!plain && c < 0x80) sb.append('\\');
            sb.append(c);
        }
        return sb.toString();
    }
}
