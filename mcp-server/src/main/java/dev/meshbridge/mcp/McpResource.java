package dev.meshbridge.mcp;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import com.google.protobuf.UnsafeByteOperations;
import dev.meshbridge.core.util.Hash64;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Metadata;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One Istio resource as the bridge serves it over MCP, before its creation time is attached.
 *
 * @param kind what it is
 * @param namespace its namespace
 * @param name its name in the namespace
 * @param version content hash of everything here: equal content, equal version, in every bridge replica
 * @param labels metadata labels
 * @param body the Istio message ({@code istio.networking.v1alpha3.*}) as an Any, serialized deterministically
 * @param host the catalog host it was made from
 */
public record McpResource(
        McpKind kind,
        String namespace,
        String name,
        String version,
        SortedMap<String, String> labels,
        Any body,
        String host) {

    /** The Any type URL of every resource on the wire. */
    public static final String RESOURCE_TYPE_URL =
            "type.googleapis.com/" + Resource.getDescriptor().getFullName();

    public McpResource {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
        labels = Collections.unmodifiableSortedMap(new TreeMap<>(labels));
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(host, "host");
    }

    /** Makes a resource and computes its version from its content. */
    public static McpResource of(
            McpKind kind, String namespace, String name, Map<String, String> labels, Message body, String host) {
        Any any = pack(body);
        SortedMap<String, String> sorted = new TreeMap<>(labels);
        Hash64 h = new Hash64().putString(kind.kind()).putString(namespace).putString(name);
        h.putInt(sorted.size());
        sorted.forEach((k, v) -> h.putString(k).putString(v));
        h.putString(any.getTypeUrl());
        putBytes(h, any.getValue());
        return new McpResource(kind, namespace, name, h.hex(), sorted, any, host);
    }

    /** {@code namespace/name}, as MCP names resources. */
    public String fullName() {
        return namespace + "/" + name;
    }

    /** The {@code istio.mcp.v1alpha1.Resource} istiod receives. */
    public Resource toResource(Timestamp createTime) {
        return Resource.newBuilder()
                .setMetadata(Metadata.newBuilder()
                        .setName(fullName())
                        .setCreateTime(createTime)
                        .setVersion(version)
                        .putAllLabels(labels))
                .setBody(body)
                .build();
    }

    /** {@link #toResource} as the Any that goes into a discovery response. */
    public Any toAny(Timestamp createTime) {
        return pack(toResource(createTime));
    }

    /** Packs a message with deterministic serialization (map entries sorted), so equal content gives equal bytes. */
    static Any pack(Message message) {
        return Any.newBuilder()
                .setTypeUrl(
                        "type.googleapis.com/" + message.getDescriptorForType().getFullName())
                .setValue(deterministicBytes(message))
                .build();
    }

    static ByteString deterministicBytes(Message message) {
        byte[] bytes = new byte[message.getSerializedSize()];
        CodedOutputStream coded = CodedOutputStream.newInstance(bytes);
        coded.useDeterministicSerialization();
        try {
            message.writeTo(coded);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        coded.checkNoSpaceLeft();
        return UnsafeByteOperations.unsafeWrap(bytes); // the array is never touched again
    }

    private static void putBytes(Hash64 h, ByteString bytes) {
        int n = bytes.size();
        h.putInt(n);
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            h.putInt((bytes.byteAt(i) & 0xff)
                    | (bytes.byteAt(i + 1) & 0xff) << 8
                    | (bytes.byteAt(i + 2) & 0xff) << 16
                    | (bytes.byteAt(i + 3) & 0xff) << 24);
        }
        for (; i < n; i++) h.putInt(bytes.byteAt(i));
    }
}
