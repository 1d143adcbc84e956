package dev.meshbridge.mcp;

import dev.meshbridge.ads.TlsOptions;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.naming.Labels;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@code mcp:} section of {@code bridge.yaml}: where the MCP server listens and how the Istio resources it serves
 * look. Every field is optional; see the module README for the reference and an example.
 *
 * @param enabled whether the bridge runs the MCP server at all
 * @param bindAddress address to listen on ({@code 0.0.0.0} for every IPv4 interface)
 * @param port port to listen on; 0 picks a free one ({@link McpServer#port()} tells which)
 * @param namespace namespace of every ServiceEntry and WorkloadEntry (metadata name {@code namespace/name})
 * @param revision value of the {@code istio.io/rev} label on every resource, empty for none
 * @param exportTo {@code exportTo} of every ServiceEntry; empty exports to all namespaces
 * @param endpointMode inline endpoints, or a workloadSelector plus one WorkloadEntry per instance
 * @param resourceName template of resource names; variables {@code {host}}, {@code {registry}}, {@code
 *     {registryType}}; must use {@code {host}} so names stay unique
 * @param initialSyncTimeout how long the server holds its first responses while the registries do their first sync
 *     (it answers at once after {@link McpServer#markCatalogReady()})
 * @param ingress how the Ingress routes of the catalog become Gateways, VirtualServices and DestinationRules
 * @param minPushInterval the least time between two pushes of changes to one istiod stream; what changes in between
 *     is merged into the next push (istiod's MCP client speaks state of the world only, so each push carries every
 *     resource of a kind); 0 pushes every catalog change at once
 * @param keepaliveTime how often the server pings an idle istiod connection to find dead peers (0 turns it off;
 *     default 60s)
 * @param maxConnectionAge after this long an istiod connection is asked to reconnect, which spreads istiods over
 *     bridge replicas after a scale-up (0, the default, never)
 * @param limits what the server grants its clients ({@code mcp.limits:})
 * @param tls TLS and client authorization of the server ({@code mcp.tls}); plaintext by default
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
        Duration initialSyncTimeout,
        Ingress ingress,
        Duration minPushInterval,
        Duration keepaliveTime,
        Duration maxConnectionAge,
        dev.meshbridge.ads.AdsLimits limits,
        TlsOptions tls) {

    public static final int DEFAULT_PORT = 15051;
    public static final String DEFAULT_NAMESPACE = "meshbridge";
    public static final String DEFAULT_RESOURCE_NAME = "{host}";
    public static final Duration DEFAULT_INITIAL_SYNC_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_MIN_PUSH_INTERVAL = Duration.ofSeconds(2);
    public static final Duration DEFAULT_KEEPALIVE_TIME = Duration.ofSeconds(60);

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

    /**
     * The {@code ingress:} part of the {@code mcp:} section: how the Ingress routes become Istio resources.
     *
     * @param enabled serve Gateways, VirtualServices and DestinationRules for the routes (there are none without an
     *     Ingress source)
     * @param namespace namespace of those resources; the gateway proxies' own namespace lets them use a {@code
     *     kubernetes-gateway://} credential (istiod checks that the Gateway is in the proxy's namespace)
     * @param gatewaySelector labels of the gateway pods the Gateways apply to
     * @param credentialForm how a Gateway names the TLS Secret of an Ingress
     */
    public record Ingress(
            boolean enabled, String namespace, Map<String, String> gatewaySelector, CredentialForm credentialForm) {

        public static final String DEFAULT_NAMESPACE = "istio-system";
        public static final Map<String, String> DEFAULT_SELECTOR = Map.of("istio", "ingressgateway");

        public Ingress {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(credentialForm, "credentialForm");
            gatewaySelector = Collections.unmodifiableSortedMap(new TreeMap<>(gatewaySelector));
            String problem = namespaceProblem(namespace);
            if (problem != null) throw new IllegalArgumentException(problem);
            problem = selectorProblem(gatewaySelector);
            if (problem != null) throw new IllegalArgumentException(problem);
        }

        public static Ingress defaults() {
            return new Ingress(true, DEFAULT_NAMESPACE, DEFAULT_SELECTOR, CredentialForm.KUBERNETES_GATEWAY);
        }

        /** The {@code credentialName} of a Secret, in this form. */
        public String credentialName(String secretNamespace, String secretName) {
            return credentialForm.credentialName(secretNamespace, secretName);
        }

        static Ingress parse(ConfigNode section) {
            Ingress d = defaults();
            boolean enabled = section.bool("enabled", true);
            String namespace = section.string("namespace", DEFAULT_NAMESPACE);
            String problem = namespace == null ? null : namespaceProblem(namespace);
            if (problem != null) section.problem("namespace", problem);
            if (namespace == null || problem != null) namespace = d.namespace();
            Map<String, String> selector =
                    section.has("gatewaySelector") ? section.stringMap("gatewaySelector") : DEFAULT_SELECTOR;
            problem = selectorProblem(selector);
            if (problem != null) {
                section.problem("gatewaySelector", problem);
                selector = DEFAULT_SELECTOR;
            }
            CredentialForm form =
                    section.enumValue("credentialForm", CredentialForm.class, CredentialForm.KUBERNETES_GATEWAY);
            return new Ingress(enabled, namespace, selector, form);
        }

        private static String selectorProblem(Map<String, String> selector) {
            if (selector.isEmpty()) {
                return "gatewaySelector must name at least one label (an empty selector would apply the Gateways to"
                        + " every proxy)";
            }
            for (Map.Entry<String, String> l : selector.entrySet()) {
                if (!Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue())) {
                    return "gatewaySelector label '" + l.getKey() + ": " + l.getValue()
                            + "' is not a valid Kubernetes label";
                }
            }
            return null;
        }
    }

    /** How a Gateway server names the Kubernetes Secret of an Ingress TLS section in {@code credentialName}. */
    public enum CredentialForm {
        /**
         * {@code kubernetes-gateway://<namespace>/<name>}: read by istiod from the config cluster; allowed when the
         * Gateway, the gateway proxy and the Secret share a namespace, or when a ReferenceGrant in the Secret's
         * namespace allows it.
         */
        KUBERNETES_GATEWAY,
        /**
         * {@code <namespace>/<name>} (istiod reads it as {@code kubernetes://<namespace>/<name>}): allowed when the
         * Secret is in the gateway proxy's namespace, wherever the Gateway is.
         */
        NAMESPACE_NAME,
        /** {@code <name>}: a Secret of that name in the gateway proxy's namespace (a copy of the Ingress's). */
        NAME;

        public String credentialName(String secretNamespace, String secretName) {
            return switch (this) {
                case KUBERNETES_GATEWAY -> "kubernetes-gateway://" + secretNamespace + "/" + secretName;
                case NAMESPACE_NAME -> secretNamespace + "/" + secretName;
                case NAME -> secretName;
            };
        }
    }

    public McpOptions {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(namespace, "namespace");
        revision = Objects.requireNonNullElse(revision, "");
        exportTo = List.copyOf(exportTo);
        Objects.requireNonNull(endpointMode, "endpointMode");
        Objects.requireNonNull(resourceName, "resourceName");
        Objects.requireNonNull(initialSyncTimeout, "initialSyncTimeout");
        Objects.requireNonNull(keepaliveTime, "keepaliveTime");
        Objects.requireNonNull(maxConnectionAge, "maxConnectionAge");
        if (keepaliveTime.isNegative() || maxConnectionAge.isNegative())
            throw new IllegalArgumentException("keepaliveTime and maxConnectionAge must not be negative");
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
        Objects.requireNonNull(ingress, "ingress");
        Objects.requireNonNull(minPushInterval, "minPushInterval");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(tls, "tls");
        if (minPushInterval.isNegative()) throw new IllegalArgumentException("minPushInterval must not be negative");
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
        b.ingress = ingress;
        b.minPushInterval = minPushInterval;
        b.keepaliveTime = keepaliveTime;
        b.maxConnectionAge = maxConnectionAge;
        b.limits = limits;
        b.tls = tls;
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
        b.ingress(Ingress.parse(section.section("ingress")));
        Duration pace = section.duration("minPushInterval", DEFAULT_MIN_PUSH_INTERVAL);
        if (pace.isNegative()) section.problem("minPushInterval", "must not be negative");
        else b.minPushInterval(pace);
        Duration keepalive = section.duration("keepaliveTime", DEFAULT_KEEPALIVE_TIME);
        if (keepalive.isNegative()) section.problem("keepaliveTime", "must not be negative");
        else b.keepaliveTime(keepalive);
        Duration maxAge = section.duration("maxConnectionAge", Duration.ZERO);
        if (maxAge.isNegative()) section.problem("maxConnectionAge", "must not be negative");
        else if (!maxAge.isZero() && maxAge.compareTo(Duration.ofSeconds(1)) < 0)
            section.problem("maxConnectionAge", "must be at least 1s (or 0 for never)");
        else b.maxConnectionAge(maxAge);
        b.limits(dev.meshbridge.ads.AdsLimits.parse(section.section("limits")));
        b.tls(TlsOptions.parse(section.section("tls")));
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
        private Ingress ingress = Ingress.defaults();
        private Duration minPushInterval = DEFAULT_MIN_PUSH_INTERVAL;
        private Duration keepaliveTime = DEFAULT_KEEPALIVE_TIME;
        private Duration maxConnectionAge = Duration.ZERO;
        private dev.meshbridge.ads.AdsLimits limits = dev.meshbridge.ads.AdsLimits.DEFAULTS;
        private TlsOptions tls = TlsOptions.DISABLED;

        public Builder tls(TlsOptions tls) {
            this.tls = tls;
            return this;
        }

        public Builder limits(dev.meshbridge.ads.AdsLimits limits) {
            this.limits = limits;
            return this;
        }

        private Builder() {}

        public Builder keepaliveTime(Duration keepaliveTime) {
            this.keepaliveTime = keepaliveTime;
            return this;
        }

        public Builder maxConnectionAge(Duration maxConnectionAge) {
            this.maxConnectionAge = maxConnectionAge;
            return this;
        }

        public Builder minPushInterval(Duration minPushInterval) {
            this.minPushInterval = minPushInterval;
            return this;
        }

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

        public Builder ingress(Ingress ingress) {
            this.ingress = ingress;
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
                    initialSyncTimeout,
                    ingress,
                    minPushInterval,
                    keepaliveTime,
                    maxConnectionAge,
                    limits,
                    tls);
        }
    }
}
