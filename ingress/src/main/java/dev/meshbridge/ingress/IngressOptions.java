package dev.meshbridge.ingress;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.naming.Dns1123;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The validated {@code ingress:} section of {@code bridge.yaml}: where Ingress resources come from (a cluster, a
 * directory, or both), which IngressClass is ours, and whether Higress McpBridge resources configure registries.
 *
 * @param ingressClass the IngressClass name whose Ingresses the bridge serves (default {@code meshbridge})
 * @param controllerName an IngressClass whose {@code spec.controller} is this value is ours too, whatever its name
 *     (default {@code meshbridge.dev/ingress-controller})
 * @param clusterDomain the cluster DNS domain of Kubernetes Service hosts (default {@code cluster.local})
 * @param syncTimeout how long the first route table waits for every source's first full read (default 30s)
 * @param kubernetes the cluster source
 * @param mcpBridge the Higress McpBridge watch
 * @param directory the directory source
 */
public record IngressOptions(
        String ingressClass,
        String controllerName,
        String clusterDomain,
        Duration syncTimeout,
        Kubernetes kubernetes,
        McpBridge mcpBridge,
        Directory directory) {

    public static final String DEFAULT_CLASS = "meshbridge";
    public static final String DEFAULT_CONTROLLER = "meshbridge.dev/ingress-controller";
    public static final String DEFAULT_CLUSTER_DOMAIN = "cluster.local";
    public static final Duration DEFAULT_SYNC_TIMEOUT = Duration.ofSeconds(30);

    /** Everything off. */
    public static final IngressOptions DISABLED = new IngressOptions(
            DEFAULT_CLASS,
            DEFAULT_CONTROLLER,
            DEFAULT_CLUSTER_DOMAIN,
            DEFAULT_SYNC_TIMEOUT,
            Kubernetes.DISABLED,
            McpBridge.DISABLED,
            Directory.DISABLED);

    public IngressOptions {
        Objects.requireNonNull(ingressClass, "ingressClass");
        Objects.requireNonNull(controllerName, "controllerName");
        Objects.requireNonNull(clusterDomain, "clusterDomain");
        Objects.requireNonNull(syncTimeout, "syncTimeout");
        Objects.requireNonNull(kubernetes, "kubernetes");
        Objects.requireNonNull(mcpBridge, "mcpBridge");
        Objects.requireNonNull(directory, "directory");
    }

    /**
     * The cluster source.
     *
     * @param enabled connect to a Kubernetes API server (default false)
     * @param kubeconfig a kubeconfig file; empty: {@code KUBECONFIG}, {@code ~/.kube/config}, then the in-cluster
     *     service account, as kubectl does
     * @param context the kubeconfig context; empty: the current one
     * @param namespaces the namespaces to read Ingresses from; empty: all
     * @param watchIngresses read Ingresses (default true; false to use the cluster for McpBridge only)
     * @param events report problems as Kubernetes Events on the Ingress (default true)
     */
    public record Kubernetes(
            boolean enabled,
            Optional<Path> kubeconfig,
            String context,
            List<String> namespaces,
            boolean watchIngresses,
            boolean events) {

        public static final Kubernetes DISABLED = new Kubernetes(false, Optional.empty(), "", List.of(), true, true);

        public Kubernetes {
            Objects.requireNonNull(kubeconfig, "kubeconfig");
            Objects.requireNonNull(context, "context");
            namespaces = List.copyOf(namespaces);
        }

        /** True when every namespace is read. */
        public boolean allNamespaces() {
            return namespaces.isEmpty();
        }
    }

    /**
     * The Higress McpBridge watch: one resource, as Higress reads it.
     *
     * @param enabled watch it (default false; needs {@code kubernetes.enabled})
     * @param namespace its namespace (default {@code higress-system})
     * @param name its name (default {@code default})
     */
    public record McpBridge(boolean enabled, String namespace, String name) {
        public static final McpBridge DISABLED = new McpBridge(false, "higress-system", "default");

        public McpBridge {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * The directory source.
     *
     * @param path the directory of Ingress YAML files; empty: off
     * @param reloadInterval how often files are compared by content (default 2s)
     */
    public record Directory(Optional<Path> path, Duration reloadInterval) {
        public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(2);
        public static final Directory DISABLED = new Directory(Optional.empty(), DEFAULT_INTERVAL);

        public Directory {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(reloadInterval, "reloadInterval");
        }

        public boolean enabled() {
            return path.isPresent();
        }
    }

    /** True when some source of Ingresses is on. */
    public boolean readsIngresses() {
        return (kubernetes.enabled() && kubernetes.watchIngresses()) || directory.enabled();
    }

    /**
     * Parses the {@code ingress:} section; problems are recorded on the node with their line (the caller runs the
     * root's {@code finish()}). An absent section (an empty mapping) gives {@link #DISABLED}.
     */
    public static IngressOptions parse(ConfigNode section) {
        String ingressClass = section.string("ingressClass", DEFAULT_CLASS);
        if (ingressClass != null && !Dns1123.isSubdomain(ingressClass))
            section.problem("ingressClass", "'" + ingressClass + "' is not a valid IngressClass name (DNS-1123)");
        String controller = section.string("controllerName", DEFAULT_CONTROLLER);
        if (controller != null && !controller.matches("[a-z0-9.-]+/[A-Za-z0-9._/-]+"))
            section.problem(
                    "controllerName",
                    "'" + controller + "' must be a domain-prefixed path such as " + DEFAULT_CONTROLLER);
        String clusterDomain = section.string("clusterDomain", DEFAULT_CLUSTER_DOMAIN);
        if (clusterDomain != null && !Dns1123.isSubdomain(clusterDomain))
            section.problem("clusterDomain", "'" + clusterDomain + "' is not a DNS domain");
        Duration syncTimeout = section.duration("syncTimeout", DEFAULT_SYNC_TIMEOUT);
        if (syncTimeout.compareTo(Duration.ofMinutes(10)) > 0) section.problem("syncTimeout", "at most 10m");

        Kubernetes kubernetes = parseKubernetes(section.section("kubernetes"));
        McpBridge mcp = parseMcpBridge(section.section("mcpBridge"));
        if (mcp.enabled() && !kubernetes.enabled())
            section.problem("mcpBridge", "mcpBridge.enabled needs kubernetes.enabled: true");
        Directory directory = parseDirectory(section.section("directory"));
        return new IngressOptions(
                Objects.requireNonNullElse(ingressClass, DEFAULT_CLASS),
                Objects.requireNonNullElse(controller, DEFAULT_CONTROLLER),
                Objects.requireNonNullElse(clusterDomain, DEFAULT_CLUSTER_DOMAIN),
                syncTimeout,
                kubernetes,
                mcp,
                directory);
    }

    private static Kubernetes parseKubernetes(ConfigNode k) {
        boolean enabled = k.bool("enabled", false);
        Optional<Path> kubeconfig = Optional.empty();
        String file = k.string("kubeconfig", null);
        if (file != null) {
            Path p = Path.of(file.startsWith("~/") ? System.getProperty("user.home") + file.substring(1) : file);
            if (!Files.isReadable(p)) k.problem("kubeconfig", "file " + p + " does not exist or is not readable");
            kubeconfig = Optional.of(p);
        }
        String context = k.string("context", "");
        List<String> namespaces = k.strings("namespaces");
        Set<String> seen = new HashSet<>();
        for (String ns : namespaces) {
            if (!Dns1123.isLabel(ns)) k.problem("namespaces", "'" + ns + "' is not a namespace name (DNS-1123 label)");
            if (!seen.add(ns)) k.problem("namespaces", "namespace '" + ns + "' is listed twice");
        }
        boolean watchIngresses = k.bool("watchIngresses", true);
        boolean events = k.bool("events", true);
        if (!enabled) {
            for (String key : List.of("kubeconfig", "context", "namespaces")) {
                if (k.has(key)) k.problem(key, "has no effect unless kubernetes.enabled is true");
            }
        }
        return new Kubernetes(
                enabled, kubeconfig, Objects.requireNonNullElse(context, ""), namespaces, watchIngresses, events);
    }

    private static McpBridge parseMcpBridge(ConfigNode m) {
        boolean enabled = m.bool("enabled", false);
        String namespace = m.string("namespace", McpBridge.DISABLED.namespace());
        if (namespace != null && !Dns1123.isLabel(namespace))
            m.problem("namespace", "'" + namespace + "' is not a namespace name (DNS-1123 label)");
        String name = m.string("name", McpBridge.DISABLED.name());
        if (name != null && !Dns1123.isSubdomain(name))
            m.problem("name", "'" + name + "' is not a resource name (DNS-1123 subdomain)");
        return new McpBridge(
                enabled,
                Objects.requireNonNullElse(namespace, McpBridge.DISABLED.namespace()),
                Objects.requireNonNullElse(name, McpBridge.DISABLED.name()));
    }

    private static Directory parseDirectory(ConfigNode d) {
        Optional<Path> path = Optional.empty();
        String dir = d.string("path", null);
        if (dir != null) {
            Path p = Path.of(dir);
            if (!Files.isDirectory(p)) d.problem("path", "directory " + p + " does not exist");
            path = Optional.of(p);
        }
        Duration interval = d.duration("reloadInterval", Directory.DEFAULT_INTERVAL);
        if (interval.compareTo(Duration.ofMillis(100)) < 0 || interval.compareTo(Duration.ofHours(1)) > 0)
            d.problem("reloadInterval", "must be between 100ms and 1h");
        if (path.isEmpty() && d.has("reloadInterval"))
            d.problem("reloadInterval", "has no effect without directory.path");
        return new Directory(path, interval);
    }
}
