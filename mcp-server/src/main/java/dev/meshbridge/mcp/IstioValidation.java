package dev.meshbridge.mcp;

import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.mcp.api.networking.v1alpha3.Destination;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPFaultInjection;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPMatchRequest;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRoute;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRouteDestination;
import dev.meshbridge.mcp.api.networking.v1alpha3.Server;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServerTLSSettings;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServicePort;
import dev.meshbridge.mcp.api.networking.v1alpha3.StringMatch;
import dev.meshbridge.mcp.api.networking.v1alpha3.Subset;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The checks istiod's config store runs on the resources the bridge serves before accepting them (Istio's {@code
 * ValidateServiceEntry}, {@code ValidateWorkloadEntry}, {@code ValidateGateway}, {@code ValidateVirtualService} and
 * {@code ValidateDestinationRule}), for the fields the bridge sets. istiod drops a resource that fails them with only a
 * log line of its own, so the bridge runs them first and never sends such a resource.
 *
 * <p>What is checked on a ServiceEntry and WorkloadEntry:
 *
 * <ol>
 *   <li>hosts: at least one; each a DNS-1123 name (a {@code *.} prefix allowed, never {@code *} alone), the last
 *       label not all digits;
 *   <li>ports: at least one; names DNS-1123 labels and unique; numbers in 1..65535 and unique; the protocol one
 *       istiod knows;
 *   <li>only one of endpoints and workloadSelector; selector labels valid Kubernetes labels;
 *   <li>STATIC endpoints: an IP address; every port name one of the service's; port numbers in 1..65535; labels
 *       valid; locality {@code region[/zone[/subzone]]} without empty parts;
 *   <li>exportTo: {@code .}, {@code *}, {@code ~} or namespace names, no duplicates, {@code *} and {@code ~} alone.
 * </ol>
 *
 * <p>On a Gateway: a DNS-1123 label as name; at least one server; each with hosts ({@code [namespace/]host}, {@code *}
 * or a {@code *.} wildcard allowed), a port with a name, a number in 1..65535 and a protocol istiod knows; TLS settings
 * exactly on HTTPS and TLS ports (an HTTP port may only redirect to HTTPS); SIMPLE and MUTUAL TLS with a {@code
 * credentialName} or a certificate and key, MUTUAL with a CA bundle; port names unique; selector labels valid.
 *
 * <p>On a VirtualService: hosts (for a gateway-bound one {@code *} is allowed), no two that overlap; gateways as {@code
 * namespace/name} of DNS-1123 labels (or {@code mesh}); at least one HTTP route, each with destinations or a direct
 * response (Istio 1.15 and later), never both; a direct response status in 200..600 and a body under 1 MB; an abort
 * fault with a status in 200..600 and a percentage of 0 or 0.0001..100; URI prefixes not empty; destination hosts
 * valid and not {@code *}, subsets DNS-1123 labels, ports in 1..65535, weights not negative and, with several
 * destinations, not all 0; a rewrite that sets something, never both a URI and a regex, a regex with both parts and at
 * most 1,024 characters.
 *
 * <p>On a DestinationRule: a valid host; subset names DNS-1123 labels and unique; subset labels valid.
 */
public final class IstioValidation {

    private IstioValidation() {}

    /** What is wrong with a ServiceEntry; empty when istiod would accept it. */
    public static List<String> serviceEntry(ServiceEntry se) {
        List<String> problems = new ArrayList<>();
        if (se.getHostsCount() == 0) problems.add("hosts must not be empty");
        for (String host : se.getHostsList()) {
            String p = hostProblem(host);
            if (p != null) problems.add("host '" + host + "' " + p);
        }
        for (String address : se.getAddressesList()) {
            String ip = address.contains("/") ? address.substring(0, address.indexOf('/')) : address;
            if (!IpLiterals.isIp(ip)) problems.add("address '" + address + "' is not an IP address or CIDR");
        }
        if (se.getPortsCount() == 0) problems.add("ports must not be empty");
        Set<String> portNames = new HashSet<>();
        Map<Integer, String> portNumbers = new HashMap<>();
        for (ServicePort port : se.getPortsList()) {
            if (!Dns1123.isLabel(port.getName())) {
                problems.add("port name '" + port.getName() + "' is not a DNS-1123 label");
            }
            if (!portNames.add(port.getName())) problems.add("port name '" + port.getName() + "' is used twice");
            if (port.getNumber() < 1 || port.getNumber() > 65535) {
                problems.add("port " + port.getName() + ": number " + port.getNumber() + " is out of 1..65535");
            } else {
                String other = portNumbers.putIfAbsent(port.getNumber(), port.getName());
                if (other != null) {
                    problems.add("port number " + port.getNumber() + " is used twice, by '" + other + "' and '"
                            + port.getName() + "'");
                }
            }
            if (port.getTargetPort() > 65535) {
                problems.add("port " + port.getName() + ": targetPort " + port.getTargetPort() + " is out of range");
            }
            if (!port.getProtocol().isEmpty() && !IstioProtocols.accepted(port.getProtocol())) {
                problems.add("port " + port.getName() + ": protocol '" + port.getProtocol() + "' is unknown to Istio");
            }
        }
        if (se.hasWorkloadSelector() && se.getEndpointsCount() > 0) {
            problems.add("only one of workloadSelector and endpoints may be set");
        }
        if (se.hasWorkloadSelector()) {
            problems.addAll(
                    labelProblems("workloadSelector", se.getWorkloadSelector().getLabelsMap()));
        }
        switch (se.getResolution()) {
            case STATIC -> {
                for (int i = 0; i < se.getEndpointsCount(); i++) {
                    for (String p : workloadProblems(se.getEndpoints(i), portNames)) {
                        problems.add("endpoints[" + i + "]: " + p);
                    }
                }
            }
            case NONE -> {
                if (se.getEndpointsCount() > 0) problems.add("resolution NONE must not have endpoints");
            }
            default -> problems.add("resolution " + se.getResolution() + " is not produced by the bridge");
        }
        String exportTo = McpOptions.exportToProblem(se.getExportToList());
        if (exportTo != null) problems.add(exportTo);
        return problems;
    }

    /**
     * What is wrong with a WorkloadEntry selected by a STATIC ServiceEntry; empty when istiod would accept it.
     *
     * @param servicePorts the port names of the ServiceEntry that selects it
     */
    public static List<String> workloadEntry(WorkloadEntry we, Set<String> servicePorts) {
        return workloadProblems(we, servicePorts);
    }

    private static List<String> workloadProblems(WorkloadEntry we, Set<String> servicePorts) {
        List<String> problems = new ArrayList<>();
        if (we.getAddress().isEmpty()) {
            problems.add("address is required");
        } else if (!IpLiterals.isIp(we.getAddress())) {
            problems.add("address '" + we.getAddress() + "' is not an IP address (required for STATIC resolution)");
        }
        for (Map.Entry<String, Integer> port : we.getPortsMap().entrySet()) {
            if (!servicePorts.contains(port.getKey())) {
                problems.add("port '" + port.getKey() + "' is not a port of the ServiceEntry " + servicePorts);
            }
            if (!Dns1123.isLabel(port.getKey())) problems.add("port name '" + port.getKey() + "' is invalid");
            if (port.getValue() < 1 || port.getValue() > 65535) {
                problems.add("port " + port.getKey() + "=" + port.getValue() + " is out of 1..65535");
            }
        }
        problems.addAll(labelProblems("labels", we.getLabelsMap()));
        String locality = we.getLocality();
        if (!locality.isEmpty()) {
            String[] parts = locality.split("/", -1);
            boolean emptyPart = false;
            for (String part : parts) emptyPart |= part.isEmpty();
            if (parts.length > 3 || emptyPart) {
                problems.add("locality '" + locality + "' is not region/zone/subzone without empty parts");
            }
        }
        return problems;
    }

    private static List<String> labelProblems(String field, Map<String, String> labels) {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> l : labels.entrySet()) {
            if (!Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue())) {
                problems.add(field + ": '" + l.getKey() + "=" + l.getValue() + "' is not a valid Kubernetes label");
            }
        }
        return problems;
    }

    // ------------------------------------------------------------------ Gateway

    /** Protocols istiod accepts on a Gateway server port (case does not matter). */
    private static final Set<String> SERVER_PROTOCOLS =
            Set.of("HTTP", "HTTPS", "HTTP2", "GRPC", "GRPC-WEB", "TCP", "TLS", "MONGO", "REDIS", "MYSQL");

    /**
     * What is wrong with a Gateway; empty when istiod would accept it.
     *
     * @param name the resource name (without namespace)
     */
    public static List<String> gateway(String name, Gateway gateway) {
        List<String> problems = new ArrayList<>();
        if (!Dns1123.isLabel(name)) problems.add("gateway name '" + name + "' is not a DNS-1123 label");
        if (gateway.getServersCount() == 0) problems.add("gateway must have at least one server");
        Set<String> portNames = new HashSet<>();
        for (int i = 0; i < gateway.getServersCount(); i++) {
            Server server = gateway.getServers(i);
            for (String p : serverProblems(server)) problems.add("servers[" + i + "]: " + p);
            if (server.hasPort() && !portNames.add(server.getPort().getName())) {
                problems.add("port names in servers must be unique: duplicate name "
                        + server.getPort().getName());
            }
        }
        problems.addAll(labelProblems("selector", gateway.getSelectorMap()));
        return problems;
    }

    private static List<String> serverProblems(Server server) {
        List<String> problems = new ArrayList<>();
        if (server.getHostsCount() == 0) problems.add("server config must contain at least one host");
        for (String host : server.getHostsList()) {
            String p = namespacedHostProblem(host);
            if (p != null) problems.add("host '" + host + "' " + p);
        }
        if (!server.hasPort()) {
            problems.add("port is required");
            return problems;
        }
        String protocol = server.getPort().getProtocol().toUpperCase(Locale.ROOT);
        boolean knownProtocol = SERVER_PROTOCOLS.contains(protocol);
        if (!knownProtocol) problems.add("invalid protocol '" + server.getPort().getProtocol() + "'");
        if (server.getPort().getNumber() < 1 || server.getPort().getNumber() > 65535) {
            problems.add("port number " + server.getPort().getNumber() + " is out of 1..65535");
        }
        if (server.getPort().getName().isEmpty()) problems.add("port name must be set");
        if (!server.getBind().isEmpty() && !IpLiterals.isIp(server.getBind())) {
            problems.add("bind '" + server.getBind() + "' is not an IP address");
        }
        if (!knownProtocol) return problems;
        boolean tlsPort = protocol.equals("HTTPS") || protocol.equals("TLS");
        boolean httpPort = protocol.equals("HTTP") || protocol.equals("HTTP2") || protocol.startsWith("GRPC");
        if (tlsPort && !server.hasTls()) {
            problems.add("server must have TLS settings for HTTPS/TLS protocols");
        } else if (!tlsPort && server.hasTls()) {
            ServerTLSSettings tls = server.getTls();
            boolean redirectOnly = tls.getMode() == ServerTLSSettings.TLSmode.PASSTHROUGH
                    && tls.getServerCertificate().isEmpty()
                    && tls.getPrivateKey().isEmpty()
                    && tls.getCaCertificates().isEmpty()
                    && tls.getCredentialName().isEmpty();
            if (!httpPort) problems.add("server cannot have TLS settings for non HTTPS/TLS ports");
            else if (!redirectOnly) problems.add("server cannot have TLS settings for plain text HTTP ports");
        }
        if (server.hasTls()) problems.addAll(tlsProblems(server.getTls()));
        return problems;
    }

    private static List<String> tlsProblems(ServerTLSSettings tls) {
        List<String> problems = new ArrayList<>();
        boolean files =
                !tls.getServerCertificate().isEmpty() && !tls.getPrivateKey().isEmpty();
        boolean credential = !tls.getCredentialName().isEmpty();
        switch (tls.getMode()) {
            case ISTIO_MUTUAL -> {
                if (!tls.getServerCertificate().isEmpty()
                        || !tls.getPrivateKey().isEmpty()
                        || !tls.getCaCertificates().isEmpty()
                        || credential) {
                    problems.add("ISTIO_MUTUAL TLS cannot have a certificate, key, CA bundle or credentialName");
                }
            }
            case SIMPLE, MUTUAL -> {
                if (files && credential) {
                    problems.add("only one of credentialName and serverCertificate/privateKey may be set");
                }
                if (!credential) {
                    String prefix = tls.getMode() == ServerTLSSettings.TLSmode.SIMPLE ? "SIMPLE TLS" : "MUTUAL TLS";
                    if (tls.getServerCertificate().isEmpty()) problems.add(prefix + " requires a server certificate");
                    if (tls.getPrivateKey().isEmpty()) problems.add(prefix + " requires a private key");
                    if (tls.getMode() == ServerTLSSettings.TLSmode.MUTUAL
                            && tls.getCaCertificates().isEmpty()) {
                        problems.add(prefix + " requires a client CA bundle");
                    }
                }
            }
            default -> {
                // PASSTHROUGH and AUTO_PASSTHROUGH ignore certificates (istiod only warns)
            }
        }
        return problems;
    }

    /** Why istiod would refuse a Gateway server host ({@code [namespace/]host}), or null. */
    static String namespacedHostProblem(String host) {
        String name = host;
        int slash = host.indexOf('/');
        if (slash >= 0) {
            String namespace = host.substring(0, slash);
            name = host.substring(slash + 1);
            if (!namespace.equals("*")
                    && !namespace.equals(".")
                    && !namespace.equals("~")
                    && !Dns1123.isLabel(namespace)) {
                return "has an invalid namespace '" + namespace + "'";
            }
        }
        return wildcardDomainProblem(name, true);
    }

    // ------------------------------------------------------------------ VirtualService

    private static final int MAX_DIRECT_RESPONSE_BODY = 1024 * 1024;

    /** What is wrong with a VirtualService; empty when istiod would accept it. */
    public static List<String> virtualService(VirtualService vs) {
        List<String> problems = new ArrayList<>();
        boolean boundToGateway =
                vs.getGatewaysCount() > 0 && !vs.getGatewaysList().contains("mesh");
        if (vs.getHostsCount() == 0) problems.add("hosts must not be empty (only a delegate has none)");
        for (String host : vs.getHostsList()) {
            String p = host.equals("*") && !boundToGateway
                    ? "is not allowed for virtual services bound to the mesh gateway"
                    : wildcardDomainProblem(host, boundToGateway);
            if (p != null) problems.add("host '" + host + "' " + p);
        }
        for (int i = 0; i < vs.getHostsCount(); i++) {
            for (int j = i + 1; j < vs.getHostsCount(); j++) {
                if (hostsOverlap(vs.getHosts(i), vs.getHosts(j))) {
                    problems.add("duplicate hosts in virtual service: " + vs.getHosts(i) + " & " + vs.getHosts(j));
                }
            }
        }
        for (String gateway : vs.getGatewaysList()) {
            if (gateway.equals("mesh")) continue;
            int slash = gateway.indexOf('/');
            if (slash < 0
                    || !Dns1123.isLabel(gateway.substring(0, slash))
                    || !Dns1123.isLabel(gateway.substring(slash + 1))) {
                problems.add("gateway '" + gateway + "' is not namespace/name of DNS-1123 labels");
            }
        }
        if (vs.getHttpCount() == 0) problems.add("http, tcp or tls must be provided in virtual service");
        for (int i = 0; i < vs.getHttpCount(); i++) {
            HTTPRoute route = vs.getHttp(i);
            String where = "http[" + i + "]" + (route.getName().isEmpty() ? "" : " (" + route.getName() + ")") + ": ";
            for (String p : httpRouteProblems(route)) problems.add(where + p);
        }
        String exportTo = McpOptions.exportToProblem(vs.getExportToList());
        if (exportTo != null) problems.add(exportTo);
        return problems;
    }

    private static List<String> httpRouteProblems(HTTPRoute route) {
        List<String> problems = new ArrayList<>();
        if (route.hasDirectResponse()) {
            if (route.getRouteCount() > 0) problems.add("HTTP route cannot contain both route and direct_response");
            if (route.hasFault()) problems.add("HTTP route cannot contain both fault and direct_response");
            if (route.hasRewrite()) problems.add("HTTP route cannot contain both rewrite and direct_response");
            int status = route.getDirectResponse().getStatus();
            if (status < 200 || status > 600) problems.add("direct_response status " + status + " is not in 200..599");
            var body = route.getDirectResponse().getBody();
            int size = body.hasBytes()
                    ? body.getBytes().size()
                    : body.getStringBytes().size();
            if (size > MAX_DIRECT_RESPONSE_BODY) problems.add("direct_response body must be less than 1MB");
        } else if (route.getRouteCount() == 0) {
            problems.add("HTTP route, redirect or direct_response is required");
        }
        for (HTTPMatchRequest match : route.getMatchList()) {
            if (match.hasUri()) {
                StringMatch uri = match.getUri();
                if (uri.hasPrefix() && uri.getPrefix().isEmpty()) problems.add("uri prefix match should not be empty");
                if (uri.hasRegex() && uri.getRegex().isEmpty()) problems.add("uri regex match should not be empty");
            }
        }
        long total = 0;
        for (HTTPRouteDestination d : route.getRouteList()) {
            if (!d.hasDestination()) {
                problems.add("destination is required");
            } else {
                problems.addAll(destinationProblems(d.getDestination()));
            }
            if (d.getWeight() < 0) problems.add("weight " + d.getWeight() + " < 0");
            total += d.getWeight();
        }
        if (route.getRouteCount() > 1 && total == 0) problems.add("total destination weight = 0");
        if (route.hasFault()) problems.addAll(faultProblems(route.getFault()));
        if (route.hasRewrite()) {
            var rewrite = route.getRewrite();
            if (!rewrite.getUri().isEmpty() && rewrite.hasUriRegexRewrite()) {
                problems.add("rewrite may only contain one of URI or UriRegexRewrite");
            }
            if (rewrite.getUri().isEmpty()
                    && !rewrite.hasUriRegexRewrite()
                    && rewrite.getAuthority().isEmpty()) {
                problems.add("rewrite must specify at least one of URI, UriRegexRewrite, or authority");
            }
            if (rewrite.hasUriRegexRewrite()) {
                var regex = rewrite.getUriRegexRewrite();
                if (regex.getMatch().isEmpty() || regex.getRewrite().isEmpty()) {
                    problems.add("UriRegexRewrite requires both Rewrite and Match fields to be specified");
                } else if (regex.getMatch().length() > 1024) {
                    problems.add("UriRegexRewrite match is too large, max length allowed is 1024");
                }
            }
        }
        return problems;
    }

    private static List<String> destinationProblems(Destination d) {
        List<String> problems = new ArrayList<>();
        String host = d.getHost();
        String p = host.equals("*") ? "is not a destination" : wildcardDomainProblem(host, false);
        if (p != null) problems.add("destination host '" + host + "' " + p);
        if (!d.getSubset().isEmpty() && !Dns1123.isLabel(d.getSubset())) {
            problems.add("subset name is invalid: " + d.getSubset());
        }
        if (d.hasPort() && (d.getPort().getNumber() < 1 || d.getPort().getNumber() > 65535)) {
            problems.add("destination port " + d.getPort().getNumber() + " is out of 1..65535");
        }
        return problems;
    }

    private static List<String> faultProblems(HTTPFaultInjection fault) {
        List<String> problems = new ArrayList<>();
        if (!fault.hasAbort()) {
            problems.add("HTTP fault injection must have an abort and/or a delay");
            return problems;
        }
        HTTPFaultInjection.Abort abort = fault.getAbort();
        if (abort.hasPercentage()) {
            double v = abort.getPercentage().getValue();
            if (v < 0 || v > 100 || (v > 0 && v < 0.0001)) {
                problems.add("percentage " + v + " is neither 0.0, nor in range [0.0001, 100.0]");
            }
        }
        switch (abort.getErrorTypeCase()) {
            case HTTP_STATUS -> {
                int status = abort.getHttpStatus();
                if (status < 200 || status > 600) problems.add("abort HTTP status " + status + " is not in 200..599");
            }
            case GRPC_STATUS -> {
                if (abort.getGrpcStatus().isEmpty()) problems.add("abort gRPC status is empty");
            }
            default -> problems.add("abort configured, but error type not set");
        }
        return problems;
    }

    /** Whether two VirtualService hosts match each other (equal, or one a wildcard covering the other). */
    private static boolean hostsOverlap(String a, String b) {
        if (a.equals(b) || a.equals("*") || b.equals("*")) return true;
        return covers(a, b) || covers(b, a);
    }

    private static boolean covers(String wildcard, String host) {
        if (!wildcard.startsWith("*")) return false;
        return host.endsWith(wildcard.substring(1));
    }

    // ------------------------------------------------------------------ DestinationRule

    /** What is wrong with a DestinationRule; empty when istiod would accept it. */
    public static List<String> destinationRule(DestinationRule rule) {
        List<String> problems = new ArrayList<>();
        String p = wildcardDomainProblem(rule.getHost(), true);
        if (p != null) problems.add("host '" + rule.getHost() + "' " + p);
        Set<String> names = new HashSet<>();
        for (Subset subset : rule.getSubsetsList()) {
            if (!names.add(subset.getName())) problems.add("duplicate subset names: " + subset.getName());
            if (subset.getName().isEmpty()) problems.add("subset name cannot be empty");
            else if (!Dns1123.isLabel(subset.getName())) problems.add("subset name is invalid: " + subset.getName());
            problems.addAll(labelProblems("subset " + subset.getName() + " labels", subset.getLabelsMap()));
        }
        String exportTo = McpOptions.exportToProblem(rule.getExportToList());
        if (exportTo != null) problems.add(exportTo);
        return problems;
    }

    /**
     * Why istiod would refuse a host where a wildcard may lead ({@code *.example.com}), or null.
     *
     * @param allowStar whether {@code *} alone is accepted
     */
    static String wildcardDomainProblem(String host, boolean allowStar) {
        if (host.isEmpty()) return "is empty";
        if (host.equals("*")) return allowStar ? null : "is a bare wildcard";
        if (host.length() > 255) return "is longer than 255 characters";
        String rest = host.startsWith("*.") ? host.substring(2) : host;
        return Dns1123.subdomainProblem(rest);
    }

    /** Why istiod would refuse a ServiceEntry host, or null. */
    static String hostProblem(String host) {
        if (host.equals("*")) return "is a bare wildcard";
        String name = host.startsWith("*.") ? host.substring(2) : host;
        if (name.endsWith(".")) name = name.substring(0, name.length() - 1);
        if (name.length() > 255) return "is longer than 255 characters";
        String problem = Dns1123.subdomainProblem(name);
        if (problem != null) return problem;
        String tld = name.substring(name.lastIndexOf('.') + 1);
        if (tld.chars().allMatch(Character::isDigit)) return "ends in the all-numeric label '" + tld + "'";
        return null;
    }
}
