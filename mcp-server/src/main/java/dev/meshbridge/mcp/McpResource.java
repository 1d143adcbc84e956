package dev.meshbridge.mcp;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import com.google.protobuf.UnsafeByteOperations;
import dev.meshbridge.core.util.CompactSortedMap;
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
 * One Istio resource as the bridge serves it over MCP, before its creation time is attached. Immutable.
 *
 * <p>Its parts: what it is ({@link #kind()}), where ({@link #namespace()}, {@link #name()}), its {@link #version()} (a
 * content hash of everything here: equal content, equal version, in every bridge replica), metadata {@link #labels()},
 * the Istio message as an {@code Any} serialized deterministically ({@link #body()}), and the catalog {@link #host()}
 * it was made from.
 */
public final class McpResource {

    /** The Any type URL of every resource on the wire. */
    public static final String RESOURCE_TYPE_URL =
            "type.googleapis.com/" + Resource.getDescriptor().getFullName();

    private final McpKind kind;
    private final String namespace;
    private final String name;
    private final String fullName;
    private final String version;
    private final SortedMap<String, String> labels;
    private final Any body;
    private final String host;

    private McpResource(
            McpKind kind,
            String namespace,
            String name,
            String version,
            SortedMap<String, String> labels,
            Any body,
            String host) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.name = Objects.requireNonNull(name, "name");
        this.fullName = namespace + "/" + name;
        this.version = Objects.requireNonNull(version, "version");
        this.labels = Collections.unmodifiableSortedMap(labels);
        this.body = Objects.requireNonNull(body, "body");
        this.host = Objects.requireNonNull(host, "host");
    }

    /** Makes a resource and computes its version from its content. */
    public static McpResource of(
            McpKind kind, String namespace, String name, Map<String, String> labels, Message body, String host) {
        return of(kind, namespace, name, labels, pack(body), host);
    }

    /**
     * Makes a resource of a message already serialized deterministically (the bytes {@link #pack} would make) and
     * computes its version from its content.
     */
    static McpResource of(
            McpKind kind,
            String namespace,
            String name,
            Map<String, String> labels,
            String messageType,
            ByteString bytes,
            String host) {
        Any any = Any.newBuilder()
                .setTypeUrl("type.googleapis.com/" + messageType)
                .setValue(bytes)
                .build();
        return of(kind, namespace, name, labels, any, host);
    }

    private static McpResource of(
            McpKind kind, String namespace, String name, Map<String, String> labels, Any any, String host) {
        // an immutable map in natural order is held as it is
        SortedMap<String, String> sorted = labels instanceof CompactSortedMap<String> c ? c : new TreeMap<>(labels);
        Hash64 h = new Hash64().putString(kind.kind()).putString(namespace).putString(name);
        h.putInt(sorted.size());
        sorted.forEach((k, v) -> h.putString(k).putString(v));
        h.putString(any.getTypeUrl());
        putBytes(h, any.getValue());
        return new McpResource(kind, namespace, name, h.hex(), sorted, any, host);
    }

    public McpKind kind() {
        return kind;
    }

    public String namespace() {
        return namespace;
    }

    public String name() {
        return name;
    }

    /** {@code namespace/name}, as MCP names resources. */
    public String fullName() {
        return fullName;
    }

    public String version() {
        return version;
    }

    public SortedMap<String, String> labels() {
        return labels;
    }

    /** The Istio message ({@code istio.networking.v1alpha3.*}). */
    public Any body() {
        return body;
    }

    /** The catalog host this resource was made from. */
    public String host() {
        return host;
    }

    @Override
    public String toString() {
        return kind.kind() + " " + fullName + " version=" + version;
    }

    /**
     * The {@code istio.mcp.v1alpha1.Resource} istiod receives.
     *
     * @param createTime the metadata's {@code create_time}; null leaves it unset (what the server sends, so that every
     *     replica sends the same bytes)
     */
    public Resource toResource(Timestamp createTime) {
        Metadata.Builder metadata =
                Metadata.newBuilder().setName(fullName()).setVersion(version).putAllLabels(labels);
        if (createTime != null) metadata.setCreateTime(createTime);
        return Resource.newBuilder().setMetadata(metadata).setBody(body).build();
    }

    /** {@link #toResource} as the Any that goes into a discovery response. */
    public Any toAny(Timestamp createTime) {
        if (createTime != null) return pack(toResource(createTime));
        return Any.newBuilder()
                .setTypeUrl(RESOURCE_TYPE_URL)
                .setValue(resourceBytes())
                .build();
    }

    /**
     * The bytes of {@code pack(toResource(null))}'s value, written directly: the body's bytes are copied once, not
     * serialized again through a {@code Resource} and its {@code Metadata} builder (what a change cost the serving
     * thread). Fields in number order, absent strings left out, every map entry with its key and value, labels sorted by
     * key: protobuf's deterministic serialization of the same message ({@code McpResourceTest} compares them).
     */
    ByteString resourceBytes() {
        return UnsafeByteOperations.unsafeWrap(resourceArray()); // the array is never touched again
    }

    /** {@link #resourceBytes()} as a new array of its own. */
    byte[] resourceArray() {
        int metadata = stringSize(1, fullName) + stringSize(3, version);
        for (Map.Entry<String, String> l : labels.entrySet()) {
            int entry = CodedOutputStream.computeStringSize(1, l.getKey())
                    + CodedOutputStream.computeStringSize(2, l.getValue());
            metadata += CodedOutputStream.computeTagSize(4) + CodedOutputStream.computeUInt32SizeNoTag(entry) + entry;
        }
        ByteString value = body.getValue();
        int any =
                stringSize(1, body.getTypeUrl()) + (value.isEmpty() ? 0 : CodedOutputStream.computeBytesSize(2, value));
        int total = CodedOutputStream.computeTagSize(1)
                + CodedOutputStream.computeUInt32SizeNoTag(metadata)
                + metadata
                + CodedOutputStream.computeTagSize(2)
                + CodedOutputStream.computeUInt32SizeNoTag(any)
                + any;
        byte[] bytes = new byte[total];
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        try {
            out.writeTag(1, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
            out.writeUInt32NoTag(metadata);
            writeString(out, 1, fullName);
            writeString(out, 3, version);
            for (Map.Entry<String, String> l : labels.entrySet()) {
                out.writeTag(4, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
                out.writeUInt32NoTag(CodedOutputStream.computeStringSize(1, l.getKey())
                        + CodedOutputStream.computeStringSize(2, l.getValue()));
                out.writeString(1, l.getKey());
                out.writeString(2, l.getValue());
            }
            out.writeTag(2, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
            out.writeUInt32NoTag(any);
            writeString(out, 1, body.getTypeUrl());
            if (!value.isEmpty()) out.writeBytes(2, value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.checkNoSpaceLeft();
        return bytes;
    }

    private static int stringSize(int field, String s) {
        return s.isEmpty() ? 0 : CodedOutputStream.computeStringSize(field, s);
    }

    private static void writeString(CodedOutputStream out, int field, String s) throws IOException {
        if (!s.isEmpty()) out.writeString(field, s);
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
        // four bytes at a time, little-endian, then the rest one by one (signed): the versions every release made
        java.nio.ByteBuffer in = bytes.asReadOnlyByteBuffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        h.putInt(in.remaining());
        while (in.remaining() >= 4) h.putInt(in.getInt());
        while (in.hasRemaining()) h.putInt(in.get());
    }
}
