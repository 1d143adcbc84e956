package dev.meshbridge.core.dubbo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Dubbo's dynamic overrides (configurators), applied to a provider the way Dubbo's own consumer applies them, so a
 * provider that dubbo-admin takes out of traffic, or whose weight it changes, gets the same treatment in the mesh.
 *
 * <p>Where they come from, in the order a Dubbo consumer applies them (later ones win):
 *
 * <ol>
 *   <li>Dubbo 2.6 {@code override://} URLs under {@code /dubbo/<interface>/configurators} ({@link #fromUrl});
 *   <li>the consumer application's rules, {@code <application>.configurators} in the config center (only when the
 *       bridge is told which consumer application it stands for);
 *   <li>the service's rules, {@code <interface>:<version>:<group>.configurators} in the config center (ZooKeeper
 *       {@code /dubbo/config/dubbo/...}, Nacos data id in group {@code dubbo}), YAML as dubbo-admin writes it, or a
 *       JSON list of override URLs ({@link #parse}).
 * </ol>
 *
 * <p>Each rule is matched as Dubbo's {@code AbstractConfigurator.configure} matches it on a consumer whose merged
 * provider URL has {@code side=consumer}:
 *
 * <ol>
 *   <li>a rule with {@code enabled=false} (or not {@code true}) does nothing;
 *   <li>a 2.7+ rule ({@code configVersion} set) applies on the consumer side only when its {@code side} is {@code
 *       consumer} and its address is {@code 0.0.0.0} (rules for {@code side: provider} are applied by the providers,
 *       which then register their new parameters, and rules for one consumer's own address are not the mesh's);
 *   <li>a 2.6 rule with a port applies to the provider at that port (and its host, or any host for {@code 0.0.0.0});
 *       one without a port applies to every provider when its address is {@code 0.0.0.0};
 *   <li>then: {@code providerAddresses} (if given) must name the provider ({@code ip:port}, {@code ip}, {@code
 *       0.0.0.0}, {@code 0.0.0.0:*} or {@code 0.0.0.0:<port>}); {@code application} (if given and not {@code *}) must be
 *       the consumer application's; the service key ({@code group/interface:version}) must be the provider's, or
 *       {@code *}; for 2.6 and {@code v2.7} rules, every {@code ~key}, {@code application} and {@code side} parameter
 *       must equal the provider's (the consumer's for application and side), unless it is {@code *};
 *   <li>a matching rule adds its parameters to the provider's, except the condition keys (category, check, dynamic,
 *       enabled, group, version, application, side, configVersion, compatible_config, interfaces, {@code ~keys});
 *       {@code absent://} rules only add what the provider does not have;
 *   <li>rules are applied sorted by address (a specific address after {@code 0.0.0.0}) then {@code priority}.
 * </ol>
 *
 * Of what a matching rule sets, the bridge uses {@code disabled} and {@code weight} (and {@code enabled}, which a rule
 * cannot set since it is a condition key). A {@code v3.0} rule with a {@code match} condition is not applied (that
 * matcher is not implemented) and is reported.
 */
public final class DubboOverrides {

    public static final String ANYHOST = "0.0.0.0";
    public static final String CONFIGURATORS_SUFFIX = ".configurators";

    private static final Set<String> CONDITION_KEYS = Set.of(
            "category",
            "check",
            "dynamic",
            "enabled",
            "group",
            "version",
            "application",
            "side",
            "configVersion",
            "compatible_config",
            "interfaces");
    // what Dubbo's config-center listener strips from every rule before use
    private static final Set<String> SECURITY_KEYS =
            Set.of("accesslog.fixed.path", "router", "rule", "runtime", "type");
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One configurator, as Dubbo sees its URL.
     *
     * @param absent {@code absent://} (adds only missing parameters) rather than {@code override://}
     * @param host the address it is for, {@code 0.0.0.0} for any
     * @param port the provider port it is for, 0 for any
     * @param serviceKey {@code group/interface:version} (parts left out when empty), or {@code *}
     * @param parameters every parameter of the rule URL
     * @param unsupported why the bridge cannot apply it (a v3.0 {@code match}), or null
     */
    public record Rule(
            boolean absent,
            String host,
            int port,
            String serviceKey,
            Map<String, String> parameters,
            String unsupported) {

        public Rule {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(serviceKey, "serviceKey");
            parameters = Map.copyOf(parameters);
        }

        String parameter(String key) {
            String v = parameters.get(key);
            return v == null || v.isEmpty() ? null : v;
        }

        int priority() {
            try {
                String p = parameter("priority");
                return p == null ? 0 : Integer.parseInt(p.trim());
            } catch (NumberFormatException e) {
                return 0;
            }
        }
    }

    /**
     * A provider as the consumer's merged URL shows it.
     *
     * @param host the provider's host
     * @param port the provider's port
     * @param serviceKey {@code group/interface:version}
     * @param parameters the provider's URL parameters
     */
    public record Provider(String host, int port, String serviceKey, Map<String, String> parameters) {}

    /** Dubbo's sort: by address (as text, so {@code 0.0.0.0} comes before specific ones), then by priority. */
    public static final Comparator<Rule> ORDER =
            Comparator.comparing(Rule::host).thenComparingInt(Rule::priority);

    private DubboOverrides() {}

    /** {@code group/interface:version}, as Dubbo's {@code URL.buildKey}: empty group or version left out. */
    public static String serviceKey(String iface, String group, String version) {
        StringBuilder sb = new StringBuilder();
        if (group != null && !group.isEmpty()) sb.append(group).append('/');
        sb.append(iface);
        if (version != null && !version.isEmpty()) sb.append(':').append(version);
        return sb.toString();
    }

    /** The config-center key of a service's rules: {@code interface:version:group}, empty parts kept. */
    public static String ruleKey(String iface, String version, String group) {
        return iface + ":" + (version == null ? "" : version) + ":" + (group == null ? "" : group)
                + CONFIGURATORS_SUFFIX;
    }

    /**
     * A rule from an {@code override://} (or {@code absent://}) URL; null for an {@code empty://} URL or one that
     * sets nothing.
     *
     * @throws IllegalArgumentException when it is another protocol
     */
    public static Rule fromUrl(DubboUrl url) {
        String protocol = url.protocol();
        if (protocol.equals("empty")) return null;
        if (!protocol.equals("override") && !protocol.equals("absent")) {
            throw new IllegalArgumentException("'" + protocol + "://' is not a configurator");
        }
        Map<String, String> params = new TreeMap<>(url.parameters());
        params.keySet().removeAll(SECURITY_KEYS);
        Map<String, String> meaningful = new TreeMap<>(params);
        meaningful.remove("anyhost");
        if (meaningful.isEmpty()) return null;
        String iface = url.interfaceName();
        String key = iface.equals("*") && url.group().isEmpty() && url.version().isEmpty()
                ? "*"
                : serviceKey(iface, url.group(), url.version());
        return new Rule(protocol.equals("absent"), url.host(), url.port(), key, params, null);
    }

    /** Whether a configurator list holds Dubbo's {@code empty://}, which clears every rule of the list. */
    public static boolean clears(List<DubboUrl> urls) {
        return urls.stream().anyMatch(u -> u.protocol().equals("empty"));
    }

    /**
     * The rules of one config-center entry: a JSON list of override URLs, or the YAML dubbo-admin writes ({@code
     * configVersion}, {@code scope}, {@code key}, {@code enabled}, {@code configs}).
     *
     * @throws IllegalArgumentException when it is neither (Dubbo then keeps the rules it had)
     */
    @SuppressWarnings("unchecked")
    public static List<Rule> parse(String raw) {
        if (raw == null || raw.isBlank()) return List.of();
        String text = raw.strip();
        if (text.startsWith("[")) {
            try {
                JsonNode list = JSON.readTree(text);
                if (list != null && list.isArray() && !list.isEmpty()) {
                    List<Rule> out = new ArrayList<>();
                    for (JsonNode n : list) {
                        Rule r = fromUrl(DubboUrl.parse(n.asText()));
                        if (r != null) out.add(r);
                    }
                    return out;
                }
            } catch (Exception e) {
                // not a JSON list of URLs: read as YAML, as Dubbo does
            }
        }
        Object doc;
        try {
            doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("configurator rule is neither a JSON list nor YAML: " + firstLine(e));
        }
        if (!(doc instanceof Map<?, ?> map)) throw new IllegalArgumentException("configurator rule is not a YAML map");
        Map<String, Object> config = (Map<String, Object>) map;
        String configVersion = string(config.get("configVersion"));
        String scope = string(config.get("scope"));
        String key = string(config.get("key"));
        boolean enabled = config.get("enabled") == null
                || Boolean.parseBoolean(config.get("enabled").toString());
        Object configs = config.get("configs");
        if (!(configs instanceof List<?> items)) {
            throw new IllegalArgumentException("configurator rule has no 'configs' list");
        }
        List<Rule> out = new ArrayList<>();
        for (Object o : items) {
            if (!(o instanceof Map<?, ?> m)) throw new IllegalArgumentException("an entry of 'configs' is not a map");
            out.addAll(item((Map<String, Object>) m, configVersion, "application".equals(scope), key, enabled));
        }
        return out;
    }

    private static List<Rule> item(
            Map<String, Object> item, String configVersion, boolean applicationScope, String key, boolean enabled) {
        Map<String, String> parameters = new LinkedHashMap<>();
        Object p = item.get("parameters");
        if (p instanceof Map<?, ?> pm) pm.forEach((k, v) -> parameters.put(String.valueOf(k), String.valueOf(v)));
        if (parameters.isEmpty()) {
            throw new IllegalArgumentException("a configurator rule item sets no parameter");
        }
        if (key == null || key.isEmpty()) throw new IllegalArgumentException("configurator rule has no key");
        String side = string(item.get("side"));
        List<String> addresses = strings(item.get("addresses"));
        if (addresses.isEmpty()) addresses = List.of(ANYHOST);
        List<String> providerAddresses = strings(item.get("providerAddresses"));
        String type = string(item.get("type"));
        String itemEnabled = type == null || type.equals("general")
                ? Boolean.toString(enabled)
                : String.valueOf(
                        item.get("enabled") == null
                                ? null
                                : Boolean.parseBoolean(item.get("enabled").toString()));
        String unsupported = item.get("match") != null && configVersion != null && configVersion.startsWith("v3.0")
                ? "a v3.0 rule with a match condition"
                : null;
        List<Rule> out = new ArrayList<>();
        for (String address : addresses) {
            List<String> services = applicationScope ? strings(item.get("services")) : List.of(key);
            if (services.isEmpty()) services = List.of("*");
            List<String> applications = applicationScope ? List.of(key) : strings(item.get("applications"));
            if (applications.isEmpty()) applications = java.util.Collections.singletonList(null);
            for (String service : services) {
                for (String application : applications) {
                    Map<String, String> params = new TreeMap<>(parameters);
                    params.put("category", applicationScope ? "appdynamicconfigurators" : "dynamicconfigurators");
                    if (side != null) params.put("side", side);
                    if (!providerAddresses.isEmpty()) {
                        params.put("providerAddresses", String.join(",", providerAddresses));
                    } else if ("provider".equals(side)) {
                        params.put("providerAddresses", String.join(",", addresses));
                    }
                    params.put("enabled", itemEnabled);
                    params.put("configVersion", String.valueOf(configVersion));
                    if (application != null) params.put("application", application);
                    params.keySet().removeAll(SECURITY_KEYS);
                    String[] hostPort = hostAndPort(address);
                    out.add(new Rule(
                            false,
                            hostPort[0],
                            Integer.parseInt(hostPort[1]),
                            serviceKeyOf(service, params),
                            params,
                            unsupported));
                }
            }
        }
        return out;
    }

    /** A rule's service key from {@code group/interface:version}; puts group and version into its parameters. */
    private static String serviceKeyOf(String service, Map<String, String> params) {
        String iface = service;
        String group = "";
        String version = "";
        int slash = iface.indexOf('/');
        if (slash > 0) {
            group = iface.substring(0, slash);
            iface = iface.substring(slash + 1);
        }
        int colon = iface.indexOf(':');
        if (colon > 0) {
            version = iface.substring(colon + 1);
            iface = iface.substring(0, colon);
        }
        if (!group.isEmpty()) params.put("group", group);
        if (!version.isEmpty()) params.put("version", version);
        if (iface.equals("*") && group.isEmpty() && version.isEmpty()) return "*";
        return serviceKey(iface, group, version);
    }

    private static String[] hostAndPort(String address) {
        String a = address.trim();
        int colon = a.lastIndexOf(':');
        if (colon > 0 && a.indexOf(':') == colon) {
            try {
                return new String[] {a.substring(0, colon), Integer.toString(Integer.parseInt(a.substring(colon + 1)))};
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("address '" + a + "' has a bad port");
            }
        }
        return new String[] {a, "0"};
    }

    /**
     * The provider's parameters after every rule, in order ({@code lists} in Dubbo's order: registry configurators,
     * the consumer application's, the service's); each list is sorted by {@link #ORDER} here.
     *
     * @param consumerApplication the consumer application the bridge stands for, or null for none
     */
    public static Map<String, String> apply(Provider provider, String consumerApplication, List<List<Rule>> lists) {
        Map<String, String> params = new TreeMap<>(provider.parameters());
        for (List<Rule> list : lists) {
            List<Rule> sorted = new ArrayList<>(list);
            sorted.sort(ORDER);
            for (Rule r : sorted) configure(r, provider, consumerApplication, params);
        }
        return params;
    }

    private static void configure(Rule rule, Provider provider, String consumerApp, Map<String, String> params) {
        String enabled = rule.parameter("enabled");
        if (enabled != null && !Boolean.parseBoolean(enabled)) return;
        if (rule.unsupported() != null) return;
        String configVersion = rule.parameter("configVersion");
        if (configVersion != null) {
            // the merged URL of a consumer has side=consumer: only consumer-side rules, for any consumer address
            if ("consumer".equals(rule.parameters().get("side")))
                configureIfMatch(rule, null, provider, consumerApp, params);
        } else if (rule.port() != 0) {
            if (provider.port() == rule.port()) configureIfMatch(rule, provider.host(), provider, consumerApp, params);
        } else {
            configureIfMatch(rule, null, provider, consumerApp, params);
        }
    }

    /** @param host the host the rule must name (null: the consumer's own address, which only {@code 0.0.0.0} does) */
    private static void configureIfMatch(
            Rule rule, String host, Provider provider, String consumerApp, Map<String, String> params) {
        if (!ANYHOST.equals(rule.host()) && !rule.host().equals(host)) return;
        if (!providerMatch(rule, provider, consumerApp)) return;
        Set<String> conditionKeys = new HashSet<>(CONDITION_KEYS);
        String configVersion = rule.parameter("configVersion");
        if (configVersion == null || !configVersion.startsWith("v3.0")) {
            if (!deprecatedConditionMatch(rule, params, consumerApp, conditionKeys)) return;
        }
        for (Map.Entry<String, String> e : rule.parameters().entrySet()) {
            if (conditionKeys.contains(e.getKey())) continue;
            if (rule.absent()) params.putIfAbsent(e.getKey(), e.getValue());
            else params.put(e.getKey(), e.getValue());
        }
    }

    private static boolean providerMatch(Rule rule, Provider provider, String consumerApp) {
        String providers = rule.parameter("providerAddresses");
        if (providers != null) {
            String address = provider.host() + ":" + provider.port();
            boolean match = false;
            for (String a : providers.split(",")) {
                if (a.equals(address)
                        || a.equals(ANYHOST)
                        || a.equals(ANYHOST + ":*")
                        || a.equals(ANYHOST + ":" + provider.port())
                        || a.equals(provider.host())) {
                    match = true;
                }
            }
            if (!match) return false;
        }
        String application = rule.parameter("application");
        if (application != null && !application.equals("*") && !application.equals(consumerApp)) return false;
        return rule.serviceKey().equals("*") || rule.serviceKey().equals(provider.serviceKey());
    }

    private static boolean deprecatedConditionMatch(
            Rule rule, Map<String, String> params, String consumerApp, Set<String> conditionKeys) {
        for (Map.Entry<String, String> e : rule.parameters().entrySet()) {
            String key = e.getKey();
            boolean tilde = key.startsWith("~") && key.length() > 1;
            if (!tilde && !key.equals("application") && !key.equals("side")) continue;
            if (tilde) conditionKeys.add(key);
            String value = e.getValue();
            if (value == null || value.equals("*")) continue;
            String actual = switch (key) {
                case "application" -> consumerApp;
                case "side" -> "consumer";
                default -> params.get(key.substring(1));
            };
            if (!value.equals(actual)) return false;
        }
        return true;
    }

    private static String string(Object o) {
        return o == null ? null : o.toString();
    }

    private static List<String> strings(Object o) {
        if (!(o instanceof List<?> list)) return List.of();
        List<String> out = new ArrayList<>(list.size());
        for (Object x : list) out.add(String.valueOf(x));
        return out;
    }

    private static String firstLine(Exception e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
