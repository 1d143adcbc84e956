package dev.meshbridge.mcp;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.naming.Labels;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The {@code mcp:} section of {@code bridge.yaml}: where the MCP server listens and how the Istio resources it serves
 * look. Every field is optional; see the module README for the reference and an example.
 *
 * @param enabled whether the bridge runs the MCP server at all
 * @param bindAddress address to listen on ({@code 0.0.0.0} for every IPv4 interface)
 * @param port port to listen on; 0 picks a free one ({@link McpServer#port()} tells which)
 * @param namespace namespace of every generated resource (metadata name {@code namespace/name})
 * @param revision value of the {@code istio.io/rev} label on every resource, empty for none
 * @param exportTo {@code exportTo} of every ServiceEntry; empty exports to all namespaces
 * @param endpointMode inline endpoints, or a workloadSelector plus one WorkloadEntry per instance
 * @param resourceName template of resource names; variables {@code {host}}, {@code {registry}}, {@code
 *     {registryType}}; must use {@code {host}} so names stay unique
 * @param initialSyncTimeout how long the server holds its first responses while the registries do their first sync
 *     (it answers at once after {@link McpServer#markCatalogReady()})
 */
public record McpOptions(
        boolean enabled,
        String bindAddress,
        int port,
        String namespace,
        String revision,
        List<String> exportTo,
        EndpointMode endpointMode,
        HostTemplate resourceName,
        Duration initialSyncTimeout) {

    public static final int DEFAULT_PORT = 15051;
    public static final String DEFAULT_NAMESPACE = "meshbridge";
    public static final String DEFAULT_RESOURCE_NAME = "{host}";
    public static final Duration DEFAULT_INITIAL_SYNC_TIMEOUT = Duration.ofSeconds(30);

    /** Variables of the {@code resourceName} template. */
    public static final Set<String> NAME_VARIABLES = Set.of("host", "registry", "registryType");

    /** How instances reach istiod. */
    public enum EndpointMode {
        /** One ServiceEntry per service, its instances as inline endpoints. */
        INLINE,
        /**
         * One ServiceEntry per service with a workloadSelector, and one WorkloadEntry per instance (carrying the
         * instance's labels), for users who select subsets or policies by instance labels.
         */
        WORKLOAD_ENTRY
    }

    public McpOptions {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(namespace, "namespace");
        revision = Objects.requireNonNullElse(revision, "");
        exportTo = List.copyOf(exportTo);
        Objects.requireNonNull(endpointMode, "endpointMode");
        Objects.requireNonNull(resourceName, "resourceName");
        Objects.requireNonNull(initialSyncTimeout, "initialSyncTimeout");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port " + port + " is out of 0..65535");
        String problem = namespaceProblem(namespace);
        if (problem != null) throw new IllegalArgumentException(problem);
        problem = revisionProblem(revision);
        if (problem != null) throw new IllegalArgumentException(problem);
        problem = exportToProblem(exportTo);
        if (problem != null) throw new IllegalArgumentException(problem);
        if (!resourceName.variables().contains("host")) {
            throw new IllegalArgumentException("resourceName must use {host}");
        }
        if (initialSyncTimeout.isNegative())
            throw new IllegalArgumentException("initialSyncTimeout must not be negative");
    }

    /** Everything at its default. */
    public static McpOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this value. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.enabled = enabled;
        b.bindAddress = bindAddress;
        b.port = port;
        b.namespace = namespace;
        b.revision = revision;
        b.exportTo = exportTo;
        b.endpointMode = endpointMode;
        b.resourceName = resourceName;
        b.initialSyncTimeout = initialSyncTimeout;
        return b;
    }

    /**
     * Parses the {@code mcp:} section. Problems are recorded on the node with their line and field (the caller's
     * {@code root.finish()} reports them); the result then holds defaults in place of the bad values.
     */
    public static McpOptions parse(ConfigNode section) {
        Builder b = builder();
        b.enabled(section.bool("enabled", true));
        String bind = section.string("bindAddress", "0.0.0.0");
        if (bind != null && !IpLiterals.isIp(bind) && !Dns1123.isSubdomain(bind)) {
            section.problem("bindAddress", "'" + bind + "' is neither an IP address nor a host name");
        } else if (bind != null) {
            b.bindAddress(bind);
        }
        b.port(section.integer("port", DEFAULT_PORT, 0, 65535));
        String namespace = section.string("namespace", DEFAULT_NAMESPACE);
        String problem = namespace == null ? null : namespaceProblem(namespace);
        if (problem != null) section.problem("namespace", problem);
        else if (namespace != null) b.namespace(namespace);
        String revision = section.string("revision", "");
        problem = revision == null ? null : revisionProblem(revision);
        if (problem != null) section.problem("revision", problem);
        else if (revision != null) b.revision(revision);
        List<String> exportTo = section.strings("exportTo");
        problem = exportToProblem(exportTo);
        if (problem != null) section.problem("exportTo", problem);
        else b.exportTo(exportTo);
        b.endpointMode(section.enumValue("endpointMode", EndpointMode.class, EndpointMode.INLINE));
        String template = section.string("resourceName", DEFAULT_RESOURCE_NAME);
        if (template != null) {
            try {
                HostTemplate t = HostTemplate.parse(template, NAME_VARIABLES);
                if (!t.variables().contains("host")) {
                    section.problem("resourceName", "must use {host}, so every service gets its own resources");
                } else {
                    b.resourceName(t);
                }
            } catch (IllegalArgumentException e) {
                section.problem("resourceName", e.getMessage());
            }
        }
        Duration timeout = section.duration("initialSyncTimeout", DEFAULT_INITIAL_SYNC_TIMEOUT);
        if (timeout.isNegative()) section.problem("initialSyncTimeout", "must not be negative");
        else b.initialSyncTimeout(timeout);
        return b.build();
    }

    private static String namespaceProblem(String namespace) {
        if (namespace == null || !Dns1123.isLabel(namespace)) {
            return "namespace '" + namespace
                    + "' must be a DNS-1123 label (lower-case letters, digits, '-', at most 63)";
        }
        return null;
    }

    private static String revisionProblem(String revision) {
        if (revision != null && !revision.isEmpty() && !Labels.isValidValue(revision)) {
            return "revision '" + revision + "' is not a valid label value for istio.io/rev";
        }
        return null;
    }

    /** The rules istiod applies to a ServiceEntry's exportTo. */
    static String exportToProblem(List<String> exportTo) {
        Set<String> seen = new HashSet<>();
        for (String e : exportTo) {
            if (!e.equals(".") && !e.equals("*") && !e.equals("~") && !Dns1123.isLabel(e)) {
                return "exportTo entry '" + e + "' must be '.', '*', '~' or a namespace name";
            }
            if (!seen.add(e)) return "exportTo entry '" + e + "' appears twice";
        }
        if (seen.contains("*") && seen.size() > 1)
            return "exportTo '*' (every namespace) cannot be combined with others";
        if (seen.contains("~") && seen.size() > 1) return "exportTo '~' (no namespace) cannot be combined with others";
        return null;
    }

    /** Builds options; starts from the defaults. */
    public static final class Builder {
        private boolean enabled = true;
        private String bindAddress = "0.0.0.0";
        private int port = DEFAULT_PORT;
        private String namespace = DEFAULT_NAMESPACE;
        private String revision = "";
        private List<String> exportTo = List.of();
        private EndpointMode endpointMode = EndpointMode.INLINE;
        private HostTemplate resourceName = HostTemplate.parse(DEFAULT_RESOURCE_NAME, NAME_VARIABLES);
        private Duration initialSyncTimeout = DEFAULT_INITIAL_SYNC_TIMEOUT;

        private Builder() {}

        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        public Builder bindAddress(String bindAddress) {
            this.bindAddress = bindAddress;
            return this;
        }

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder namespace(String namespace) {
            this.namespace = namespace;
            return this;
        }

        public Builder revision(String revision) {
            this.revision = revision;
            return this;
        }

        public Builder exportTo(List<String> exportTo) {
            this.exportTo = new ArrayList<>(exportTo);
            return this;
        }

        public Builder endpointMode(EndpointMode endpointMode) {
            this.endpointMode = endpointMode;
            return this;
        }

        public Builder resourceName(HostTemplate resourceName) {
            this.resourceName = resourceName;
            return this;
        }

        public Builder resourceName(String template) {
            return resourceName(HostTemplate.parse(template, NAME_VARIABLES));
        }

        public Builder initialSyncTimeout(Duration initialSyncTimeout) {
            this.initialSyncTimeout = initialSyncTimeout;
            return this;
        }

        public McpOptions build() {
            return new McpOptions(
                    enabled,
                    bindAddress,
                    port,
                    namespace,
                    revision,
                    exportTo,
                    endpointMode,
                    resourceName,
                    initialSyncTimeout);
        }
    }
}
