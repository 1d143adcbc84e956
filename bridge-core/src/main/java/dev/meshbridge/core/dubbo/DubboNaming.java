package dev.meshbridge.core.dubbo;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.naming.Labels;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What every registry that carries Dubbo services (ZooKeeper, Nacos) shares: host naming, and how a provider's
 * parameters become an endpoint. One place, so a Dubbo interface gets the same host whichever registry it is in.
 *
 * <p>Host naming defaults:
 *
 * <ul>
 *   <li>interface-level: {@value #DEFAULT_INTERFACE_TEMPLATE}, e.g. {@code org.demo.greeter.v-1-0-0.g-blue.dubbo}:
 *       a different version or group gives a different host (a dot in a version becomes a dash);
 *   <li>application-level: {@value #DEFAULT_APPLICATION_TEMPLATE};
 *   <li>{@code {env}} keeps environments of one registry apart, the way Higress's hosts carry the namespace: it is
 *       empty for the registry's home environment (so a registry with one namespace, one group and one root keeps the
 *       hosts it always had) and names every other one, e.g. {@code org.demo.greeter.ns-dev.dubbo} for the Nacos
 *       namespace {@code dev}, {@code org.demo.greeter.root-gray.dubbo} for the ZooKeeper root {@code /gray} (see
 *       {@link Environment}).
 * </ul>
 *
 * <p>Parameter semantics: {@code weight} (default 100) is the endpoint weight; {@link #enabled} says whether it is
 * enabled, as Dubbo's consumer decides it; the parameters in {@link #NOT_LABELS} (bulky or per-process noise) and the
 * {@code default.*} copies are not labels, every other parameter is (sanitized).
 */
public final class DubboNaming {

    public static final String DEFAULT_INTERFACE_TEMPLATE = "{interface}[.v-{version}][.g-{group}][.{env}].dubbo";
    public static final String DEFAULT_APPLICATION_TEMPLATE = "{application}[.{env}].dubbo";

    /** Variables of the interface-level template: the service's own, then its {@link Environment}'s. */
    public static final Set<String> INTERFACE_VARIABLES = Set.of(
            "interface", "version", "group", "application", "registry", "namespace", "nacosGroup", "root", "env");

    /** Variables of the application-level template. */
    public static final Set<String> APPLICATION_VARIABLES =
            Set.of("application", "registry", "namespace", "nacosGroup", "root", "env");

    /**
     * Where in its registry a Dubbo service lives: the template variables {@code {namespace}}, {@code {nacosGroup}},
     * {@code {root}} and {@code {env}}.
     *
     * @param namespace the Nacos namespace (as hosts write it); empty on ZooKeeper
     * @param nacosGroup the Nacos group; empty on ZooKeeper
     * @param root the ZooKeeper root without its leading {@code /} ({@code /gray} is {@code gray}); empty on Nacos
     * @param env the parts that are not the registry's home environment, dot-joined: {@code ns-<namespace>}, {@code
     *     group-<nacos group>}, {@code root-<root>}; empty in the home environment
     */
    public record Environment(String namespace, String nacosGroup, String root, String env) {
        /** The home environment of a registry that has no namespaces, groups or roots to tell apart. */
        public static final Environment HOME = new Environment("", "", "", "");

        public Environment {
            namespace = namespace == null ? "" : namespace;
            nacosGroup = nacosGroup == null ? "" : nacosGroup;
            root = root == null ? "" : root;
            env = env == null ? "" : env;
        }

        /** A Nacos service's environment; {@code env} names the namespace and group that are not the home ones. */
        public static Environment nacos(String namespace, boolean homeNamespace, String group, boolean homeGroup) {
            StringBuilder env = new StringBuilder();
            if (!homeNamespace) env.append("ns-").append(namespace);
            if (!homeGroup)
                env.append(env.isEmpty() ? "" : ".").append("group-").append(group);
            return new Environment(namespace, group, "", env.toString());
        }

        /** A ZooKeeper service's environment; {@code env} names the root when it is not the home one. */
        public static Environment zookeeper(String rootPath, boolean homeRoot) {
            String root = rootPath.startsWith("/") ? rootPath.substring(1) : rootPath;
            root = root.replace('/', '-');
            return new Environment("", "", root, homeRoot || root.isEmpty() ? "" : "root-" + root);
        }

        /** Adds the four variables to a template's values. */
        public void putInto(Map<String, String> values) {
            values.put("namespace", namespace);
            values.put("nacosGroup", nacosGroup);
            values.put("root", root);
            values.put("env", env);
        }
    }

    /** Provider parameters that are not turned into labels. */
    public static final Set<String> NOT_LABELS = Set.of(
            "methods",
            "pid",
            "timestamp",
            "anyhost",
            "dynamic",
            "generic",
            "deprecated",
            "side",
            "category",
            "interface",
            "bean.name",
            "background",
            "service-name-mapping",
            "register-mode",
            "metadata-type",
            "executor-management-mode",
            "file-cache",
            "prefer.serialization",
            "check",
            "enabled",
            "disabled",
            "weight",
            "token",
            "accesslog",
            "password",
            "username");

    private DubboNaming() {}

    public static HostTemplate interfaceTemplate(String template) {
        return HostTemplate.parse(template == null ? DEFAULT_INTERFACE_TEMPLATE : template, INTERFACE_VARIABLES);
    }

    public static HostTemplate applicationTemplate(String template) {
        return HostTemplate.parse(template == null ? DEFAULT_APPLICATION_TEMPLATE : template, APPLICATION_VARIABLES);
    }

    /** The host of an interface-level service in its registry's home environment. */
    public static String interfaceHost(
            HostTemplate template, String registry, String iface, String version, String group, String application) {
        return interfaceHost(template, registry, iface, version, group, application, Environment.HOME);
    }

    /** The host of an interface-level service. */
    public static String interfaceHost(
            HostTemplate template,
            String registry,
            String iface,
            String version,
            String group,
            String application,
            Environment environment) {
        Map<String, String> values = new HashMap<>();
        values.put("interface", iface);
        values.put("version", version.replace('.', '-'));
        values.put("group", group);
        values.put("application", application);
        values.put("registry", registry);
        environment.putInto(values);
        return template.render(values);
    }

    /** The host of an application-level service in its registry's home environment. */
    public static String applicationHost(HostTemplate template, String registry, String application) {
        return applicationHost(template, registry, application, Environment.HOME);
    }

    /** The host of an application-level service. */
    public static String applicationHost(
            HostTemplate template, String registry, String application, Environment environment) {
        Map<String, String> values = new HashMap<>();
        values.put("application", application);
        values.put("registry", registry);
        environment.putInto(values);
        return template.render(values);
    }

    /** The port name for a Dubbo protocol: {@code dubbo}, {@code tri}, {@code rest}... lower-cased. */
    public static String portName(String protocol) {
        Protocol p = Protocol.parse(protocol).orElse(null);
        return p != null ? p.portName() : protocol.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
    }

    /** The mesh protocol of a Dubbo protocol name (unknown ones are TCP). */
    public static Protocol protocol(String protocol) {
        return Protocol.parse(protocol).orElse(Protocol.TCP);
    }

    /**
     * Why Dubbo's weight parameter was clamped by {@link #weight}, for the watcher to report; null when it is in
     * range (or not a number, which {@link #weight} refuses).
     */
    public static String weightOutOfRange(Map<String, String> params) {
        String w = params.get("weight");
        if (w == null || w.isBlank()) return null;
        double v;
        try {
            v = Double.parseDouble(w.trim());
        } catch (NumberFormatException e) {
            return null;
        }
        if (v >= 0 && Math.round(v) <= Endpoint.MAX_WEIGHT) return null;
        return "weight " + dev.meshbridge.core.util.LogText.safe(w.trim()) + " is out of 0.." + Endpoint.MAX_WEIGHT
                + "; served as " + weight(params);
    }

    /** Dubbo's weight parameter (default 100), clamped to 0..{@link Endpoint#MAX_WEIGHT}. */
    public static int weight(Map<String, String> params) {
        String w = params.get("weight");
        if (w == null || w.isBlank()) return Endpoint.DEFAULT_WEIGHT;
        try {
            long v = Math.round(Double.parseDouble(w.trim()));
            return (int) Math.max(0, Math.min(Endpoint.MAX_WEIGHT, v));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("weight '" + w + "' is not a number");
        }
    }

    /**
     * Whether a Dubbo consumer calls the provider, in Dubbo's two steps: its registry hands a consumer only providers
     * whose {@code enabled} is not false ({@code UrlUtils.isMatch}, in every Dubbo registry since 2.x, before any
     * override is applied), then {@code RegistryDirectory.toInvokers} drops a provider whose {@code disabled} (after
     * the overrides) is true. So {@code enabled=false} is never called, even with {@code disabled=false}; an override
     * can disable a provider but never set its {@code enabled}. Values compare as Java's {@code
     * Boolean.parseBoolean}: {@code true} in any case, anything else is false; an empty value counts as absent.
     */
    public static boolean enabled(Map<String, String> params) {
        String enabled = params.get("enabled");
        if (enabled != null && !enabled.isEmpty() && !Boolean.parseBoolean(enabled)) return false;
        String disabled = params.get("disabled");
        return disabled == null || disabled.isEmpty() || !Boolean.parseBoolean(disabled);
    }

    /** The labels of a provider: its parameters minus {@link #NOT_LABELS}, sanitized. */
    public static Labels.Result labels(Map<String, String> params) {
        Map<String, String> raw = new LinkedHashMap<>();
        params.forEach((k, v) -> {
            if (!NOT_LABELS.contains(k)
                    && !k.startsWith("qos.")
                    && !k.startsWith("qos-")
                    && !k.startsWith(DubboUrl.DEFAULT_PREFIX)) raw.put(k, v);
        });
        return Labels.sanitize(raw);
    }

    /**
     * An endpoint builder for a provider: address, one port, weight, enabled and labels from its parameters (the
     * caller reports {@code labels.dropped()}).
     */
    public static Endpoint.Builder endpoint(
            String address, String portName, int port, Map<String, String> params, Labels.Result labels) {
        return Endpoint.builder(address)
                .port(portName, port)
                .weight(weight(params))
                .enabled(enabled(params))
                .health(Health.HEALTHY)
                .labels(labels.labels());
    }
}
