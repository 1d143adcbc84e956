package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A whole-set ServiceEntry response is written from the server's packed resources straight into gRPC's frames: the bytes
 * a real grpc-java client receives on the wire (read raw, not parsed) are exactly the {@code DiscoveryResponse} protobuf
 * makes of the translator's own Anys, with the response's version, nonce and order; for a response far above every
 * buffer on the way and a ServiceEntry larger than the writer's scratch array.
 */
class WholeSetWireBytesTest {

    private static final String SE = "networking.istio.io/v1/ServiceEntry";

    private static ServiceUpsert service(int s, int endpoints) {
        List<Endpoint> list = new ArrayList<>();
        for (int i = 0; i < endpoints; i++) {
            list.add(Endpoint.builder("10." + (s % 200) + "." + (i / 250) + "." + (i % 250 + 1))
                    .port("http", 8080)
                    .label("version", "v" + i % 3)
                    .label("instance", "i-" + i)
                    .build());
        }
        return new ServiceUpsert(
                new ServiceKey("nacos", "nacos-a", "public", "DEFAULT_GROUP", "svc-" + s, ""),
                "svc-" + s + ".wire.svc",
                List.of(new ServicePort("http", 8080, Protocol.HTTP)),
                list,
                new TreeMap<>(Map.of("team", "t" + s % 3)));
    }

    /** The ADS method with responses read as their raw bytes. */
    private static final MethodDescriptor<DiscoveryRequest, byte[]> RAW =
            AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().toBuilder(
                            AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod()
                                    .getRequestMarshaller(),
                            new MethodDescriptor.Marshaller<byte[]>() {
                                @Override
                                public InputStream stream(byte[] value) {
                                    return new ByteArrayInputStream(value);
                                }

                                @Override
                                public byte[] parse(InputStream stream) {
                                    try {
                                        return stream.readAllBytes();
                                    } catch (IOException e) {
                                        throw new UncheckedIOException(e);
                                    }
                                }
                            })
                    .build();

    @Test
    void wholeSet_onTheWire_isProtobufsSerializationOfTheTranslatorsAnys() throws Exception {
        int services = 400;
        // one service of 1,500 endpoints: a ServiceEntry above the writer's 64 KB scratch array
        List<ServiceUpsert> all = new ArrayList<>();
        for (int s = 0; s < services; s++) all.add(service(s, s == 7 ? 1_500 : 1 + s % 100));
        try (TestCatalog catalog = new TestCatalog();
                McpServer server = PackedServingTest.serving(catalog, all)) {
            server.idle().get(60, TimeUnit.SECONDS);

            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                    .usePlaintext()
                    .maxInboundMessageSize(64 << 20)
                    .build();
            try {
                LinkedBlockingQueue<byte[]> received = new LinkedBlockingQueue<>();
                ClientCall<DiscoveryRequest, byte[]> call = channel.newCall(RAW, CallOptions.DEFAULT);
                call.start(
                        new ClientCall.Listener<>() {
                            @Override
                            public void onMessage(byte[] message) {
                                received.add(message);
                            }
                        },
                        new Metadata());
                call.request(1);
                call.sendMessage(DiscoveryRequest.newBuilder()
                        .setTypeUrl(SE)
                        .setNode(io.envoyproxy.envoy.config.core.v3.Node.newBuilder()
                                .setId(IstiodMcpClient.NODE_ID))
                        .build());
                byte[] wire = received.poll(60, TimeUnit.SECONDS);
                assertThat(wire).isNotNull();
                call.cancel("done", null);

                DiscoveryResponse parsed = DiscoveryResponse.parseFrom(wire);
                assertThat(parsed.getResourcesCount()).isEqualTo(services);
                ServiceEntryTranslator fresh = new ServiceEntryTranslator(McpOptions.defaults());
                Map<String, Any> want = new HashMap<>();
                for (var service : catalog.aggregator().current().services().values()) {
                    McpResource r = fresh.translateFully(service).resources().get(0);
                    want.put(r.fullName(), r.toAny(null));
                }
                DiscoveryResponse.Builder expected = DiscoveryResponse.newBuilder()
                        .setVersionInfo(parsed.getVersionInfo())
                        .setTypeUrl(SE)
                        .setNonce(parsed.getNonce());
                int largest = 0;
                for (Any got : parsed.getResourcesList()) {
                    String name =
                            Resource.parseFrom(got.getValue()).getMetadata().getName();
                    assertThat(want).containsKey(name);
                    expected.addResources(want.get(name));
                    largest = Math.max(largest, got.getValue().size());
                }
                assertThat(largest).isGreaterThan(64 * 1024);
                assertThat(wire.length).isGreaterThan(1 << 20);
                assertThat(wire).isEqualTo(expected.build().toByteArray());
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
