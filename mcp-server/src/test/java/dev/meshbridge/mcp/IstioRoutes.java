package dev.meshbridge.mcp;

import dev.meshbridge.mcp.api.networking.v1alpha3.Destination;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPMatchRequest;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRoute;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRouteDestination;
import dev.meshbridge.mcp.api.networking.v1alpha3.Server;
import dev.meshbridge.mcp.api.networking.v1alpha3.Subset;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/** Renders Gateways, VirtualServices and DestinationRules as short lines a reader checks at a glance. */
final class IstioRoutes {

    private IstioRoutes() {}

    /** One line per server: {@code <protocol> <port> <name> [<hosts>]} and, with TLS, {@code <mode> <credential>}. */
    static List<String> servers(Gateway gateway) {
        List<String> out = new ArrayList<>();
        for (Server s : gateway.getServersList()) {
            StringBuilder sb = new StringBuilder()
                    .append(s.getPort().getProtocol())
                    .append(' ')
                    .append(s.getPort().getNumber())
                    .append(' ')
                    .append(s.getPort().getName())
                    .append(' ')
                    .append(s.getHostsList());
            if (s.hasTls()) {
                sb.append(' ')
                        .append(s.getTls().getMode())
                        .append(' ')
                        .append(s.getTls().getCredentialName());
            }
            out.add(sb.toString());
        }
        return out;
    }

    /**
     * One line per HTTP route: {@code <matches> -> <weight> <host>:<port>[/<subset>], ... [<name>]}; matches read
     * {@code exact /p}, {@code prefix /p/} joined by {@code |}, {@code *} for none; an abort fault adds {@code abort
     * <status> <percent>%}, a rewrite {@code rewrite <uri>} or {@code rewrite regex <match> <substitution>}; a direct
     * response reads {@code direct <status> "<body>"}.
     */
    static List<String> http(VirtualService vs) {
        List<String> out = new ArrayList<>();
        for (HTTPRoute r : vs.getHttpList()) {
            List<String> matches = new ArrayList<>();
            for (HTTPMatchRequest m : r.getMatchList()) {
                if (m.getUri().hasExact()) matches.add("exact " + m.getUri().getExact());
                else if (m.getUri().hasPrefix())
                    matches.add("prefix " + m.getUri().getPrefix());
                else matches.add("?");
            }
            StringBuilder sb = new StringBuilder(matches.isEmpty() ? "*" : String.join(" | ", matches));
            sb.append(" ->");
            if (r.hasDirectResponse()) {
                sb.append(" direct ")
                        .append(r.getDirectResponse().getStatus())
                        .append(" \"")
                        .append(r.getDirectResponse().getBody().getString().strip())
                        .append('"');
            }
            for (int i = 0; i < r.getRouteCount(); i++) {
                HTTPRouteDestination d = r.getRoute(i);
                sb.append(i == 0 ? " " : ", ");
                if (d.getWeight() > 0) sb.append(d.getWeight()).append(' ');
                sb.append(destination(d.getDestination()));
            }
            if (r.hasRewrite()) {
                sb.append(" rewrite ");
                if (r.getRewrite().hasUriRegexRewrite()) {
                    sb.append("regex ")
                            .append(r.getRewrite().getUriRegexRewrite().getMatch())
                            .append(' ')
                            .append(r.getRewrite().getUriRegexRewrite().getRewrite());
                } else {
                    sb.append(r.getRewrite().getUri());
                }
            }
            if (r.hasFault()) {
                sb.append(" abort ")
                        .append(r.getFault().getAbort().getHttpStatus())
                        .append(' ')
                        .append(r.getFault().getAbort().getPercentage().getValue())
                        .append('%');
            }
            out.add(sb.append(" [").append(r.getName()).append(']').toString());
        }
        return out;
    }

    static String destination(Destination d) {
        return d.getHost()
                + (d.hasPort() ? ":" + d.getPort().getNumber() : "")
                + (d.getSubset().isEmpty() ? "" : "/" + d.getSubset());
    }

    /** One line per subset: {@code <name> <labels>}. */
    static List<String> subsets(DestinationRule rule) {
        List<String> out = new ArrayList<>();
        for (Subset s : rule.getSubsetsList()) out.add(s.getName() + " " + new TreeMap<>(s.getLabelsMap()));
        return out;
    }
}
