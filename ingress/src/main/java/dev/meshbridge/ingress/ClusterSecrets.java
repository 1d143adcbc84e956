package dev.meshbridge.ingress;

import dev.meshbridge.core.config.KubernetesSecrets;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The {@link KubernetesSecrets.Reader} of a cluster: one {@code get} of the Secret each time a credential is resolved
 * (a registry's connect or reconnect), so a rotated Secret is used from the next session on. Needs {@code get} on
 * {@code secrets} in the namespaces the references name (the chart grants it in the bridge's own namespace). Errors
 * name the Secret and the key and, for a missing key, the keys the Secret has; never a value.
 */
public final class ClusterSecrets implements KubernetesSecrets.Reader, AutoCloseable {

    /** Bounds one read: a registry (re)connects on the thread that reads, so an unreachable API server must not hold it. */
    static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** A missing key's message names at most this many of the keys the Secret has. */
    static final int MAX_KEYS_NAMED = 16;

    private final KubernetesClient client;
    private final String defaultNamespace;

    /**
     * @param cluster the cluster's client, whose configuration (address, credentials) this reader's own client copies
     *     with bounded timeouts and a single retry; it is not closed here
     * @param defaultNamespace the namespace of references that name none; null for the client's (the service
     *     account's namespace in a pod, the kubeconfig context's elsewhere), else {@code default}
     */
    public ClusterSecrets(KubernetesClient cluster, String defaultNamespace) {
        Objects.requireNonNull(cluster, "cluster");
        Config bounded = new ConfigBuilder(cluster.getConfiguration())
                .withRequestTimeout((int) TIMEOUT.toMillis())
                .withConnectionTimeout((int) TIMEOUT.toMillis())
                .withRequestRetryBackoffLimit(1)
                .build();
        this.client = new KubernetesClientBuilder().withConfig(bounded).build();
        String ns = defaultNamespace != null ? defaultNamespace : cluster.getNamespace();
        this.defaultNamespace = ns == null || ns.isBlank() ? "default" : ns;
    }

    @Override
    public void close() {
        client.close();
    }

    @Override
    public String defaultNamespace() {
        return defaultNamespace;
    }

    @Override
    public String read(String namespace, String name, String key) {
        String where = "Kubernetes Secret " + namespace + "/" + name;
        Secret secret;
        try {
            secret = client.secrets().inNamespace(namespace).withName(name).get();
        } catch (KubernetesClientException e) {
            String why = e.getCode() == 403
                    ? "forbidden (the bridge's service account needs get on secrets in " + namespace + ")"
                    : e.getCode() > 0 ? "HTTP " + e.getCode() : "API server unreachable";
            throw new IllegalStateException("cannot read " + where + ": " + why);
        }
        if (secret == null) throw new IllegalStateException(where + " does not exist (key " + key + ")");
        String value;
        try {
            value = TlsSecrets.value(secret, key);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where + ": " + e.getMessage());
        }
        if (value == null) {
            TreeSet<String> keys = new TreeSet<>();
            Map<String, String> data = secret.getData();
            if (data != null) keys.addAll(data.keySet());
            if (secret.getStringData() != null)
                keys.addAll(secret.getStringData().keySet());
            String listed = keys.isEmpty()
                    ? "none"
                    : String.join(", ", keys.stream().limit(MAX_KEYS_NAMED).toList())
                            + (keys.size() > MAX_KEYS_NAMED ? ", ..." : "");
            throw new IllegalStateException(where + " has no key " + key + " (keys: " + listed + ")");
        }
        return value;
    }
}
