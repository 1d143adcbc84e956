package dev.meshbridge.core.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * A node of a YAML configuration that knows where it stands (file, line, field path), for parsers that turn it into
 * typed options and report every problem with its location.
 *
 * <p>How parsers use it:
 *
 * <ol>
 *   <li>read fields with the typed getters; a missing optional field gives the default, a wrong one records a {@link
 *       ConfigProblem} (naming line and field) and also gives the default, so one pass finds every problem;
 *   <li>every key a parser never asked for is reported as unknown when the root's {@link #finish()} runs, with a
 *       suggestion when it is close to a known key (a typo such as {@code zkServicePath});
 *   <li>{@link #finish()} throws one {@link ConfigException} listing all problems, or returns when there are none.
 * </ol>
 */
public final class ConfigNode {

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m|h|d)");

    private final Context context;
    private final Node node;
    private final String path;
    private final Map<String, NodeTuple> entries;
    private final Set<String> asked = new LinkedHashSet<>();

    private static final class Context {
        final String source;
        final List<ConfigProblem> problems = new ArrayList<>();
        final List<ConfigNode> mappings = new ArrayList<>();
        final Map<Node, ConfigNode> wrapped = new java.util.IdentityHashMap<>();
        /** The {@code {secret: ...}} credentials read so far, to refuse them when the Kubernetes source is off. */
        final List<ConfigNode> kubernetesSecrets = new ArrayList<>();

        Context(String source) {
            this.source = source;
        }
    }

    private static ConfigNode wrap(Context context, Node node, String path) {
        ConfigNode existing = context.wrapped.get(node);
        if (existing != null) return existing;
        ConfigNode created = new ConfigNode(context, node, path);
        context.wrapped.put(node, created);
        return created;
    }

    private ConfigNode(Context context, Node node, String path) {
        this.context = context;
        this.node = node;
        this.path = path;
        if (node instanceof MappingNode m) {
            Map<String, NodeTuple> map = new LinkedHashMap<>();
            for (NodeTuple t : m.getValue()) {
                if (!(t.getKeyNode() instanceof ScalarNode k)) {
                    problemAt(t.getKeyNode(), path, "keys must be plain strings");
                    continue;
                }
                if (map.putIfAbsent(k.getValue(), t) != null) {
                    problemAt(k, child(path, k.getValue()), "duplicate key '" + k.getValue() + "'");
                }
            }
            this.entries = Collections.unmodifiableMap(map);
            context.mappings.add(this);
        } else {
            this.entries = Map.of();
        }
    }

    /**
     * Parses YAML text. A syntax error is a {@link ConfigException} naming line and column.
     *
     * @param source the name used in messages, usually the file name
     */
    public static ConfigNode parse(String source, String text) throws ConfigException {
        Context context = new Context(source);
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(true); // reported by ConfigNode, with the line
        options.setMaxAliasesForCollections(50);
        Node root;
        try {
            root = new Yaml(options).compose(new java.io.StringReader(text));
        } catch (MarkedYAMLException e) {
            Mark m = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            int line = m == null ? 0 : m.getLine() + 1;
            int col = m == null ? 0 : m.getColumn() + 1;
            throw new ConfigException(new ConfigProblem(source, line, col, "", "YAML syntax: " + e.getProblem()));
        } catch (YAMLException e) {
            throw new ConfigException(new ConfigProblem(source, 0, 0, "", "YAML: " + e.getMessage()));
        }
        if (root == null) {
            root = new MappingNode(Tag.MAP, List.of(), org.yaml.snakeyaml.DumperOptions.FlowStyle.BLOCK);
        }
        ConfigNode node = wrap(context, root, "");
        if (!(root instanceof MappingNode)) {
            node.problemHere("the top level must be a mapping of sections (registries:, xds:, ...)");
            node.finish();
        }
        return node;
    }

    /** Reads and parses a file; an unreadable file is a {@link ConfigException} too. */
    public static ConfigNode parse(Path file) throws ConfigException {
        String text;
        try {
            text = Files.readString(file);
        } catch (java.io.IOException e) {
            throw new ConfigException(new ConfigProblem(file.toString(), 0, 0, "", "cannot read: " + e));
        }
        return parse(file.toString(), text);
    }

    /** Where this node is: {@code file:line}. */
    public String location() {
        int line = line();
        return line > 0 ? context.source + ":" + line : context.source;
    }

    /** The field path, e.g. {@code registries[0].name}; empty at the root. */
    public String path() {
        return path;
    }

    public String source() {
        return context.source;
    }

    /** 1-based line of this node, 0 when unknown. */
    public int line() {
        return node == null || node.getStartMark() == null
                ? 0
                : node.getStartMark().getLine() + 1;
    }

    public boolean isMapping() {
        return node instanceof MappingNode;
    }

    public boolean isSequence() {
        return node instanceof SequenceNode;
    }

    public boolean isScalar() {
        return node instanceof ScalarNode;
    }

    /** The keys present in this mapping, in file order. */
    public Set<String> keys() {
        return entries.keySet();
    }

    /** True when the key is present (and not null); counts as asking for it. */
    public boolean has(String key) {
        asked.add(key);
        NodeTuple t = entries.get(key);
        return t != null && !isNull(t.getValueNode());
    }

    /** The child node at {@code key}, when present and not null. */
    public Optional<ConfigNode> child(String key) {
        asked.add(key);
        NodeTuple t = entries.get(key);
        if (t == null || isNull(t.getValueNode())) return Optional.empty();
        return Optional.of(wrap(context, t.getValueNode(), child(path, key)));
    }

    /** Marks keys as known without reading them (for fields read elsewhere or deliberately ignored). */
    public void accept(String... keys) {
        asked.addAll(List.of(keys));
    }

    /** A scalar as text, or null when this node is not a scalar. */
    public String scalar() {
        return node instanceof ScalarNode s ? s.getValue() : null;
    }

    public String string(String key, String defaultValue) {
        return child(key).map(n -> n.asString()).orElse(defaultValue);
    }

    /** A required string; records "missing required field" when absent. */
    public String requiredString(String key) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) {
            problem(key, "required field is missing");
            return null;
        }
        String v = c.get().asString();
        if (v != null && v.isBlank()) {
            c.get().problemHere("must not be empty");
            return null;
        }
        return v;
    }

    private String asString() {
        if (node instanceof ScalarNode s) return s.getValue();
        problemHere("expected a string, got a " + kind(node));
        return null;
    }

    public int integer(String key, int defaultValue, int min, int max) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return defaultValue;
        String s = c.get().asString();
        if (s == null) return defaultValue;
        try {
            int v = Integer.parseInt(s.trim());
            if (v < min || v > max) {
                c.get().problemHere("expected an integer in " + min + ".." + max + ", got " + v);
                return defaultValue;
            }
            return v;
        } catch (NumberFormatException e) {
            c.get().problemHere("expected an integer in " + min + ".." + max + ", got '" + s + "'");
            return defaultValue;
        }
    }

    public boolean bool(String key, boolean defaultValue) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return defaultValue;
        String s = c.get().asString();
        if (s == null) return defaultValue;
        return switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> {
                c.get().problemHere("expected true or false, got '" + s + "'");
                yield defaultValue;
            }
        };
    }

    /**
     * A share written as a percentage ({@code 50%}) or a fraction ({@code 0.5}), between {@code min} and {@code max}
     * (fractions, e.g. 0 and 1).
     */
    public double share(String key, double defaultValue, double min, double max) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return defaultValue;
        String s = c.get().asString();
        if (s == null) return defaultValue;
        String t = s.trim();
        double v;
        try {
            v = t.endsWith("%")
                    ? Double.parseDouble(t.substring(0, t.length() - 1).trim()) / 100
                    : Double.parseDouble(t);
        } catch (NumberFormatException e) {
            v = Double.NaN;
        }
        if (Double.isNaN(v) || v < min || v > max) {
            c.get()
                    .problemHere("expected a share such as 50% or 0.5, between " + percent(min) + " and " + percent(max)
                            + ", got '" + s + "'");
            return defaultValue;
        }
        return v;
    }

    private static String percent(double fraction) {
        double p = fraction * 100;
        return (p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p)) + "%";
    }

    /**
     * A duration written as {@code 250ms}, {@code 5s}, {@code 1m}, {@code 1h}, {@code 1d} (also {@code ns},
     * {@code us}, and sums such as {@code 1m30s}).
     *
     * @param bareNumberUnit unit of a bare number (Higress writes some intervals as nanoseconds), or null to refuse
     *     bare numbers
     */
    public Duration duration(String key, Duration defaultValue, java.time.temporal.ChronoUnit bareNumberUnit) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return defaultValue;
        String s = c.get().asString();
        if (s == null) return defaultValue;
        Duration d = parseDuration(s.trim(), bareNumberUnit);
        if (d == null) {
            c.get().problemHere("expected a duration such as 500ms, 10s or 1m, got '" + s + "'");
            return defaultValue;
        }
        return d;
    }

    public Duration duration(String key, Duration defaultValue) {
        return duration(key, defaultValue, null);
    }

    static Duration parseDuration(String s, java.time.temporal.ChronoUnit bareNumberUnit) {
        if (s.matches("\\d+")) {
            return bareNumberUnit == null ? null : Duration.of(Long.parseLong(s), bareNumberUnit);
        }
        Matcher m = DURATION.matcher(s);
        long nanos = 0;
        int end = 0;
        while (m.find()) {
            if (m.start() != end) return null;
            end = m.end();
            double v = Double.parseDouble(m.group(1));
            long unit = switch (m.group(2)) {
                case "ns" -> 1L;
                case "us" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                case "h" -> 3_600_000_000_000L;
                default -> 86_400_000_000_000L;
            };
            nanos += (long) (v * unit);
        }
        return end == s.length() && end > 0 ? Duration.ofNanos(nanos) : null;
    }

    /** An enum value, matched without regard to case, dashes or underscores ({@code keep-last}, {@code KEEP_LAST}). */
    public <E extends Enum<E>> E enumValue(String key, Class<E> type, E defaultValue) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return defaultValue;
        String s = c.get().asString();
        if (s == null) return defaultValue;
        String want = s.trim().replace('-', '_').toUpperCase(Locale.ROOT);
        for (E e : type.getEnumConstants()) {
            if (e.name().equals(want)) return e;
        }
        List<String> names = new ArrayList<>();
        for (E e : type.getEnumConstants())
            names.add(e.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        c.get().problemHere("expected one of " + names + ", got '" + s + "'");
        return defaultValue;
    }

    /** A list of strings: a YAML sequence, or one scalar holding a comma-separated list. */
    public List<String> strings(String key) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return List.of();
        ConfigNode n = c.get();
        List<String> out = new ArrayList<>();
        if (n.node instanceof ScalarNode s) {
            for (String part : s.getValue().split(",")) {
                if (!part.isBlank()) out.add(part.trim());
            }
        } else if (n.node instanceof SequenceNode seq) {
            for (int i = 0; i < seq.getValue().size(); i++) {
                Node item = seq.getValue().get(i);
                if (item instanceof ScalarNode s) {
                    out.add(s.getValue().trim());
                } else {
                    problemAt(item, n.path + "[" + i + "]", "expected a string, got a " + kind(item));
                }
            }
        } else {
            n.problemHere("expected a list of strings, got a " + kind(n.node));
        }
        return List.copyOf(out);
    }

    /** A mapping of strings to strings (free-form: every key is accepted). */
    public Map<String, String> stringMap(String key) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return Map.of();
        ConfigNode n = c.get();
        if (!n.isMapping()) {
            n.problemHere("expected a mapping of strings, got a " + kind(n.node));
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, NodeTuple> e : n.entries.entrySet()) {
            n.asked.add(e.getKey());
            Node v = e.getValue().getValueNode();
            if (v instanceof ScalarNode s) {
                out.put(e.getKey(), s.getValue());
            } else {
                problemAt(v, child(n.path, e.getKey()), "expected a string, got a " + kind(v));
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /** The items of a sequence at {@code key}, each a node of its own. */
    public List<ConfigNode> list(String key) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return List.of();
        ConfigNode n = c.get();
        if (!(n.node instanceof SequenceNode seq)) {
            n.problemHere("expected a list, got a " + kind(n.node));
            return List.of();
        }
        List<ConfigNode> out = new ArrayList<>();
        for (int i = 0; i < seq.getValue().size(); i++) {
            out.add(wrap(context, seq.getValue().get(i), n.path + "[" + i + "]"));
        }
        return out;
    }

    /** The mapping at {@code key}, or an empty mapping node at this location when absent. */
    public ConfigNode section(String key) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) {
            return new ConfigNode(
                    context,
                    new MappingNode(Tag.MAP, List.of(), org.yaml.snakeyaml.DumperOptions.FlowStyle.BLOCK),
                    child(path, key));
        }
        if (!c.get().isMapping()) {
            c.get().problemHere("expected a mapping, got a " + kind(c.get().node));
            return new ConfigNode(
                    context,
                    new MappingNode(Tag.MAP, List.of(), org.yaml.snakeyaml.DumperOptions.FlowStyle.BLOCK),
                    child(path, key));
        }
        return c.get();
    }

    /** A Kubernetes object name (a DNS subdomain) and a Secret data key, as the API server validates them. */
    private static final Pattern SECRET_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    private static final Pattern SECRET_KEY = Pattern.compile("[-._a-zA-Z0-9]{1,253}");
    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    /**
     * A credential: a plain string, {@code {env: NAME}}, {@code {file: PATH}} or {@code {secret: {name: N, key: K,
     * namespace: NS}}} (a Kubernetes Secret; namespace defaults to the bridge's own). An unset variable or a missing
     * file is a problem at load time, named without the value; a Secret is only read when the credential is used.
     */
    public Optional<Secret> secret(String key) {
        Optional<ConfigNode> c = child(key);
        if (c.isEmpty()) return Optional.empty();
        ConfigNode n = c.get();
        if (n.node instanceof ScalarNode s) return Optional.of(Secret.literal(s.getValue()));
        if (!n.isMapping()) {
            n.problemHere("expected a string, {env: NAME}, {file: PATH} or {secret: {name: N, key: K}}");
            return Optional.empty();
        }
        int forms = (n.has("env") ? 1 : 0) + (n.has("file") ? 1 : 0) + (n.has("secret") ? 1 : 0);
        if (forms != 1) {
            n.problemHere("give exactly one of env, file or secret");
            return Optional.empty();
        }
        if (n.has("secret")) return n.kubernetesSecret();
        if (n.has("env")) {
            String name = n.requiredString("env");
            if (name == null) return Optional.empty();
            if (System.getenv(name) == null) {
                n.problem("env", "environment variable " + name + " is not set");
            }
            return Optional.of(Secret.env(name));
        }
        String file = n.requiredString("file");
        if (file == null) return Optional.empty();
        if (!Files.isReadable(Path.of(file)))
            n.problem("file", "secret file " + file + " does not exist or is not readable");
        return Optional.of(Secret.file(Path.of(file)));
    }

    private Optional<Secret> kubernetesSecret() {
        ConfigNode ref = section("secret");
        String name = ref.requiredString("name");
        String key = ref.requiredString("key");
        String namespace = ref.string("namespace", null);
        if (name != null && !SECRET_NAME.matcher(name).matches())
            ref.problem("name", "not a Kubernetes Secret name (lower case letters, digits, '-' and '.')");
        if (key != null && !SECRET_KEY.matcher(key).matches())
            ref.problem("key", "not a Secret data key (letters, digits, '-', '_' and '.')");
        if (namespace != null && !NAMESPACE.matcher(namespace).matches())
            ref.problem("namespace", "not a Kubernetes namespace name");
        if (name == null || key == null) return Optional.empty();
        context.kubernetesSecrets.add(this);
        return Optional.of(Secret.kubernetes(namespace, name, key));
    }

    /**
     * Records a problem at every {@code {secret: ...}} credential read so far in this file (for a file whose
     * Kubernetes source is off); returns how many there were.
     */
    public int refuseKubernetesSecrets(String message) {
        for (ConfigNode n : context.kubernetesSecrets) n.problemHere(message);
        return context.kubernetesSecrets.size();
    }

    /** Applies {@code parse} to the child at {@code key} when present. */
    public <T> Optional<T> map(String key, Function<ConfigNode, T> parse) {
        return child(key).map(parse);
    }

    /** Records a problem at the field {@code key} of this mapping (at this node's line when the key is absent). */
    public void problem(String key, String message) {
        NodeTuple t = entries.get(key);
        problemAt(t != null ? t.getValueNode() : node, child(path, key), message);
    }

    /** Records a problem at this node. */
    public void problemHere(String message) {
        problemAt(node, path, message);
    }

    private void problemAt(Node at, String fieldPath, String message) {
        int line = 0;
        int col = 0;
        if (at != null && at.getStartMark() != null) {
            line = at.getStartMark().getLine() + 1;
            col = at.getStartMark().getColumn() + 1;
        }
        context.problems.add(new ConfigProblem(context.source, line, col, fieldPath, message));
    }

    /** True when some problem has been recorded so far (in the whole file). */
    public boolean hasProblems() {
        return !context.problems.isEmpty();
    }

    /**
     * Reports every key that no parser asked for, then throws one exception with all problems, if any. Call once on
     * the root, after all parsing.
     */
    public void finish() throws ConfigException {
        for (ConfigNode m : List.copyOf(context.mappings)) {
            for (Map.Entry<String, NodeTuple> e : m.entries.entrySet()) {
                if (!m.asked.contains(e.getKey())) {
                    String hint = suggestion(e.getKey(), m.asked);
                    problemAt(
                            e.getValue().getKeyNode(),
                            child(m.path, e.getKey()),
                            "unknown field" + (hint == null ? "" : "; did you mean '" + hint + "'?")
                                    + (m.asked.isEmpty()
                                            ? ""
                                            : " (known here: " + String.join(", ", new TreeSet<>(m.asked)) + ")"));
                }
            }
        }
        if (!context.problems.isEmpty()) {
            List<ConfigProblem> sorted = new ArrayList<>(context.problems);
            sorted.sort(java.util.Comparator.comparingInt(ConfigProblem::line).thenComparingInt(ConfigProblem::column));
            throw new ConfigException(sorted);
        }
    }

    private static String suggestion(String key, Set<String> known) {
        String best = null;
        int bestDistance = 3;
        for (String k : known) {
            if (k.equalsIgnoreCase(key)) return k;
            int d = distance(k.toLowerCase(Locale.ROOT), key.toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                bestDistance = d;
                best = k;
            }
        }
        return best;
    }

    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) prev[j] = j;
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    private static boolean isNull(Node n) {
        return n instanceof ScalarNode s && Tag.NULL.equals(s.getTag());
    }

    private static String kind(Node n) {
        if (n instanceof MappingNode) return "mapping";
        if (n instanceof SequenceNode) return "list";
        return "scalar";
    }

    private static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    @Override
    public String toString() {
        return location() + " " + path;
    }
}
