package dev.meshbridge.core.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A credential from the configuration, never printed. In {@code bridge.yaml} it is written as a plain string, as
 * {@code {env: NAME}} (an environment variable), as {@code {file: /path}} (a file, trailing newline removed) or as
 * {@code {secret: {name: N, key: K, namespace: NS}}} (a key of a Kubernetes Secret, read through the reader the app
 * installs in {@link KubernetesSecrets}; trailing newline removed). Files and Secrets are read each time the
 * credential is resolved, so a rotated value is picked up on the next (re)connect.
 */
public final class Secret {

    /** Where the value comes from. */
    public enum Source {
        LITERAL,
        ENV,
        FILE,
        KUBERNETES
    }

    private final Source source;
    private final String ref;
    /** For {@link Source#KUBERNETES}: the Secret's namespace (null: the bridge's own), name and key. */
    private final String namespace;

    private final String name;
    private final String key;

    private Secret(Source source, String ref) {
        this(source, ref, null, null, null);
    }

    private Secret(Source source, String ref, String namespace, String name, String key) {
        this.source = Objects.requireNonNull(source);
        this.ref = Objects.requireNonNull(ref);
        this.namespace = namespace;
        this.name = name;
        this.key = key;
    }

    public static Secret literal(String value) {
        return new Secret(Source.LITERAL, value);
    }

    public static Secret env(String name) {
        return new Secret(Source.ENV, name);
    }

    public static Secret file(Path path) {
        return new Secret(Source.FILE, path.toString());
    }

    /**
     * The value of {@code key} in the Kubernetes Secret {@code namespace/name}.
     *
     * @param namespace the Secret's namespace; null for the bridge's own (see {@link KubernetesSecrets})
     */
    public static Secret kubernetes(String namespace, String name, String key) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(key, "key");
        return new Secret(
                Source.KUBERNETES, (namespace == null ? "" : namespace) + "/" + name + "#" + key, namespace, name, key);
    }

    /** For a Kubernetes Secret reference: its namespace, or empty for the bridge's own. */
    public java.util.Optional<String> kubernetesNamespace() {
        return java.util.Optional.ofNullable(namespace);
    }

    public Source source() {
        return source;
    }

    /** The value now. */
    public String resolve() {
        return switch (source) {
            case LITERAL -> ref;
            case ENV -> {
                String v = System.getenv(ref);
                if (v == null) throw new IllegalStateException("environment variable " + ref + " is not set");
                yield v;
            }
            case FILE -> {
                try {
                    yield Files.readString(Path.of(ref), StandardCharsets.UTF_8).stripTrailing();
                } catch (IOException e) {
                    throw new IllegalStateException("cannot read secret file " + ref + ": " + e.getMessage(), e);
                }
            }
            case KUBERNETES -> KubernetesSecrets.read(namespace, name, key).stripTrailing();
        };
    }

    /**
     * Where the value is, safe to log: {@code env:NAME}, {@code file:/path}, {@code Kubernetes Secret ns/name key k}
     * (namespace {@code <bridge namespace>} when not given) or {@code <inline>}.
     */
    public String describe() {
        return switch (source) {
            case LITERAL -> "<inline>";
            case ENV -> "env:" + ref;
            case FILE -> "file:" + ref;
            case KUBERNETES ->
                "Kubernetes Secret " + (namespace == null ? "<bridge namespace>" : namespace) + "/" + name + " key "
                        + key;
        };
    }

    @Override
    public String toString() {
        return describe();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Secret s && s.source == source && s.ref.equals(ref);
    }

    @Override
    public int hashCode() {
        return Objects.hash(source, ref);
    }
}
