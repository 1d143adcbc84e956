package dev.meshbridge.ingress;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.ConfigProblem;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Turns the {@code spec} of a Higress McpBridge ({@code networking.higress.io/v1}) into the bridge's registry
 * configuration, validated exactly as a {@code registries:} list of {@code bridge.yaml}. Pure.
 *
 * <ol>
 *   <li>each {@code spec.registries[]} entry is passed through with its Higress field names ({@code type}, {@code
 *       name}, {@code domain}, {@code port}, {@code nacosNamespaceId}, {@code zkServicesPath}, ...), which the registry
 *       types accept, and parsed by {@link RegistriesConfig#parse} under the source name {@code McpBridge ns/name};
 *   <li>type {@code nacos2} or {@code nacos3} is read as {@code nacos} when no provider serves it by that name;
 *   <li>entries of Higress types the bridge does not serve ({@code static}, {@code dns}) are skipped with a note;
 *   <li>Higress fields with no meaning here (MCP server settings, {@code proxyName}, {@code vport}, {@code
 *       metadata}, {@code protocol}, {@code sni}) are dropped with a note, so a resource written for Higress is
 *       accepted; {@code spec.proxies} is ignored with a note;
 *   <li>{@code authSecretName} names a Secret in the McpBridge's namespace holding the credentials under Higress's
 *       keys: {@code nacosUsername} and {@code nacosPassword} for Nacos, {@code consulToken} for Consul; each becomes
 *       a {@code {secret: ...}} credential of the entry (read at every connect), unless the entry gives that field
 *       itself; Higress reads no such keys for other types, so there it is dropped with a note;
 *   <li>any other problem (a missing name, an unknown field or type, a bad value) refuses the whole resource; the
 *       problems name the field as {@code spec.registries[i].field}.
 * </ol>
 */
final class McpBridgeConverter {

    /** Higress registry types without a counterpart here. */
    static final Set<String> SKIPPED_TYPES = Set.of("static", "dns");

    /** Higress registry fields without a meaning here. */
    static final Set<String> DROPPED_FIELDS = Set.of(
            "protocol",
            "sni",
            "mcpServerExportDomains",
            "mcpServerBaseUrl",
            "enableMCPServer",
            "enableScopeMcpServers",
            "allowMcpServers",
            "metadata",
            "proxyName",
            "vport");

    /** The credential fields Higress reads from an {@code authSecretName} Secret, by registry type (same key names). */
    static final Map<String, List<String>> AUTH_SECRET_KEYS = Map.of(
            "nacos", List.of("nacosUsername", "nacosPassword"),
            "consul", List.of("consulToken"));

    private static final Pattern INDEX = Pattern.compile("^registries\\[(\\d+)\\]");

    /**
     * The outcome.
     *
     * @param registries the registries, or null when the resource is refused
     * @param problems why it is refused
     * @param notes what was skipped or dropped (the resource is still accepted)
     */
    record Result(List<RegistryConfig> registries, List<String> problems, List<String> notes) {
        boolean accepted() {
            return registries != null;
        }
    }

    private McpBridgeConverter() {}

    static String sourceName(String namespace, String name) {
        return "McpBridge " + namespace + "/" + name;
    }

    static Result convert(String namespace, String name, Object spec, Map<String, RegistryWatcherProvider> providers) {
        List<String> notes = new ArrayList<>();
        if (spec != null && !(spec instanceof Map)) {
            return new Result(null, List.of("spec: expected an object with registries"), notes);
        }
        Map<?, ?> specMap = spec == null ? Map.of() : (Map<?, ?>) spec;
        Object proxies = specMap.get("proxies");
        if (proxies instanceof List<?> l && !l.isEmpty()) notes.add("spec.proxies is ignored (" + l.size() + ")");
        Object raw = specMap.get("registries");
        if (raw != null && !(raw instanceof List)) {
            return new Result(null, List.of("spec.registries: expected a list"), notes);
        }
        List<?> entries = raw == null ? List.of() : (List<?>) raw;
        List<Object> converted = new ArrayList<>();
        List<Integer> originalIndex = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            Object e = entries.get(i);
            String field = "spec.registries[" + i + "]";
            if (!(e instanceof Map<?, ?> entry)) {
                converted.add(e); // RegistriesConfig reports it
                originalIndex.add(i);
                continue;
            }
            Map<String, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> f : entry.entrySet()) out.put(String.valueOf(f.getKey()), f.getValue());
            Object type = out.get("type");
            if (type instanceof String t && !providers.containsKey(t)) {
                if ((t.equals("nacos2") || t.equals("nacos3")) && providers.containsKey("nacos")) {
                    out.put("type", "nacos");
                } else if (SKIPPED_TYPES.contains(t)) {
                    notes.add(field + " (type " + t + ", name " + out.get("name") + ") is skipped: the bridge has no "
                            + t + " registry");
                    continue;
                }
            }
            List<String> dropped = new ArrayList<>();
            for (String key : List.copyOf(out.keySet())) {
                if (DROPPED_FIELDS.contains(key)) {
                    Object v = out.remove(key);
                    if (!isEmpty(v)) dropped.add(key);
                }
            }
            if (!dropped.isEmpty()) notes.add(field + ": " + String.join(", ", dropped) + " ignored (Higress only)");
            Object authSecret = out.remove("authSecretName");
            if (!isEmpty(authSecret)) {
                List<String> keys = out.get("type") instanceof String t ? AUTH_SECRET_KEYS.get(t) : null;
                if (keys == null) {
                    notes.add(field + ": authSecretName ignored (Higress reads it for nacos and consul only)");
                } else {
                    for (String key : keys) {
                        if (out.containsKey(key)) continue; // the entry's own value wins
                        Map<String, Object> ref = new LinkedHashMap<>();
                        ref.put("name", String.valueOf(authSecret));
                        ref.put("key", key);
                        ref.put("namespace", namespace);
                        out.put(key, Map.of("secret", ref));
                    }
                }
            }
            converted.add(out);
            originalIndex.add(i);
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("registries", converted);
        DumperOptions dump = new DumperOptions();
        dump.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        String yaml = new Yaml(dump).dump(root);
        try {
            ConfigNode node = ConfigNode.parse(sourceName(namespace, name), yaml);
            List<RegistryConfig> registries = RegistriesConfig.parse(node, providers);
            node.finish();
            return new Result(registries, List.of(), notes);
        } catch (ConfigException e) {
            List<String> problems = new ArrayList<>();
            for (ConfigProblem p : e.problems()) problems.add(describe(p, originalIndex));
            return new Result(null, problems, notes);
        }
    }

    /** {@code spec.registries[i].field: message}, with the index of the resource (not of the converted list). */
    private static String describe(ConfigProblem p, List<Integer> originalIndex) {
        String path = p.path();
        Matcher m = INDEX.matcher(path);
        if (m.find()) {
            int k = Integer.parseInt(m.group(1));
            int original = k < originalIndex.size() ? originalIndex.get(k) : k;
            path = "registries[" + original + "]" + path.substring(m.end());
        }
        return (path.isEmpty() ? "spec" : "spec." + path) + ": " + p.message();
    }

    private static boolean isEmpty(Object v) {
        return v == null
                || Boolean.FALSE.equals(v)
                || (v instanceof String s && s.isEmpty())
                || (v instanceof List<?> l && l.isEmpty())
                || (v instanceof Map<?, ?> m && m.isEmpty());
    }
}
