package dev.meshbridge.mcp;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.util.Hash64;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServicePort;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadSelector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns one catalog service into the Istio resources istiod gets over MCP. Pure and deterministic: the same service
 * and options give the same resources, bytes and versions in every bridge replica, and a service's resources depend
 * on that service only, so a change to one instance re-versions one resource.
 *
 * <p>What a service becomes:
 *
 * <ol>
 *   <li>a ServiceEntry named by the {@code resourceName} template in the configured namespace, with the service's
 *       host, location MESH_INTERNAL, resolution STATIC and the configured exportTo;
 *   <li>ports: one per catalog service port, in the catalog's order: the virtual port number the registry
 *       configuration gave, the port name, and the Istio protocol ({@link IstioProtocols}); each instance maps the
 *       port name to its own real port, so instances on different ports work;
 *   <li>instances: only those that may get traffic (enabled, weight above 0) and are healthy, each with its IP
 *       address, ports by name, labels, locality ({@code region/zone/subzone}) and weight. An instance whose address
 *       is not an IP (STATIC needs one) is left out and noted; so is a port name the service does not declare;
 *   <li>in {@link EndpointMode#WORKLOAD_ENTRY} mode the ServiceEntry has a workloadSelector on {@value
 *       #LABEL_SERVICE} instead of endpoints, and each instance is a WorkloadEntry named {@code
 *       <serviceEntryName>.<address>-<ports>} carrying that label plus its own labels;
 *   <li>metadata labels on every resource: {@value #LABEL_MANAGED_BY}, the registry type and name the service comes
 *       from, {@code istio.io/rev} when configured, and the catalog's service labels;
 *   <li>the result is checked as istiod would ({@link IstioValidation}); a service that would fail is refused with
 *       its reasons and no resource.
 * </ol>
 */
public final class ServiceEntryTranslator {

    public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String MANAGED_BY = "meshbridge";
    public static final String LABEL_REGISTRY = "meshbridge.dev/registry";
    public static final String LABEL_REGISTRY_TYPE = "meshbridge.dev/registry-type";
    /** The label that ties WorkloadEntries to their ServiceEntry in WorkloadEntry mode. */
    public static final String LABEL_SERVICE = "meshbridge.dev/service";

    public static final String LABEL_REVISION = "istio.io/rev";

    private final McpOptions options;

    public ServiceEntryTranslator(McpOptions options) {
        this.options = Objects.requireNonNull(options);
    }

    public McpOptions options() {
        return options;
    }

    public ServiceTranslation translate(MeshService service) {
        ServiceKey origin = service.origin();
        List<String> notes = new ArrayList<>();
        String name;
        try {
            name = options.resourceName()
                    .render(Map.of(
                            "host", service.host(),
                            "registry", origin.registry(),
                            "registryType", origin.registryType()));
        } catch (IllegalArgumentException e) {
            return refused(service, List.of("no valid resource name: " + e.getMessage()), notes);
        }

        TreeMap<String, String> metadataLabels = new TreeMap<>(service.labels());
        metadataLabels.put(LABEL_MANAGED_BY, MANAGED_BY);
        metadataLabels.put(LABEL_REGISTRY, origin.registry());
        metadataLabels.put(LABEL_REGISTRY_TYPE, origin.registryType());
        if (!options.revision().isEmpty()) metadataLabels.put(LABEL_REVISION, options.revision());
        metadataLabels.entrySet().removeIf(l -> {
            boolean invalid = !Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue());
            if (invalid)
                notes.add("service label " + l.getKey() + "=" + l.getValue() + " is not a valid label; left out");
            return invalid;
        });

        ServiceEntry.Builder se = ServiceEntry.newBuilder()
                .addHosts(service.host())
                .setLocation(ServiceEntry.Location.MESH_INTERNAL)
                .setResolution(ServiceEntry.Resolution.STATIC)
                .addAllExportTo(options.exportTo());
        Set<String> portNames = new LinkedHashSet<>();
        for (dev.meshbridge.core.model.ServicePort p : service.ports()) {
            se.addPorts(ServicePort.newBuilder()
                    .setNumber(p.number())
                    .setProtocol(IstioProtocols.of(p.protocol()))
                    .setName(p.name()));
            portNames.add(p.name());
        }

        String selector = options.endpointMode() == EndpointMode.WORKLOAD_ENTRY ? selectorValue(name) : null;
        List<WorkloadEntry> workloads = new ArrayList<>();
        List<Endpoint> kept = new ArrayList<>();
        for (Endpoint e : service.endpoints()) {
            if (!e.routable() || !e.health().healthy()) continue;
            WorkloadEntry we = workload(e, portNames, selector, notes);
            if (we != null) {
                workloads.add(we);
                kept.add(e);
            }
        }

        List<McpResource> resources = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        if (options.endpointMode() == EndpointMode.INLINE) {
            se.addAllEndpoints(workloads);
            ServiceEntry built = se.build();
            problems.addAll(IstioValidation.serviceEntry(built));
            resources.add(McpResource.of(
                    McpKind.SERVICE_ENTRY, options.namespace(), name, metadataLabels, built, service.host()));
        } else {
            se.setWorkloadSelector(WorkloadSelector.newBuilder().putLabels(LABEL_SERVICE, selector));
            ServiceEntry built = se.build();
            problems.addAll(IstioValidation.serviceEntry(built));
            resources.add(McpResource.of(
                    McpKind.SERVICE_ENTRY, options.namespace(), name, metadataLabels, built, service.host()));
            Set<String> names = new HashSet<>();
            for (int i = 0; i < workloads.size(); i++) {
                Endpoint e = kept.get(i);
                WorkloadEntry we = workloads.get(i);
                String weName = workloadName(name, e);
                if (!names.add(weName)) {
                    notes.add("endpoint " + describe(e) + " has the same WorkloadEntry name as another; left out");
                    continue;
                }
                for (String p : IstioValidation.workloadEntry(we, portNames)) {
                    problems.add("WorkloadEntry " + weName + ": " + p);
                }
                resources.add(McpResource.of(
                        McpKind.WORKLOAD_ENTRY, options.namespace(), weName, metadataLabels, we, service.host()));
            }
        }
        if (!problems.isEmpty()) return refused(service, problems, notes);
        return new ServiceTranslation(
                service.host(), service.version(), origin.registry(), resources, List.of(), notes);
    }

    private static ServiceTranslation refused(MeshService service, List<String> problems, List<String> notes) {
        return new ServiceTranslation(
                service.host(), service.version(), service.origin().registry(), List.of(), problems, notes);
    }

    /**
     * The endpoint as an Istio workload, or null (with a note) when a STATIC ServiceEntry cannot carry it.
     *
     * @param selector the value of {@value #LABEL_SERVICE} in WorkloadEntry mode, else null
     */
    private static WorkloadEntry workload(Endpoint e, Set<String> portNames, String selector, List<String> notes) {
        if (!IpLiterals.isIp(e.address())) {
            notes.add("endpoint " + describe(e) + " left out: '" + e.address()
                    + "' is not an IP address, and a STATIC ServiceEntry needs one");
            return null;
        }
        WorkloadEntry.Builder we = WorkloadEntry.newBuilder().setAddress(e.address());
        for (Map.Entry<String, Integer> port : e.ports().entrySet()) {
            if (portNames.contains(port.getKey())) {
                we.putPorts(port.getKey(), port.getValue());
            } else {
                notes.add("endpoint " + describe(e) + ": port '" + port.getKey() + "' is not a port of the service "
                        + portNames + "; left out");
            }
        }
        if (we.getPortsCount() == 0) {
            notes.add("endpoint " + describe(e) + " left out: none of its ports is a port of the service");
            return null;
        }
        for (Map.Entry<String, String> l : e.labels().entrySet()) {
            if (Labels.isValidKey(l.getKey()) && Labels.isValidValue(l.getValue())) {
                we.putLabels(l.getKey(), l.getValue());
            }
        }
        if (selector != null) we.putLabels(LABEL_SERVICE, selector);
        String locality = locality(e.locality());
        if (locality == null) {
            notes.add("endpoint " + describe(e) + ": locality " + e.locality()
                    + " cannot be written as region/zone/subzone; left out");
        } else if (!locality.isEmpty()) {
            we.setLocality(locality);
        }
        we.setWeight(e.weight());
        return we.build();
    }

    /** {@code region[/zone[/subzone]]}, "" for none, null when a part is missing in the middle or holds a slash. */
    static String locality(Locality l) {
        if (l.isEmpty()) return "";
        String[] parts = {l.region(), l.zone(), l.subZone()};
        int last = parts.length - 1;
        while (parts[last].isEmpty()) last--;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i <= last; i++) {
            if (parts[i].isEmpty() || parts[i].contains("/")) return null;
            if (i > 0) sb.append('/');
            sb.append(parts[i]);
        }
        return sb.toString();
    }

    /** The selector label value for a ServiceEntry name: the name when it is a valid label value, else a hashed cut. */
    static String selectorValue(String name) {
        if (Labels.isValidValue(name)) return name;
        String cut = name.substring(0, 46);
        while (!cut.isEmpty() && !Character.isLetterOrDigit(cut.charAt(cut.length() - 1))) {
            cut = cut.substring(0, cut.length() - 1);
        }
        return cut + "-" + Hash64.toHex(Hash64.of(name));
    }

    /**
     * The WorkloadEntry name of an instance: {@code <serviceEntryName>.<a-b-c-d>-<port>[-<port>...]} for IPv4, a hash
     * in place of the address for IPv6, and a hash of everything when the result would be too long.
     */
    static String workloadName(String serviceEntryName, Endpoint e) {
        StringBuilder ports = new StringBuilder();
        for (int p : e.ports().values()) ports.append('-').append(p);
        String address = e.address().indexOf(':') >= 0
                ? "ip6-" + Hash64.toHex(Hash64.of(e.address())).substring(0, 12)
                : e.address().replace('.', '-');
        String label = address + ports;
        String key = e.address() + e.ports();
        if (label.length() > Dns1123.MAX_LABEL) label = "ep-" + Hash64.toHex(Hash64.of(key));
        String name = serviceEntryName + "." + label;
        if (name.length() > Dns1123.MAX_SUBDOMAIN) {
            String hashed = "ep-" + Hash64.toHex(Hash64.of(serviceEntryName + "\n" + key));
            String prefix = serviceEntryName.substring(0, Dns1123.MAX_SUBDOMAIN - hashed.length() - 1);
            while (!prefix.isEmpty() && !Character.isLetterOrDigit(prefix.charAt(prefix.length() - 1))) {
                prefix = prefix.substring(0, prefix.length() - 1);
            }
            name = prefix + "." + hashed;
        }
        return name;
    }

    private static String describe(Endpoint e) {
        return e.address() + e.ports();
    }
}
