package dev.meshbridge.core.config;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The seam through which a {@code {secret: {name, key, namespace}}} credential reaches a Kubernetes cluster, so that
 * registries resolve such a credential with {@link Secret#resolve()} and never depend on a Kubernetes client. The app
 * installs a cluster-backed {@link Reader} when its Kubernetes source is on and removes it on shutdown; without one,
 * resolving such a credential fails with a message that says so.
 *
 * <p>One reader per process: a bridge talks to one cluster.
 */
public final class KubernetesSecrets {

    /** Reads Secrets of the cluster, each time it is asked (no cache: a rotated Secret is used at the next read). */
    public interface Reader {

        /** The namespace of a Secret reference that names none: the bridge's own. */
        String defaultNamespace();

        /**
         * The value of {@code key} in the Secret {@code namespace/name} now.
         *
         * @throws IllegalStateException when the Secret or the key is missing or cannot be read; the message names the
         *     Secret and the key, never a value
         */
        String read(String namespace, String name, String key);
    }

    private static final AtomicReference<Reader> installed = new AtomicReference<>();

    private KubernetesSecrets() {}

    /**
     * Makes {@code reader} the one {@link Secret}s read through; closing the result removes it (if still installed).
     */
    public static AutoCloseable install(Reader reader) {
        Objects.requireNonNull(reader, "reader");
        installed.set(reader);
        return () -> installed.compareAndSet(reader, null);
    }

    /** True when a reader is installed (the Kubernetes source is on). */
    public static boolean available() {
        return installed.get() != null;
    }

    static String read(String namespace, String name, String key) {
        Reader r = installed.get();
        String where = (namespace == null ? "" : namespace + "/") + name + " key " + key;
        if (r == null) {
            throw new IllegalStateException(
                    "cannot read Kubernetes Secret " + where + ": the Kubernetes source is off (ingress.kubernetes)");
        }
        String value = r.read(namespace == null ? r.defaultNamespace() : namespace, name, key);
        if (value == null) throw new IllegalStateException("Kubernetes Secret " + where + " has no value");
        return value;
    }
}
