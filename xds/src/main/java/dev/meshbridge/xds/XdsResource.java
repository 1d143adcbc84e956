package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import dev.meshbridge.ads.PackedBytes;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One translated xDS resource, serialized once: every client that receives it gets these bytes.
 *
 * <p>A translator makes it with its bytes as they are; the server holds what it serves {@linkplain #packed packed}
 * ({@link PackedBytes}, with {@link XdsPacking#DICTIONARY}): a cluster, listener or route is the same configuration as
 * the next with another name, and a load assignment repeats its port, locality and per-endpoint wrapper bytes, so the
 * packed form keeps a fraction of them. A proxyless load assignment whose endpoints are the sidecar one's bytes (most
 * are: see {@link EnvoyTranslator#loadAssignment}) is held as a reference to that one: its own bytes differ only in
 * the cluster_name, its name. Every reader ({@link #value()}, {@link #any()}, {@link #delta()}) gets the unpacked
 * bytes, the same bytes; equality and {@link #versionHash()} are those of the bytes, however held.
 */
public final class XdsResource implements dev.meshbridge.ads.Resource {

    private static final XdsType[] TYPES = XdsType.values();
    private static final int WILDCARD = 0x80;

    // about six per service are held, so the type and the wildcard flag share a byte: 32 bytes, not 40
    private final byte typeAndWildcard; // the type's ordinal, and WILDCARD when a wildcard subscription includes it
    private final String name;
    private final long versionHash;
    /**
     * The bytes: a {@link ByteString} as made; a {@code byte[]} in {@link PackedBytes}' form; or the held load
     * assignment whose bytes these are but for the first field, which is this one's cluster_name (its name).
     */
    private final Object body;

    /**
     * @param type its type
     * @param name its name (see {@link XdsNames})
     * @param versionHash content hash of type, name and bytes; never 0 or {@code Long.MIN_VALUE}
     * @param value the serialized resource (the {@code value} of the {@link #any()} clients receive)
     * @param wildcard true when a wildcard subscription includes it (the resources made for proxyless gRPC clients,
     *     API listeners, their routes and the {@code grpc|...} clusters and load assignments, are only sent to clients
     *     that ask for them by name)
     */
    public XdsResource(XdsType type, String name, long versionHash, ByteString value, boolean wildcard) {
        this(type, name, versionHash, (Object) Objects.requireNonNull(value, "value"), wildcard);
    }

    private XdsResource(XdsType type, String name, long versionHash, Object body, boolean wildcard) {
        this.typeAndWildcard = (byte) (Objects.requireNonNull(type, "type").ordinal() | (wildcard ? WILDCARD : 0));
        this.name = Objects.requireNonNull(name, "name");
        if (versionHash == 0 || versionHash == Long.MIN_VALUE) {
            throw new IllegalArgumentException("version hashes 0 and Long.MIN_VALUE are reserved");
        }
        this.versionHash = versionHash;
        this.body = body;
    }

    public XdsType type() {
        return TYPES[typeAndWildcard & (WILDCARD - 1)];
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long versionHash() {
        return versionHash;
    }

    @Override
    public boolean wildcard() {
        return (typeAndWildcard & WILDCARD) != 0;
    }

    /**
     * The serialized resource (the {@code value} of the {@link #any()} clients receive), unpacked at each call when
     * held packed.
     */
    public ByteString value() {
        if (body instanceof ByteString b) return b;
        // a new array at each call, never touched again
        return UnsafeByteOperations.unsafeWrap(bytes());
    }

    /** The bytes of a resource held otherwise than as made, in a new array. */
    private byte[] bytes() {
        if (body instanceof byte[] packed) return PackedBytes.unpack(packed, XdsPacking.DICTIONARY);
        XdsResource base = (XdsResource) body;
        return renamed(base.bytes(), base.name, name);
    }

    /**
     * A load assignment's bytes as the translators write them, whose cluster_name is {@code was}, with the cluster_name
     * {@code name} instead; the rest is copied as it is.
     */
    static byte[] renamed(byte[] bytes, String was, String name) {
        byte[] head = clusterNameField(name);
        int skip = clusterNameField(was).length;
        byte[] out = Arrays.copyOf(head, head.length + bytes.length - skip);
        System.arraycopy(bytes, skip, out, head.length, bytes.length - skip);
        return out;
    }

    /**
     * The same resource held packed, made on the serving thread with its packer; this one when it already is, or when
     * packing does not pay for it (fewer than {@link XdsPacking#MIN_SIZE} bytes, or a packed form that saves less than
     * a tenth).
     */
    XdsResource packed(PackedBytes packer) {
        if (!(body instanceof ByteString value) || value.size() < XdsPacking.MIN_SIZE) return this;
        byte[] p = packer.pack(value);
        if (p.length > value.size() - value.size() / 10) return this;
        return new XdsResource(type(), name, versionHash, p, wildcard());
    }

    /**
     * This load assignment held as a reference to another one, {@code held}, when its bytes are that one's but for the
     * first field, which is each one's cluster_name (its name); null when they are not, or when this one is not held
     * as made or that one not packed.
     *
     * @param made the other load assignment as made
     * @param held the same, as the server holds it
     */
    XdsResource sharing(XdsResource made, XdsResource held) {
        if (type() != XdsType.ENDPOINT || made.type() != XdsType.ENDPOINT || !made.name.equals(held.name)) return null;
        if (!(body instanceof ByteString own) || !(made.body instanceof ByteString other)) return null;
        if (!(held.body instanceof byte[]) || held.versionHash != made.versionHash) return null;
        ByteString head = UnsafeByteOperations.unsafeWrap(clusterNameField(name));
        ByteString otherHead = UnsafeByteOperations.unsafeWrap(clusterNameField(made.name));
        int rest = own.size() - head.size();
        if (rest < 0 || rest != other.size() - otherHead.size()) return null;
        if (!own.substring(0, head.size()).equals(head)
                || !other.substring(0, otherHead.size()).equals(otherHead)) return null;
        if (!own.substring(head.size()).equals(other.substring(otherHead.size()))) return null;
        return new XdsResource(type(), name, versionHash, held, wildcard());
    }

    /** A ClusterLoadAssignment's first field as the translators write it: cluster_name (field 1) = {@code name}. */
    private static byte[] clusterNameField(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[1 + 5 + utf8.length];
        out[0] = 0x0a;
        int at = PackedBytes.writeVarint(out, 1, utf8.length);
        System.arraycopy(utf8, 0, out, at, utf8.length);
        return Arrays.copyOf(out, at + utf8.length);
    }

    /** Whether the bytes are held packed (or as a reference to a packed load assignment). */
    boolean isPacked() {
        return !(body instanceof ByteString);
    }

    /** How many bytes of payload are held: the packed form's length, the size of the bytes as made, or none. */
    int heldSize() {
        if (body instanceof byte[] packed) return packed.length;
        return body instanceof ByteString b ? b.size() : 0;
    }

    /**
     * The resource as clients receive it: its type URL and {@link #value()}, made when a response needs it. Held for
     * every resource, the Any cost 40 bytes each (24 MB at a million endpoints) to save an allocation per response.
     */
    @Override
    public Any any() {
        return Any.newBuilder().setTypeUrl(type().typeUrl()).setValue(value()).build();
    }

    /** The version as sent to clients: 16 hex digits of {@link #versionHash()}. */
    public String version() {
        return Hash64.toHex(versionHash);
    }

    /**
     * The same resource wrapped for a Delta response (name, version, these bytes), made when a response needs it: held
     * for every resource, the wrapper and its version string cost about 120 bytes each, 70 MB at a million endpoints.
     */
    @Override
    public Resource delta() {
        return Resource.newBuilder()
                .setName(name)
                .setVersion(version())
                .setResource(any())
                .build();
    }

    /** Serialized size of the resource itself, in bytes. */
    public int size() {
        if (body instanceof byte[] packed) return PackedBytes.unpackedSize(packed);
        if (body instanceof ByteString b) return b.size();
        XdsResource base = (XdsResource) body;
        return clusterNameField(name).length + base.size() - clusterNameField(base.name).length;
    }

    /** Equal when type, name, version, wildcard and bytes are, however the bytes are held. */
    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof XdsResource r)) return false;
        if (typeAndWildcard != r.typeAndWildcard || versionHash != r.versionHash || !name.equals(r.name)) return false;
        // one dictionary in the process: equal bytes pack alike
        if (body instanceof byte[] a && r.body instanceof byte[] b) return Arrays.equals(a, b);
        return value().equals(r.value());
    }

    @Override
    public int hashCode() {
        return Objects.hash(type(), name, versionHash, wildcard());
    }

    @Override
    public String toString() {
        return "XdsResource[type=" + type() + ", name=" + name + ", versionHash=" + versionHash + ", value=" + value()
                + ", wildcard=" + wildcard() + "]";
    }
}
