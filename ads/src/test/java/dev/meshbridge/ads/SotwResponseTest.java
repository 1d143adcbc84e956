package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Drainable;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A SotW response whose packed resources are unpacked only while it is written is, byte for byte, the {@code
 * DiscoveryResponse} protobuf makes of the same fields with every resource made as its Any: for values empty, small,
 * larger than the scratch array and the marshaller's buffer, mixed with resources carried as made Anys, for any type
 * URL, version and nonce (empty ones included), drained by gRPC's framer or read as a stream.
 */
class SotwResponseTest {

    private static final PackedBytes.Dictionary DICTIONARY =
            PackedBytes.Dictionary.of("type.googleapis.com/istio.mcp.v1alpha1.Resource", "networking.istio.io");

    /** A resource held packed, as the MCP server's are. */
    record Packed(String name, String anyTypeUrl, byte[] packedValue) implements Resource {
        @Override
        public long versionHash() {
            return 1;
        }

        @Override
        public Any any() {
            throw new AssertionError("a packed resource is never made as an Any in a SotW response");
        }

        @Override
        public io.envoyproxy.envoy.service.discovery.v3.Resource delta() {
            throw new AssertionError();
        }

        @Override
        public boolean wildcard() {
            return true;
        }

        @Override
        public PackedBytes.Dictionary packedWith() {
            return DICTIONARY;
        }
    }

    private static final MethodDescriptor.Marshaller<Object> MARSHALLER = marshaller();

    @SuppressWarnings("unchecked")
    private static MethodDescriptor.Marshaller<Object> marshaller() {
        return (MethodDescriptor.Marshaller<Object>) ResponseMarshaller.wrap(
                        new AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase() {}.bindService())
                .getMethod("envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources")
                .getMethodDescriptor()
                .getResponseMarshaller();
    }

    /** The response as the engine made it before: every resource an Any with its unpacked value, built by protobuf. */
    private static void sameAsProtobuf(
            String typeUrl, String version, String nonce, List<Object> resources, List<byte[]> values)
            throws Exception {
        PackedBytes packer = new PackedBytes(DICTIONARY);
        SotwResponse.Builder b = new SotwResponse.Builder(typeUrl);
        DiscoveryResponse.Builder want = DiscoveryResponse.newBuilder()
                .setTypeUrl(typeUrl)
                .setVersionInfo(version)
                .setNonce(nonce);
        for (int i = 0; i < resources.size(); i++) {
            if (resources.get(i) instanceof Any any) {
                b.add(any);
                want.addResources(any);
            } else {
                String url = (String) resources.get(i);
                byte[] value = values.get(i);
                b.addPacked(new Packed("r" + i, url, packer.pack(value, value.length)));
                want.addResources(Any.newBuilder().setTypeUrl(url).setValue(ByteString.copyFrom(value)));
            }
        }
        SotwResponse r = b.build(version, nonce);
        byte[] expected = want.build().toByteArray();
        assertThat(r.serializedSize()).isEqualTo(expected.length);
        assertThat(r.resourceCount()).isEqualTo(resources.size());
        assertThat(r.toDiscoveryResponse().toByteArray()).isEqualTo(expected);

        // drained into a frame, as gRPC's framer does
        InputStream in = MARSHALLER.stream(r);
        assertThat(in.available()).isEqualTo(expected.length);
        ByteArrayOutputStream drained = new ByteArrayOutputStream();
        assertThat(((Drainable) in).drainTo(drained)).isEqualTo(expected.length);
        assertThat(drained.toByteArray()).isEqualTo(expected);

        // read as a stream, a few bytes first
        if (expected.length == 0) return;
        InputStream read = MARSHALLER.stream(b.build(version, nonce));
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] first = new byte[Math.min(3, expected.length)];
        assertThat(read.read(first, 0, first.length)).isEqualTo(first.length);
        all.write(first);
        ((Drainable) read).drainTo(all);
        assertThat(all.toByteArray()).isEqualTo(expected);
    }

    @Test
    void packedResources_writtenAsProtobufWouldWriteTheirAnys() throws Exception {
        Random random = new Random(22);
        String mcp = "type.googleapis.com/istio.mcp.v1alpha1.Resource";
        int[][] shapes = {
            {0, 0},
            {1, 0},
            {1, 535},
            {3, 2_000},
            {40, 1_000},
            {1, SotwResponse.SCRATCH_BYTES},
            {2, SotwResponse.SCRATCH_BYTES + 1},
            {5, 200_000},
            {300, 100}
        };
        for (int[] shape : shapes) {
            List<Object> resources = new ArrayList<>();
            List<byte[]> values = new ArrayList<>();
            for (int i = 0; i < shape[0]; i++) {
                byte[] value = new byte[i % 7 == 6 ? 0 : shape[1]];
                // half repeats (packs small), half random
                for (int k = 0; k < value.length; k++) value[k] = (byte) (k % 2 == 0 ? k % 13 : random.nextInt());
                if (i % 5 == 4) {
                    resources.add(Any.newBuilder()
                            .setTypeUrl(mcp)
                            .setValue(ByteString.copyFrom(value))
                            .build());
                } else {
                    resources.add(i % 11 == 10 ? "" : i % 3 == 2 ? "type.googleapis.com/ünïcode.Thing" : mcp);
                }
                values.add(value);
            }
            sameAsProtobuf("networking.istio.io/v1/ServiceEntry", "0123456789abcdef", "1a", resources, values);
            sameAsProtobuf("", "", "", resources, values);
        }
    }

    @Test
    void unpackInto_refusesAnArrayTooSmall() {
        byte[] bytes = new byte[100];
        byte[] packed = new PackedBytes(DICTIONARY).pack(bytes, bytes.length);
        assertThatThrownBy(() -> PackedBytes.unpackInto(packed, DICTIONARY, new byte[120], 30))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }
}
