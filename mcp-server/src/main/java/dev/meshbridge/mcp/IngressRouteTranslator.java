package dev.meshbridge.mcp;

import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.PathRewrite;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.WeightedDestination;
import dev.meshbridge.core.util.Hash64;
import dev.meshbridge.mcp.api.networking.v1alpha3.Destination;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPBody;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPDirectResponse;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPFaultInjection;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPMatchRequest;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRewrite;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRoute;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRouteDestination;
import dev.meshbridge.mcp.api.networking.v1alpha3.Percent;
import dev.meshbridge.mcp.api.networking.v1alpha3.Port;
import dev.meshbridge.mcp.api.networking.v1alpha3.PortSelector;
import dev.meshbridge.mcp.api.networking.v1alpha3.RegexRewrite;
import dev.meshbridge.mcp.api.networking.v1alpha3.Server;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServerTLSSettings;
import dev.meshbridge.mcp.api.networking.v1alpha3.StringMatch;
import dev.meshbridge.mcp.api.networking.v1alpha3.Subset;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Turns the Ingress routes of a catalog snapshot into the Istio resources an ingress gateway needs: a pure,
 * deterministic function of the route table and of the ServiceEntries the bridge serves for the hosts the routes name
 * (same input, same bytes, same versions in every replica). An endpoint never enters it, so an endpoint change never
 * re-versions one of these resources.
 *
 * <ol>
 *   <li>one Gateway per Ingress host (every host for a rule without one: {@code *}), in the configured namespace with
 *       the configured selector: an HTTP server on port 80 for the host and, when a TLS section covers the host (its
 *       own, a wildcard one for its parent domain, or one without hosts) and its Secret was read, an HTTPS server on
 *       port 443 with mode SIMPLE and the Secret as {@code credentialName} in the configured form;
 *   <li>one VirtualService per host, bound to that Gateway: Exact paths first, then prefixes, longest first
 *       (Kubernetes's precedence), then the default backend unless a {@code Prefix /} route catches everything. An
 *       Exact path is a URI {@code exact} match; a Prefix path {@code /p} matches {@code exact: /p} or {@code prefix:
 *       /p/}, so it matches whole path elements as Kubernetes says ({@code /p/x}, not {@code /px}); {@code /} is
 *       {@code prefix: /}. The route's name is its Ingress ({@code namespace/name});
 *   <li>a path rewrite keeps Kubernetes's element-wise meaning: a prefix rewrite of a Prefix path {@code /p} to
 *       {@code /t} is two routes, {@code exact /p} rewritten to {@code /t} and {@code prefix /p/} rewritten to {@code
 *       /t/}; a whole-path rewrite of a Prefix path is a regex rewrite of {@code ^.*$} (Istio 1.19 and later); an
 *       Exact path is simply rewritten to the target;
 *   <li>a registry destination goes to its catalog host on the numbered port (without a number, the service's first
 *       HTTP-family port, else its first), with its subset; several destinations carry their relative weights;
 *   <li>a Kubernetes Service goes to its cluster-local host and port number (a port given by name is left to istiod,
 *       which then uses the Service's only port);
 *   <li>a destination whose subset has labels gets a DestinationRule for its host with that subset (one rule per host,
 *       subsets by name); a subset given by name only refers to a DestinationRule of the user's;
 *   <li>a destination the bridge serves no ServiceEntry for (not in the catalog, refused, or lacking the port) answers
 *       503: a route whose every destination is missing is a {@code direct_response} 503 naming them; a route with
 *       some keeps its share of 503s as an {@code abort} fault on that percentage of requests, the rest going to the
 *       other destinations by their weights;
 *   <li>every resource is checked as istiod would ({@link IstioValidation}); a host whose Gateway or VirtualService
 *       would be refused is left out whole, with the reasons.
 * </ol>
 */
public final class IngressRouteTranslator {

    static final int HTTP_PORT = 80;
    static final int HTTPS_PORT = 443;
    static final int UNAVAILABLE_STATUS = 503;

    /** What the translation needs to know of the catalog. */
    public interface Catalog {
        /** The ports of the ServiceEntry the bridge serves for the host, or null when it serves none. */
        List<ServicePort> servedPorts(String host);

        /** True when the catalog has the host, served or not. */
        boolean contains(String host);
    }

    private final McpOptions options;
    private final McpOptions.Ingress ingress;

    public IngressRouteTranslator(McpOptions options) {
        this.options = Objects.requireNonNull(options, "options");
        this.ingress = options.ingress();
    }

    /**
     * What a catalog host means to a translation: 0 when absent, 1 when present but not served, else a hash of its
     * served ports. A translation has to be redone only when the signature of one of its hosts changes.
     */
    public static long signature(Catalog catalog, String host) {
        List<ServicePort> ports = catalog.servedPorts(host);
        if (ports == null) return catalog.contains(host) ? 1 : 0;
        Hash64 h = new Hash64().putInt(ports.size());
        for (ServicePort p : ports)
            h.putString(p.name()).putInt(p.number()).putInt(p.protocol().ordinal());
        long v = h.finish();
        return v == 0 || v == 1 ? 2 : v;
    }

    public RouteTranslation translate(RouteTable table, Catalog catalog) {
        if (!ingress.enabled() || table.isEmpty()) return RouteTranslation.empty(table.version());
        return new Build(table, catalog).run();
    }

    /** A DNS-1123 label naming the resources of a host: a readable part and a hash of the exact host. */
    static String resourceName(String host) {
        String readable = host.isEmpty() ? "any-host" : host.replace("*", "wildcard");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < readable.length(); i++) {
            char c = readable.charAt(i);
            sb.append((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-');
        }
        String hash = Hash64.toHex(Hash64.of(host)).substring(0, 8);
        int max = Dns1123.MAX_LABEL - hash.length() - 1;
        String cut = sb.length() > max ? sb.substring(0, max) : sb.toString();
        int start = 0;
        while (start < cut.length() && cut.charAt(start) == '-') start++;
        int end = cut.length();
        while (end > start && cut.charAt(end - 1) == '-') end--;
        cut = cut.substring(start, end);
        return cut.isEmpty() ? "host-" + hash : cut + "-" + hash;
    }

    /** Kubernetes precedence: Exact paths first (by path), then prefixes, longest first. */
    static final Comparator<HttpRoute> KUBERNETES_PRECEDENCE = Comparator.<HttpRoute, Boolean>comparing(
                    r -> r.match().pathType() != PathType.EXACT)
            .thenComparing(r -> r.match().pathType() == PathType.EXACT
                    ? 0
                    : -r.match().path().length())
            .thenComparing(r -> r.match().path());

    /** The state of one translation. */
    private final class Build {
        private final RouteTable table;
        private final Catalog catalog;
        private final SortedMap<String, Long> dependencies = new TreeMap<>();
        /** Subsets with labels, by destination host, then subset name. */
        private final SortedMap<String, SortedMap<String, SortedMap<String, String>>> subsets = new TreeMap<>();

        private final List<String> notes = new ArrayList<>();
        private final List<String> unavailable = new ArrayList<>();

        Build(RouteTable table, Catalog catalog) {
            this.table = table;
            this.catalog = catalog;
        }

        RouteTranslation run() {
            SortedMap<String, List<HttpRoute>> byHost = new TreeMap<>();
            for (HttpRoute r : table.routes()) {
                byHost.computeIfAbsent(r.match().host(), h -> new ArrayList<>()).add(r);
            }
            HttpRoute defaultBackend = table.defaultBackend().orElse(null);
            if (defaultBackend != null) byHost.computeIfAbsent("", h -> new ArrayList<>());

            List<McpResource> resources = new ArrayList<>();
            List<RouteTranslation.Skipped> skipped = new ArrayList<>();
            Map<String, String> routeNames = new HashMap<>();
            Map<String, String> ruleNames = new HashMap<>();
            for (Map.Entry<String, List<HttpRoute>> e : byHost.entrySet()) {
                String host = e.getKey();
                String istioHost = host.isEmpty() ? "*" : host;
                String name = resourceName(host);
                String other = routeNames.putIfAbsent(name, istioHost);
                if (other != null) {
                    skipped.add(new RouteTranslation.Skipped(
                            istioHost, name, List.of("resource name " + name + " is taken by host " + other)));
                    continue;
                }
                Gateway gateway = gateway(host, istioHost);
                VirtualService vs = virtualService(istioHost, name, e.getValue(), defaultBackend);
                List<String> problems = new ArrayList<>();
                for (String p : IstioValidation.gateway(name, gateway)) problems.add("Gateway: " + p);
                for (String p : IstioValidation.virtualService(vs)) problems.add("VirtualService: " + p);
                if (!problems.isEmpty()) {
                    skipped.add(new RouteTranslation.Skipped(istioHost, name, problems));
                    continue;
                }
                resources.add(resource(McpKind.GATEWAY, name, gateway, istioHost));
                resources.add(resource(McpKind.VIRTUAL_SERVICE, name, vs, istioHost));
            }
            for (Map.Entry<String, SortedMap<String, SortedMap<String, String>>> e : subsets.entrySet()) {
                DestinationRule.Builder dr = DestinationRule.newBuilder().setHost(e.getKey());
                e.getValue()
                        .forEach((subset, labels) -> dr.addSubsets(
                                Subset.newBuilder().setName(subset).putAllLabels(labels)));
                DestinationRule rule = dr.build();
                String name = resourceName(e.getKey());
                String other = ruleNames.putIfAbsent(name, e.getKey());
                if (other != null) {
                    skipped.add(new RouteTranslation.Skipped(
                            e.getKey(), name, List.of("resource name " + name + " is taken by host " + other)));
                    continue;
                }
                List<String> problems = new ArrayList<>();
                for (String p : IstioValidation.destinationRule(rule)) problems.add("DestinationRule: " + p);
                if (!problems.isEmpty()) {
                    skipped.add(new RouteTranslation.Skipped(e.getKey(), name, problems));
                    continue;
                }
                resources.add(resource(McpKind.DESTINATION_RULE, name, rule, e.getKey()));
            }
            return new RouteTranslation(table.version(), resources, skipped, unavailable, notes, dependencies);
        }

        private McpResource resource(McpKind kind, String name, com.google.protobuf.Message body, String host) {
            TreeMap<String, String> labels = new TreeMap<>();
            labels.put(ServiceEntryTranslator.LABEL_MANAGED_BY, ServiceEntryTranslator.MANAGED_BY);
            if (!options.revision().isEmpty()) labels.put(ServiceEntryTranslator.LABEL_REVISION, options.revision());
            return McpResource.of(kind, ingress.namespace(), name, labels, body, host);
        }

        // -------------------------------------------------------------- Gateway

        private Gateway gateway(String host, String istioHost) {
            Gateway.Builder gw = Gateway.newBuilder().putAllSelector(ingress.gatewaySelector());
            gw.addServers(Server.newBuilder()
                    .setPort(Port.newBuilder()
                            .setNumber(HTTP_PORT)
                            .setProtocol("HTTP")
                            .setName("http"))
                    .addHosts(istioHost));
            TlsEntry tls = tlsFor(host);
            if (tls != null) {
                gw.addServers(Server.newBuilder()
                        .setPort(Port.newBuilder()
                                .setNumber(HTTPS_PORT)
                                .setProtocol("HTTPS")
                                .setName("https"))
                        .addHosts(istioHost)
                        .setTls(ServerTLSSettings.newBuilder()
                                .setMode(ServerTLSSettings.TLSmode.SIMPLE)
                                .setCredentialName(ingress.credentialName(
                                        tls.secret().namespace(), tls.secret().name()))));
            }
            return gw.build();
        }

        /**
         * The TLS section whose Secret serves a host: its own, else a wildcard one for its parent domain, else one
         * without hosts; only sections whose Secret was read (a missing or broken one is reported by the source).
         */
        private TlsEntry tlsFor(String host) {
            TlsEntry t = usable(host);
            if (t == null && !host.isEmpty() && !host.startsWith("*.")) {
                int dot = host.indexOf('.');
                if (dot > 0) t = usable("*" + host.substring(dot));
            }
            return t != null || host.isEmpty() ? t : usable("");
        }

        private TlsEntry usable(String host) {
            TlsEntry t = table.tls().get(host);
            return t != null && t.material().isPresent() ? t : null;
        }

        // -------------------------------------------------------------- VirtualService

        private VirtualService virtualService(
                String istioHost, String gatewayName, List<HttpRoute> routes, HttpRoute defaultBackend) {
            VirtualService.Builder vs = VirtualService.newBuilder()
                    .addHosts(istioHost)
                    .addGateways(ingress.namespace() + "/" + gatewayName);
            List<HttpRoute> ordered = new ArrayList<>(routes);
            ordered.sort(KUBERNETES_PRECEDENCE);
            boolean catchAll = false;
            for (HttpRoute r : ordered) {
                vs.addAllHttp(httpRoutes(r, false));
                catchAll |= r.match().pathType() == PathType.PREFIX
                        && r.match().path().equals("/");
            }
            if (defaultBackend != null && !catchAll) vs.addAllHttp(httpRoutes(defaultBackend, true));
            return vs.build();
        }

        /**
         * The HTTP routes of an Ingress route: one, or two for a Prefix path with a prefix rewrite (its exact path
         * and what lies below it rewrite differently).
         */
        private List<HTTPRoute> httpRoutes(HttpRoute r, boolean defaultBackend) {
            HTTPRoute.Builder action = action(r, defaultBackend);
            String path = defaultBackend ? "/" : r.match().path();
            boolean exact = !defaultBackend && r.match().pathType() == PathType.EXACT;
            PathRewrite rewrite =
                    action.hasDirectResponse() ? null : r.rewrite().orElse(null);
            List<HTTPRoute> out = new ArrayList<>();
            if (exact) {
                HTTPRoute.Builder b = action.clone().addMatch(exactUri(path));
                if (rewrite != null) b.setRewrite(HTTPRewrite.newBuilder().setUri(rewrite.target()));
                out.add(b.build());
            } else if (path.equals("/")) {
                HTTPRoute.Builder b = action.clone();
                if (!defaultBackend) b.addMatch(prefixUri("/"));
                if (rewrite != null && rewrite.kind() == PathRewrite.Kind.WHOLE_PATH) {
                    b.setRewrite(wholePath(rewrite.target()));
                } else if (rewrite != null && !rewrite.target().equals("/")) {
                    // the matched prefix is "/": keep the slash after the target ("/a" becomes target + "/a")
                    b.setRewrite(HTTPRewrite.newBuilder().setUri(rewrite.target() + "/"));
                }
                out.add(b.build());
            } else if (rewrite != null && rewrite.kind() == PathRewrite.Kind.PREFIX) {
                String target = rewrite.target();
                out.add(action.clone()
                        .addMatch(exactUri(path))
                        .setRewrite(HTTPRewrite.newBuilder().setUri(target))
                        .build());
                out.add(action.clone()
                        .addMatch(prefixUri(path + "/"))
                        .setRewrite(HTTPRewrite.newBuilder().setUri(target.equals("/") ? "/" : target + "/"))
                        .build());
            } else {
                HTTPRoute.Builder b = action.clone().addMatch(exactUri(path)).addMatch(prefixUri(path + "/"));
                if (rewrite != null) b.setRewrite(wholePath(rewrite.target()));
                out.add(b.build());
            }
            return out;
        }

        /** The name and what the route does (destinations, an abort share, or a direct response), without matches. */
        private HTTPRoute.Builder action(HttpRoute r, boolean defaultBackend) {
            HTTPRoute.Builder out =
                    HTTPRoute.newBuilder().setName(r.owner().key() + (defaultBackend ? " default backend" : ""));
            String label = (defaultBackend ? "default backend" : r.match().toString()) + " of " + r.owner();

            LinkedHashMap<Destination, Long> shares = new LinkedHashMap<>();
            long missingWeight = 0;
            List<String> missing = new ArrayList<>();
            for (WeightedDestination wd : r.destinations()) {
                Target t = target(wd);
                if (t.missing() != null) {
                    missing.add(t.missing());
                    unavailable.add(label + ": " + t.missing());
                    missingWeight += wd.weight();
                } else if (wd.weight() > 0) {
                    shares.merge(t.destination(), (long) wd.weight(), Long::sum);
                }
            }
            if (shares.isEmpty()) {
                return out.setDirectResponse(HTTPDirectResponse.newBuilder()
                        .setStatus(UNAVAILABLE_STATUS)
                        .setBody(HTTPBody.newBuilder()
                                .setString("meshbridge: no destination of this route is available: "
                                        + String.join("; ", missing) + "\n")));
            }
            long knownWeight = 0;
            for (long w : shares.values()) knownWeight += w;
            for (Map.Entry<Destination, Long> s : shares.entrySet()) {
                HTTPRouteDestination.Builder d =
                        HTTPRouteDestination.newBuilder().setDestination(s.getKey());
                if (shares.size() > 1) d.setWeight((int) Math.min(s.getValue(), Integer.MAX_VALUE));
                out.addRoute(d);
            }
            if (missingWeight > 0) {
                out.setFault(HTTPFaultInjection.newBuilder()
                        .setAbort(HTTPFaultInjection.Abort.newBuilder()
                                .setHttpStatus(UNAVAILABLE_STATUS)
                                .setPercentage(
                                        Percent.newBuilder().setValue(abortPercentage(missingWeight, knownWeight)))));
            }
            return out;
        }

        private HTTPMatchRequest exactUri(String path) {
            return uri(StringMatch.newBuilder().setExact(path));
        }

        private HTTPMatchRequest prefixUri(String prefix) {
            return uri(StringMatch.newBuilder().setPrefix(prefix));
        }

        private HTTPMatchRequest uri(StringMatch.Builder match) {
            return HTTPMatchRequest.newBuilder().setUri(match).build();
        }

        // -------------------------------------------------------------- destinations

        private Target target(WeightedDestination wd) {
            return switch (wd.destination()) {
                case RegistryDestination d -> registryTarget(d);
                case KubernetesServiceDestination d -> {
                    Destination.Builder b = Destination.newBuilder().setHost(d.host());
                    if (d.port() > 0) b.setPort(PortSelector.newBuilder().setNumber(d.port()));
                    yield new Target(b.build(), null);
                }
            };
        }

        private Target registryTarget(RegistryDestination d) {
            dependencies.put(d.host(), signature(catalog, d.host()));
            List<ServicePort> ports = catalog.servedPorts(d.host());
            if (ports == null) {
                return Target.missing(
                        catalog.contains(d.host())
                                ? d.host() + " is in the catalog but not served to istiod (see the skipped services)"
                                : d.host() + " is not in the catalog");
            }
            ServicePort port = d.servicePort(ports).orElse(null);
            if (port == null) {
                return Target.missing(
                        d.port() == 0
                                ? d.host() + " has no port"
                                : d.host() + " has no port " + d.port() + " (it has "
                                        + ports.stream()
                                                .map(ServicePort::number)
                                                .toList() + ")");
            }
            Destination.Builder b = Destination.newBuilder()
                    .setHost(d.host())
                    .setPort(PortSelector.newBuilder().setNumber(port.number()));
            if (!d.subset().isEmpty()) {
                b.setSubset(d.subset());
                if (!d.subsetLabels().isEmpty()) {
                    SortedMap<String, SortedMap<String, String>> byName =
                            subsets.computeIfAbsent(d.host(), h -> new TreeMap<>());
                    SortedMap<String, String> earlier = byName.putIfAbsent(d.subset(), new TreeMap<>(d.subsetLabels()));
                    if (earlier != null && !earlier.equals(d.subsetLabels())) {
                        notes.add("subset " + d.subset() + " of " + d.host() + " is named with labels " + earlier
                                + " and " + d.subsetLabels() + "; the DestinationRule keeps " + earlier);
                    }
                }
            }
            return new Target(b.build(), null);
        }
    }

    /**
     * A rewrite of the whole path to {@code target} (the query is kept): Envoy's regex rewrite of {@code ^.*$}, the
     * target's backslashes escaped (in a substitution they would start a group reference).
     */
    static HTTPRewrite wholePath(String target) {
        return HTTPRewrite.newBuilder()
                .setUriRegexRewrite(RegexRewrite.newBuilder().setMatch("^.*$").setRewrite(target.replace("\\", "\\\\")))
                .build();
    }

    /** The percentage of requests that answer 503, rounded to Istio's resolution (0.0001) and never below it. */
    static double abortPercentage(long missingWeight, long knownWeight) {
        double share = 100.0 * missingWeight / (missingWeight + knownWeight);
        double rounded = Math.round(share * 10_000) / 10_000.0;
        return Math.min(Math.max(rounded, 0.0001), 99.9999);
    }

    /** Where one destination's share goes: a destination, or why it has none. */
    private record Target(Destination destination, String missing) {
        static Target missing(String why) {
            return new Target(null, why);
        }
    }
}
