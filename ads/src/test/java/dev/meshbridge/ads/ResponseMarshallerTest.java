package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.Drainable;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Responses written through the scratch buffer are protobuf's own bytes, for messages below and above its size, drained
 * by gRPC's framer or read as a stream; requests are parsed as before.
 */
class ResponseMarshallerTest {

    private static final ServerServiceDefinition ADS = ResponseMarshaller.wrap(
            new AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase() {}.bindService());

    @SuppressWarnings("unchecked")
    private static <R> MethodDescriptor.Marshaller<R> responses(String method) {
        ServerMethodDefinition<?, ?> m = ADS.getMethod(method);
        return (MethodDescriptor.Marshaller<R>) m.getMethodDescriptor().getResponseMarshaller();
    }

    private static DiscoveryResponse sotw(int resources, int bodyBytes, long seed) {
        Random r = new Random(seed);
        DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
                .setTypeUrl("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment")
                .setVersionInfo(Long.toHexString(r.nextLong()))
                .setNonce(Long.toString(r.nextInt(1000), 36));
        for (int i = 0; i < resources; i++) {
            byte[] body = new byte[bodyBytes];
            r.nextBytes(body);
            b.addResources(Any.newBuilder()
                    .setTypeUrl("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment")
                    .setValue(ByteString.copyFrom(body)));
        }
        return b.build();
    }

    @Test
    void drainedResponses_areProtobufsBytes_belowAndAboveTheScratchBuffer() throws Exception {
        MethodDescriptor.Marshaller<DiscoveryResponse> m =
                responses("envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources");
        for (int[] shape : new int[][] {{0, 0}, {1, 535}, {3, 5_000}, {40, 1_000}, {1, 20_000}}) {
            DiscoveryResponse r = sotw(shape[0], shape[1], shape[0] * 31L + shape[1]);
            InputStream in = m.stream(r);
            assertThat(in.available()).isEqualTo(r.getSerializedSize());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int n = ((Drainable) in).drainTo(out);
            assertThat(n).isEqualTo(r.getSerializedSize());
            assertThat(out.toByteArray()).isEqualTo(r.toByteArray());
            assertThat(m.parse(new java.io.ByteArrayInputStream(out.toByteArray())))
                    .isEqualTo(r);
        }
    }

    @Test
    void aResponseReadAsAStream_givesTheSameBytes_andTheDeltaMethodIsWrappedToo() throws Exception {
        MethodDescriptor.Marshaller<DeltaDiscoveryResponse> m =
                responses("envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources");
        DeltaDiscoveryResponse r = DeltaDiscoveryResponse.newBuilder()
                .setTypeUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster")
                .setSystemVersionInfo("00ff")
                .setNonce("7")
                .addResources(Resource.newBuilder()
                        .setName("outbound|80||a.default.svc.cluster.local")
                        .setVersion("0123456789abcdef")
                        .setResource(sotw(1, 300, 5).getResources(0)))
                .addRemovedResources("gone")
                .build();
        InputStream in = m.stream(r);
        byte[] first = new byte[10];
        assertThat(in.read(first, 0, 10)).isEqualTo(10);
        ByteArrayOutputStream rest = new ByteArrayOutputStream();
        ((Drainable) in).drainTo(rest);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.write(first);
        all.write(rest.toByteArray());
        assertThat(all.toByteArray()).isEqualTo(r.toByteArray());
        assertThat(in.read()).isEqualTo(-1);
    }
}
