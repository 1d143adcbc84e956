package dev.meshbridge.ads;

import com.google.protobuf.Any;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.WireFormat;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A state-of-the-world response on its way to gRPC's framer: the fields of a {@code DiscoveryResponse}, where a
 * resource held packed ({@link Resource#packedValue()}) stays packed until the response is written, and is then
 * unpacked piece by piece into the transport's buffers through one scratch array. A whole-set push to istiod at a
 * million endpoints is 197 MB of such values: made as Anys first, they were as much garbage again, alive (and copied
 * by young collections) for as long as the response took to build and write.
 *
 * <p>Written, it is byte for byte what protobuf serializes from {@link #toDiscoveryResponse()} (fields in number order:
 * {@code version_info}, {@code resources}, {@code type_url}, {@code nonce}; empty ones left out). Built and written by
 * one thread (the serving thread), once.
 */
final class SotwResponse {

    /** Unpacked values up to this size go through the writing thread's scratch array; larger ones get their own. */
    static final int SCRATCH_BYTES = 64 * 1024;

    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[SCRATCH_BYTES]);

    private final String versionInfo;
    private final String typeUrl;
    private final String nonce;
    /** Each an {@link Any}, or a {@link Resource} with a packed value. */
    private final Object[] resources;
    /** The serialized size of each resource's Any. */
    private final int[] anySizes;

    private final int size;

    private SotwResponse(String versionInfo, String typeUrl, String nonce, Object[] resources, int[] anySizes) {
        this.versionInfo = versionInfo;
        this.typeUrl = typeUrl;
        this.nonce = nonce;
        this.resources = resources;
        this.anySizes = anySizes;
        long n = stringSize(DiscoveryResponse.VERSION_INFO_FIELD_NUMBER, versionInfo)
                + stringSize(DiscoveryResponse.TYPE_URL_FIELD_NUMBER, typeUrl)
                + stringSize(DiscoveryResponse.NONCE_FIELD_NUMBER, nonce);
        int tag = CodedOutputStream.computeTagSize(DiscoveryResponse.RESOURCES_FIELD_NUMBER);
        for (int s : anySizes) n += tag + CodedOutputStream.computeUInt32SizeNoTag(s) + s;
        // protobuf's own limit; gRPC's framer refuses what does not fit its int length either
        if (n > Integer.MAX_VALUE) throw new IllegalStateException("response of " + n + " bytes");
        this.size = (int) n;
    }

    /** Collects a response's resources in the order they are sent. */
    static final class Builder {
        private final String typeUrl;
        private final List<Object> resources = new ArrayList<>();
        private int[] anySizes = new int[16];
        // the type URL every resource of a type shares, measured once
        private String lastUrl;
        private int lastUrlSize;

        Builder(String typeUrl) {
            this.typeUrl = typeUrl;
        }

        /** Adds a resource made as an Any. */
        Builder add(Any any) {
            return add(any, any.getSerializedSize());
        }

        /** Adds a resource held packed ({@link Resource#packedValue()} not null), unpacked when written. */
        Builder addPacked(Resource r) {
            int value = PackedBytes.unpackedSize(r.packedValue());
            String url = r.anyTypeUrl();
            if (url != lastUrl) {
                lastUrl = url;
                lastUrlSize = stringSize(Any.TYPE_URL_FIELD_NUMBER, url);
            }
            int any = lastUrlSize
                    + (value == 0
                            ? 0
                            : CodedOutputStream.computeTagSize(Any.VALUE_FIELD_NUMBER)
                                    + CodedOutputStream.computeUInt32SizeNoTag(value)
                                    + value);
            return add(r, any);
        }

        private Builder add(Object resource, int anySize) {
            int i = resources.size();
            if (i == anySizes.length) anySizes = java.util.Arrays.copyOf(anySizes, 2 * i);
            anySizes[i] = anySize;
            resources.add(resource);
            return this;
        }

        int count() {
            return resources.size();
        }

        SotwResponse build(String versionInfo, String nonce) {
            int n = resources.size();
            return new SotwResponse(
                    versionInfo, typeUrl, nonce, resources.toArray(), java.util.Arrays.copyOf(anySizes, n));
        }
    }

    /** The size of the serialized response. */
    int serializedSize() {
        return size;
    }

    int resourceCount() {
        return resources.length;
    }

    String nonce() {
        return nonce;
    }

    /** Writes the serialized response ({@link #serializedSize()} bytes) into {@code target}. */
    void writeTo(OutputStream target) throws IOException {
        CodedOutputStream out = CodedOutputStream.newInstance(target, Math.min(SCRATCH_BYTES, Math.max(size, 1)));
        writeTo(out);
        out.flush();
    }

    /** Writes the serialized response into {@code out}. */
    void writeTo(CodedOutputStream out) throws IOException {
        if (!versionInfo.isEmpty()) out.writeString(DiscoveryResponse.VERSION_INFO_FIELD_NUMBER, versionInfo);
        byte[] scratch = SCRATCH.get();
        for (int i = 0; i < resources.length; i++) {
            out.writeTag(DiscoveryResponse.RESOURCES_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            out.writeUInt32NoTag(anySizes[i]);
            if (resources[i] instanceof Any any) {
                any.writeTo(out);
                continue;
            }
            Resource r = (Resource) resources[i];
            byte[] packed = r.packedValue();
            int value = PackedBytes.unpackedSize(packed);
            String url = r.anyTypeUrl();
            if (!url.isEmpty()) out.writeString(Any.TYPE_URL_FIELD_NUMBER, url);
            if (value == 0) continue;
            out.writeTag(Any.VALUE_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            out.writeUInt32NoTag(value);
            if (value <= scratch.length) {
                PackedBytes.unpackInto(packed, r.packedWith(), scratch, 0);
                out.writeRawBytes(scratch, 0, value);
            } else {
                out.writeRawBytes(PackedBytes.unpack(packed, r.packedWith()));
            }
        }
        if (!typeUrl.isEmpty()) out.writeString(DiscoveryResponse.TYPE_URL_FIELD_NUMBER, typeUrl);
        if (!nonce.isEmpty()) out.writeString(DiscoveryResponse.NONCE_FIELD_NUMBER, nonce);
    }

    /** The serialized response as one array (for a reader that does not drain it into a frame). */
    byte[] toByteArray() throws IOException {
        byte[] bytes = new byte[size];
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        writeTo(out);
        out.checkNoSpaceLeft();
        return bytes;
    }

    /** The same response as a protobuf message, every resource made as its Any. */
    DiscoveryResponse toDiscoveryResponse() {
        DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
                .setVersionInfo(versionInfo)
                .setTypeUrl(typeUrl)
                .setNonce(nonce);
        for (Object o : resources) {
            if (o instanceof Any any) {
                b.addResources(any);
            } else {
                Resource r = (Resource) o;
                b.addResources(Any.newBuilder()
                        .setTypeUrl(r.anyTypeUrl())
                        .setValue(
                                UnsafeByteOperations.unsafeWrap(PackedBytes.unpack(r.packedValue(), r.packedWith()))));
            }
        }
        return b.build();
    }

    private static int stringSize(int field, String s) {
        return s.isEmpty() ? 0 : CodedOutputStream.computeStringSize(field, s);
    }
}
