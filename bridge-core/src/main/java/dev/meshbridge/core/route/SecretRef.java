package dev.meshbridge.core.route;

import java.util.Objects;

/**
 * A Kubernetes Secret named by an Ingress TLS section.
 *
 * @param namespace the Ingress's namespace (a TLS secret is always in the Ingress's own namespace)
 * @param name the Secret's name
 */
public record SecretRef(String namespace, String name) implements Comparable<SecretRef> {

    public SecretRef {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
    }

    @Override
    public int compareTo(SecretRef o) {
        int c = namespace.compareTo(o.namespace);
        return c != 0 ? c : name.compareTo(o.name);
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }
}
