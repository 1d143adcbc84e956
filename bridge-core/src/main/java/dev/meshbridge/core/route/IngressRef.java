package dev.meshbridge.core.route;

import java.time.Instant;
import java.util.Objects;

/**
 * Which Ingress a route or TLS entry comes from, and its age, which decides conflicts.
 *
 * <p>Order (used by {@link RouteTable} to resolve conflicts): older {@link #created()} first, then namespace, then
 * name, then source; the first one wins.
 *
 * @param source the source that read it: {@code kubernetes} for a cluster, {@code directory} for files
 * @param namespace the Ingress namespace
 * @param name the Ingress name
 * @param created its creation time ({@code metadata.creationTimestamp}; the epoch when a file gives none)
 */
public record IngressRef(String source, String namespace, String name, Instant created)
        implements Comparable<IngressRef> {

    public IngressRef {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(created, "created");
        if (name.isEmpty()) throw new IllegalArgumentException("Ingress name is empty");
    }

    /** {@code namespace/name}. */
    public String key() {
        return namespace + "/" + name;
    }

    @Override
    public int compareTo(IngressRef o) {
        int c = created.compareTo(o.created);
        if (c != 0) return c;
        c = namespace.compareTo(o.namespace);
        if (c != 0) return c;
        c = name.compareTo(o.name);
        return c != 0 ? c : source.compareTo(o.source);
    }

    @Override
    public String toString() {
        return key();
    }
}
