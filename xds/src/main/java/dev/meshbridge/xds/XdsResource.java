package dev.meshbridge.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.util.Objects;

/**
 * One translated xDS resource, serialized once: every client that receives it gets these bytes.
 *
 * @param type its type
 * @param name its name (see {@link XdsNames})
 * @param versionHash content hash of type, name and bytes; never 0 or {@code Long.MIN_VALUE}
 * @param any the serialized resource
 * @param wildcard true when a wildcard subscription includes it (the resources made for proxyless gRPC clients, API
 *     listeners, their routes and the {@code grpc|...} clusters and load assignments, are only sent to clients that
 *     ask for them by name)
 * @param delta the same resource wrapped for Delta responses (name, version, resource)
 */
public record XdsResource(XdsType type, String name, long versionHash, Any any, boolean wildcard, Resource delta)
        implements dev.meshbridge.ads.Resource {

    public XdsResource {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(any, "any");
        Objects.requireNonNull(delta, "delta");
        if (versionHash == 0 || versionHash == Long.MIN_VALUE) {
            throw new IllegalArgumentException("version hashes 0 and Long.MIN_VALUE are reserved");
        }
    }

    /** The version as sent to clients: 16 hex digits of {@link #versionHash()}. */
    public String version() {
        return delta.getVersion();
    }

    /** Serialized size of the resource itself, in bytes. */
    public int size() {
        return any.getValue().size();
    }
}
