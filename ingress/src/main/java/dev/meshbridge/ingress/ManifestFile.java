package dev.meshbridge.ingress;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressClass;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
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
 * One YAML file of the directory source: multi-document YAML holding Ingresses, IngressClasses and Secrets (also
 * inside a {@code kind: List}, as {@code kubectl get -o yaml} writes), checked as a whole so that a file is either
 * accepted or refused with every problem located by line.
 *
 * <p>Checks: YAML syntax; each document a Kubernetes object with {@code apiVersion}, {@code kind} and {@code
 * metadata.name}; Ingresses and IngressClasses of {@code networking.k8s.io/v1}; every Ingress translates (see {@link
 * IngressTranslator}); a Secret that carries {@code tls.crt} or {@code tls.key} holds usable PEM; no object twice.
 * Documents of other kinds are ignored and named in {@link Parsed#ignored()}.
 */
final class ManifestFile {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final Pattern FIELD = Pattern.compile("([^.\\[\\]]+)|\\[([^\\]]+)\\]");

    /** What an accepted file holds. */
    record Parsed(List<Ingress> ingresses, List<IngressClass> classes, List<Secret> secrets, List<String> ignored) {}

    /** A refused file: every problem as {@code file:line: field: message}. */
    static final class RefusedException extends Exception {
        private final List<String> problems;

        RefusedException(List<String> problems) {
            super(String.join("\n", problems));
            this.problems = List.copyOf(problems);
        }

        List<String> problems() {
            return problems;
        }
    }

    /** Constructs plain maps, lists and scalars; timestamps stay strings, as the Kubernetes API has them. */
    private static final class PlainConstructor extends SafeConstructor {
        PlainConstructor(LoaderOptions options) {
            super(options);
            yamlConstructors.put(Tag.TIMESTAMP, new ConstructYamlStr());
        }

        Object construct(Node node) {
            return constructDocument(node);
        }
    }

    private ManifestFile() {}

    static Parsed parse(String file, String text, IngressTranslator translator) throws RefusedException {
        LoaderOptions options = new LoaderOptions();
        options.setMaxAliasesForCollections(50);
        options.setAllowDuplicateKeys(false);
        List<Node> documents = new ArrayList<>();
        try {
            for (Node n : new Yaml(options).composeAll(new StringReader(text))) documents.add(n);
        } catch (MarkedYAMLException e) {
            Mark m = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            throw new RefusedException(
                    List.of(file + ":" + (m == null ? 0 : m.getLine() + 1) + ": YAML syntax: " + e.getProblem()));
        } catch (YAMLException e) {
            throw new RefusedException(List.of(file + ": YAML: " + e.getMessage()));
        }
        List<String> problems = new ArrayList<>();
        List<Ingress> ingresses = new ArrayList<>();
        List<IngressClass> classes = new ArrayList<>();
        List<Secret> secrets = new ArrayList<>();
        List<String> ignored = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        List<Node> objects = new ArrayList<>();
        for (Node doc : documents) {
            if (doc instanceof ScalarNode s
                    && (Tag.NULL.equals(s.getTag()) || s.getValue().isBlank())) continue;
            if (doc instanceof MappingNode m && "List".equals(scalar(m, "kind"))) {
                Node items = child(m, "items");
                if (items instanceof SequenceNode seq) objects.addAll(seq.getValue());
                continue;
            }
            objects.add(doc);
        }
        PlainConstructor constructor = new PlainConstructor(options);
        for (Node node : objects) {
            String at = file + ":" + line(node) + ": ";
            if (!(node instanceof MappingNode m)) {
                problems.add(at + "each document must be a Kubernetes object (a mapping with apiVersion and kind)");
                continue;
            }
            String apiVersion = scalar(m, "apiVersion");
            String kind = scalar(m, "kind");
            if (apiVersion == null || kind == null) {
                problems.add(at + "a Kubernetes object needs apiVersion and kind");
                continue;
            }
            Class<? extends HasMetadata> type = type(apiVersion, kind);
            if (type == null) {
                if (kind.equals("Ingress") || kind.equals("IngressClass")) {
                    problems.add(at + kind + " " + apiVersion + " is not read; write apiVersion: networking.k8s.io/v1");
                } else {
                    ignored.add(kind + " " + scalar(child(m, "metadata"), "name"));
                }
                continue;
            }
            String name = scalar(child(m, "metadata"), "name");
            if (name == null || name.isEmpty()) {
                problems.add(at + "metadata.name: required");
                continue;
            }
            HasMetadata object;
            try {
                object = SERIALIZATION.convertValue(constructor.construct(node), type);
            } catch (MarkedYAMLException e) {
                Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
                problems.add(file + ":" + (mark == null ? line(node) : mark.getLine() + 1) + ": " + kind + " " + name
                        + ": " + e.getProblem());
                continue;
            } catch (RuntimeException e) {
                problems.add(at + kind + " " + name + " does not read as a " + apiVersion + " " + kind + ": "
                        + firstLine(e.getMessage()));
                continue;
            }
            String ns = object.getMetadata().getNamespace();
            if (ns == null || ns.isEmpty()) {
                if (object instanceof IngressClass) ns = "";
                else object.getMetadata().setNamespace(ns = "default");
            }
            if (!seen.add(kind + " " + ns + "/" + name)) {
                problems.add(at + kind + " " + (ns.isEmpty() ? "" : ns + "/") + name + " appears twice in this file");
                continue;
            }
            switch (object) {
                case Ingress ingress -> {
                    IngressTranslator.Translation t = translator.translate(ingress);
                    for (IngressTranslator.Problem p : t.problems()) {
                        problems.add(
                                file + ":" + line(locate(node, p.field())) + ": Ingress " + ns + "/" + name + ": " + p);
                    }
                    ingresses.add(ingress);
                }
                case IngressClass c -> classes.add(c);
                case Secret s -> {
                    if (hasTlsKeys(s)) {
                        TlsSecrets.Result r = TlsSecrets.read(s);
                        if (r.problem() != null) problems.add(at + r.problem());
                    }
                    secrets.add(s);
                }
                default -> throw new IllegalStateException(kind);
            }
        }
        if (!problems.isEmpty()) throw new RefusedException(problems);
        return new Parsed(List.copyOf(ingresses), List.copyOf(classes), List.copyOf(secrets), List.copyOf(ignored));
    }

    private static boolean hasTlsKeys(Secret s) {
        Set<String> keys = new TreeSet<>();
        if (s.getData() != null) keys.addAll(s.getData().keySet());
        if (s.getStringData() != null) keys.addAll(s.getStringData().keySet());
        return keys.contains(TlsSecrets.CERT) || keys.contains(TlsSecrets.KEY);
    }

    private static Class<? extends HasMetadata> type(String apiVersion, String kind) {
        return switch (apiVersion + " " + kind) {
            case "networking.k8s.io/v1 Ingress" -> Ingress.class;
            case "networking.k8s.io/v1 IngressClass" -> IngressClass.class;
            case "v1 Secret" -> Secret.class;
            default -> null;
        };
    }

    /**
     * The node at a field path such as {@code spec.rules[0].http.paths[1].backend} or {@code
     * metadata.annotations[higress.io/destination]}: the deepest node that exists on the way.
     */
    static Node locate(Node root, String field) {
        Node at = root;
        Matcher m = FIELD.matcher(field);
        while (m.find()) {
            String key = m.group(1) != null ? m.group(1) : m.group(2);
            Node next = null;
            if (at instanceof MappingNode map) {
                next = child(map, key);
            } else if (at instanceof SequenceNode seq && key.matches("\\d+")) {
                int i = Integer.parseInt(key);
                if (i < seq.getValue().size()) next = seq.getValue().get(i);
            }
            if (next == null) return at;
            at = next;
        }
        return at;
    }

    private static Node child(Node node, String key) {
        if (!(node instanceof MappingNode m)) return null;
        for (NodeTuple t : m.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) return t.getValueNode();
        }
        return null;
    }

    private static String scalar(Node node, String key) {
        return child(node, key) instanceof ScalarNode s ? s.getValue() : null;
    }

    static int line(Node node) {
        return node == null || node.getStartMark() == null
                ? 0
                : node.getStartMark().getLine() + 1;
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** For messages: how many objects of each kind. */
    static String summary(Parsed p) {
        return p.ingresses().size() + " Ingress, " + p.classes().size() + " IngressClass, "
                + p.secrets().size() + " Secret" + (p.ignored().isEmpty() ? "" : ", ignored: " + p.ignored());
    }
}
