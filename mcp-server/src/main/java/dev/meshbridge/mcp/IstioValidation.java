package dev.meshbridge.mcp;

import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServicePort;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checks istiod's config store runs on a ServiceEntry or WorkloadEntry before accepting it (Istio's {@code
 * ValidateServiceEntry} and {@code ValidateWorkloadEntry}), for the fields the bridge sets. istiod drops a resource
 * that fails them with only a log line of its own, so the bridge runs them first and never sends such a resource.
 *
 * <p>What is checked:
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
