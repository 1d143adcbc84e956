package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The checks Envoy applies to a listener or route configuration beyond its protoc-gen-validate field rules (those are
 * proven in tests with the validators generated from Envoy's own {@code .proto} files: the {@code envoy-validation}
 * module). The bridge runs these before it serves a translation of outside input (Ingress routes, the sidecar's
 * routes): one that breaks a rule is not served, and the last good one stays. Each check names the Envoy source
 * check it mirrors.
 */
final class EnvoySemantics {

    private EnvoySemantics() {}

    /** What Envoy would refuse in this resource beyond its field rules; empty when nothing. */
    static List<String> check(XdsResource r) {
        List<String> out = new ArrayList<>();
        try {
            switch (r.type()) {
                case LISTENER -> listener(Listener.parseFrom(r.value()), out);
                case ROUTE -> route(RouteConfiguration.parseFrom(r.value()), out);
                default -> {
                    // clusters, load assignments, secrets and Dubbo routes: their field rules are all Envoy checks
                }
            }
        } catch (InvalidProtocolBufferException e) {
            out.add("does not parse: " + e.getMessage());
        }
        return out;
    }

    private static void listener(Listener l, List<String> out) {
        Set<String> matches = new HashSet<>();
        for (FilterChain fc : l.getFilterChainsList()) {
            // source/common/listener_manager/filter_chain_manager_impl.cc, addFilterChains: "multiple filter
            // chains with the same matching rules are defined"
            if (!matches.add(fc.getFilterChainMatch().toByteString().toStringUtf8()))
                out.add("listener " + l.getName() + ": two filter chains have the same match");
            for (Filter f : fc.getFiltersList()) {
                if (f.getTypedConfig().getTypeUrl().endsWith(".HttpConnectionManager")) hcm(f.getTypedConfig(), out);
            }
        }
    }

    private static void hcm(Any config, List<String> out) {
        HttpConnectionManager hcm;
        try {
            hcm = HttpConnectionManager.parseFrom(config.getValue());
        } catch (InvalidProtocolBufferException e) {
            out.add("HttpConnectionManager does not parse: " + e.getMessage());
            return;
        }
        // source/common/config/utility.h, checkTerminalFilter (via Http::FilterChainUtility): "terminal filter
        // named envoy.filters.http.router ... must be the last filter in a http filter chain", "non-terminal filter
        // ... is the last filter": the router, the only terminal filter the bridge uses, is last
        int n = hcm.getHttpFiltersCount();
        for (int i = 0; i < n; i++) {
            boolean router = hcm.getHttpFilters(i).getName().equals(EnvoyTranslator.ROUTER_FILTER);
            if (router != (i == n - 1))
                out.add(hcm.getStatPrefix() + ": the router must be the last HTTP filter, and only it");
        }
        if (hcm.hasRouteConfig()) route(hcm.getRouteConfig(), out);
    }

    private static void route(RouteConfiguration rc, List<String> out) {
        Set<String> domains = new HashSet<>();
        boolean defaultHost = false;
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            for (String d : vh.getDomainsList()) {
                // source/common/router/config_impl.cc, RouteMatcher: "Only unique values for domains are
                // permitted. Duplicate entry of domain ..." (compared without regard to case)
                if (!domains.add(d.toLowerCase(Locale.ROOT)))
                    out.add(rc.getName() + ": domain " + d + " is in two virtual hosts");
                // RouteMatcher: "Only a single wildcard domain is permitted in route ..."
                if (d.equals("*")) {
                    if (defaultHost) out.add(rc.getName() + ": two virtual hosts have the domain *");
                    defaultHost = true;
                }
            }
            for (Route r : vh.getRoutesList()) {
                // source/common/common/regex.cc, CompiledGoogleReMatcher: "invalid regex" (RE2; java.util.regex
                // stands in for it here, and is stricter on nothing the bridge writes)
                if (r.getRoute().hasRegexRewrite())
                    regex(r.getRoute().getRegexRewrite().getPattern().getRegex(), rc, out);
                if (r.getMatch().hasSafeRegex())
                    regex(r.getMatch().getSafeRegex().getRegex(), rc, out);
            }
        }
    }

    private static void regex(String re, RouteConfiguration rc, List<String> out) {
        try {
            Pattern.compile(re);
        } catch (PatternSyntaxException e) {
            out.add(rc.getName() + ": regex " + re + " does not compile");
        }
    }
}
