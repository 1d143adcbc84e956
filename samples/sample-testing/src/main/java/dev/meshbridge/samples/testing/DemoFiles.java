package dev.meshbridge.samples.testing;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The docker-compose demo's files ({@code docker-compose/} at the repository root), read the way its containers use
 * them, so a sample's test runs the sample with the environment {@code compose.yaml} gives it, watches it with the
 * registry entry of the demo's {@code bridge.yaml}, and expects the host the demo's Ingress routes to.
 */
public final class DemoFiles {

    /** The bridge's configuration file in the demo folder. */
    public static final String BRIDGE_CONFIG = "bridge.yaml";

    /** The folder of Ingress files the bridge's directory source reads. */
    public static final String INGRESS_DIR = "ingress";

    private final Path dir;

    private DemoFiles(Path dir) {
        this.dir = dir;
    }

    /** Finds {@code docker-compose/} in the working directory or one of its parents (a module's tests run inside it). */
    public static DemoFiles locate() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("docker-compose");
            if (Files.isRegularFile(candidate.resolve("compose.yaml"))) return new DemoFiles(candidate);
        }
        throw new IllegalStateException(
                "no docker-compose/compose.yaml above " + Path.of("").toAbsolutePath());
    }

    public Path dir() {
        return dir;
    }

    /** {@code compose.yaml} as YAML maps and lists. */
    public Map<String, Object> compose() {
        return map(load(dir.resolve("compose.yaml")), "compose.yaml");
    }

    /**
     * The {@code environment} compose gives one service, in either form compose accepts (a mapping, or a list of
     * {@code NAME=value}); values as strings.
     */
    public Map<String, String> environment(String service) {
        Map<String, Object> services = map(compose().get("services"), "services");
        Map<String, Object> svc = map(services.get(service), "services." + service);
        Object env = svc.get("environment");
        Map<String, String> out = new LinkedHashMap<>();
        if (env instanceof Map<?, ?> m) {
            m.forEach((k, v) -> out.put(String.valueOf(k), v == null ? "" : String.valueOf(v)));
        } else if (env instanceof List<?> l) {
            for (Object item : l) {
                String s = String.valueOf(item);
                int eq = s.indexOf('=');
                out.put(eq < 0 ? s : s.substring(0, eq), eq < 0 ? "" : s.substring(eq + 1));
            }
        } else if (env != null) {
            throw new IllegalStateException("services." + service + ".environment is neither a mapping nor a list");
        }
        return out;
    }

    /**
     * The registry entry named {@code name} of the demo's {@code bridge.yaml}, with its addresses replaced by {@code
     * addresses} (the in-process server of a test), validated by the bridge's own parser and the registry type's
     * provider.
     */
    public RegistryConfig registry(String name, String... addresses) {
        Map<String, Object> root = map(load(dir.resolve(BRIDGE_CONFIG)), BRIDGE_CONFIG);
        Object list = root.get("registries");
        if (!(list instanceof List<?> registries)) throw new IllegalStateException("bridge.yaml has no registries");
        for (Object o : registries) {
            Map<String, Object> entry = new LinkedHashMap<>(map(o, "registries[]"));
            if (!name.equals(entry.get("name"))) continue;
            entry.remove("domain");
            entry.remove("port");
            entry.put("addresses", List.of(addresses));
            DumperOptions options = new DumperOptions();
            options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
            String yaml = new Yaml(options).dump(Map.of("registries", List.of(entry)));
            try {
                ConfigNode node = ConfigNode.parse(BRIDGE_CONFIG + " (registry " + name + ")", yaml);
                List<RegistryConfig> parsed = RegistriesConfig.parse(node, RegistriesConfig.loadProviders());
                node.finish();
                return parsed.get(0);
            } catch (ConfigException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        }
        throw new IllegalStateException("bridge.yaml has no registry named " + name);
    }

    /**
     * The mesh host the demo's Ingress files route {@code path} to: the {@code backend.resource} name of the path
     * (kind {@code RegistryService}) in the one Ingress that declares it.
     */
    public String routeHost(String path) {
        List<String> found = new ArrayList<>();
        try (var files = Files.list(dir.resolve(INGRESS_DIR))) {
            for (Path f : files.filter(DemoFiles::isYaml).sorted().toList()) {
                for (Object doc : loadAll(f)) {
                    if (!(doc instanceof Map<?, ?> m) || !"Ingress".equals(m.get("kind"))) continue;
                    for (Object rule : list(at(doc, "spec", "rules"))) {
                        for (Object p : list(at(rule, "http", "paths"))) {
                            if (path.equals(at(p, "path")))
                                found.add(String.valueOf(at(p, "backend", "resource", "name")));
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (found.size() != 1) throw new IllegalStateException("expected one route for " + path + ", found " + found);
        return found.get(0);
    }

    private static boolean isYaml(Path p) {
        String n = p.getFileName().toString();
        return !n.startsWith(".") && (n.endsWith(".yaml") || n.endsWith(".yml"));
    }

    private static Object at(Object node, String... keys) {
        Object o = node;
        for (String k : keys) {
            if (!(o instanceof Map<?, ?> m)) return null;
            o = m.get(k);
        }
        return o;
    }

    private static List<?> list(Object o) {
        return o instanceof List<?> l ? l : List.of();
    }

    private static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

    private static Object load(Path file) {
        try {
            return yaml().load(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Object> loadAll(Path file) throws IOException {
        List<Object> docs = new ArrayList<>();
        yaml().loadAll(Files.readString(file)).forEach(docs::add);
        return docs;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o, String what) {
        if (o instanceof Map<?, ?> m) return (Map<String, Object>) m;
        throw new IllegalStateException(what + " is not a mapping");
    }
}
