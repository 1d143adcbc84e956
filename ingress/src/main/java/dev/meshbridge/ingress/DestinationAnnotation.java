package dev.meshbridge.ingress;

import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.route.Destination;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.WeightedDestination;
import dev.meshbridge.core.util.Hash64;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * Parses the destination annotations, {@code meshbridge.dev/destination} and Higress's {@code higress.io/destination},
 * which share one syntax: one destination per line, {@code [<weight>%] <host>[:<port>] [<subset>]}.
 *
 * <ol>
 *   <li>the weight is a whole number followed by {@code %}; without it a line weighs 100 (as in Higress); weights are
 *       relative, so they need not add up to 100, but not to 0;
 *   <li>the host is a mesh host of the catalog ({@code orders.dubbo}, {@code provider.default-group.public.nacos});
 *       it is lower-cased (DNS is case-insensitive, so Higress's {@code DEFAULT-GROUP} matches); a host {@code
 *       <name>.<namespace>.svc.<cluster domain>} is a Kubernetes Service and needs a port;
 *   <li>the port, when given, is the service port; without it the service's own port is used;
 *   <li>the subset is either a name (a subset defined elsewhere, as with Higress) or, our extension, labels {@code
 *       key=value[,key=value]} selecting the endpoints (the subset then gets a derived name);
 *   <li>blank lines and lines starting with {@code #} are skipped.
 * </ol>
 */
final class DestinationAnnotation {

    /** Our annotation; when both are present it wins. */
    static final String OURS = "meshbridge.dev/destination";

    static final String HIGRESS = "higress.io/destination";

    /** The destinations, or the problems (one per bad line, naming the line). */
    record Result(List<WeightedDestination> destinations, List<String> problems) {}

    private DestinationAnnotation() {}

    static Result parse(String value, String clusterDomain) {
        List<WeightedDestination> out = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        String[] lines = value.split("\\r?\\n", -1);
        long sum = 0;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String where = "line " + (i + 1) + " '" + line + "': ";
            String[] tokens = line.split("\\s+");
            int at = 0;
            int weight = 100;
            if (tokens[0].endsWith("%")) {
                String w = tokens[0].substring(0, tokens[0].length() - 1);
                try {
                    weight = Integer.parseInt(w);
                } catch (NumberFormatException e) {
                    weight = -1;
                }
                if (weight < 0 || weight > WeightedDestination.MAX_WEIGHT) {
                    problems.add(where + "the weight '" + tokens[0] + "' must be a whole number of 0.."
                            + WeightedDestination.MAX_WEIGHT + " followed by %");
                    continue;
                }
                at++;
            }
            if (tokens.length <= at) {
                problems.add(where + "a weight without a host");
                continue;
            }
            if (tokens.length > at + 2) {
                problems.add(where + "unexpected '" + tokens[at + 2] + "'; the form is [weight%] host[:port] [subset]");
                continue;
            }
            Destination d = destination(
                    tokens[at], tokens.length > at + 1 ? tokens[at + 1] : "", clusterDomain, where, problems);
            if (d == null) continue;
            out.add(new WeightedDestination(d, weight));
            sum += weight;
        }
        if (problems.isEmpty() && out.isEmpty()) problems.add("names no destination");
        if (problems.isEmpty() && sum == 0) problems.add("the weights add up to 0, so no request could be sent");
        return problems.isEmpty() ? new Result(List.copyOf(out), List.of()) : new Result(List.of(), problems);
    }

    private static Destination destination(
            String address, String subset, String clusterDomain, String where, List<String> problems) {
        String host = address;
        int port = 0;
        int colon = address.lastIndexOf(':');
        if (colon >= 0) {
            host = address.substring(0, colon);
            String p = address.substring(colon + 1);
            try {
                port = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                problems.add(where + "the port '" + p + "' is not a number in 1..65535");
                return null;
            }
        }
        host = host.toLowerCase(Locale.ROOT);
        String problem = Dns1123.subdomainProblem(host);
        if (problem != null) {
            String hint = host.contains("_")
                    ? " (hosts use '-' where registries use '_': " + host.replace('_', '-') + ")"
                    : "";
            problems.add(where + "the host '" + host + "' " + problem + hint);
            return null;
        }
        String serviceSuffix = ".svc." + clusterDomain;
        if (host.endsWith(serviceSuffix)) {
            String[] parts =
                    host.substring(0, host.length() - serviceSuffix.length()).split("\\.");
            if (parts.length != 2) {
                problems.add(where + "a Kubernetes Service host is <name>.<namespace>" + serviceSuffix);
                return null;
            }
            if (port == 0) {
                problems.add(where + "a Kubernetes Service destination needs a port (" + host + ":<port>)");
                return null;
            }
            if (!subset.isEmpty()) {
                problems.add(where + "a Kubernetes Service destination cannot have a subset");
                return null;
            }
            return new KubernetesServiceDestination(parts[1], parts[0], host, port, "");
        }
        if (subset.isEmpty()) return new RegistryDestination(host, port, "", new TreeMap<>());
        if (!subset.contains("=")) {
            if (!Dns1123.isLabel(subset)) {
                problems.add(where + "the subset '" + subset + "' is not a DNS-1123 label");
                return null;
            }
            return new RegistryDestination(host, port, subset, new TreeMap<>());
        }
        TreeMap<String, String> labels = new TreeMap<>();
        for (String pair : subset.split(",")) {
            int eq = pair.indexOf('=');
            String k = eq < 0 ? pair : pair.substring(0, eq);
            String v = eq < 0 ? "" : pair.substring(eq + 1);
            if (eq <= 0 || !Labels.isValidKey(k) || !Labels.isValidValue(v)) {
                problems.add(where + "the subset label '" + pair + "' is not a valid key=value label");
                return null;
            }
            if (labels.put(k, v) != null) {
                problems.add(where + "the subset label '" + k + "' is given twice");
                return null;
            }
        }
        return new RegistryDestination(host, port, subsetName(labels), labels);
    }

    /**
     * The name of a label subset: keys and values joined by dashes ({@code version=v2} gives {@code version-v2})
     * when that is a DNS-1123 label, otherwise {@code subset-} and a hash of the labels.
     */
    static String subsetName(TreeMap<String, String> labels) {
        StringBuilder sb = new StringBuilder();
        labels.forEach((k, v) ->
                sb.append(sb.isEmpty() ? "" : "-").append(k).append('-').append(v));
        String joined = sb.toString().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (Dns1123.isLabel(joined)) return joined;
        Hash64 h = new Hash64();
        labels.forEach((k, v) -> h.putString(k).putString(v));
        return "subset-" + h.hex().substring(0, 12);
    }
}
