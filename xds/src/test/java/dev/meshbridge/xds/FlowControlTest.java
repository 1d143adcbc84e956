package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.ServiceUpsert;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A client that stops reading gets its changes coalesced, not an ever-growing queue, and the latest state after. */
class FlowControlTest {

    private static int pending(XdsTestBed bed) {
        return bed.server.debugView().client("slow-1").types().get("eds").pending();
    }

    static ServiceUpsert shop(int round) {
        List<Endpoint> eps = new ArrayList<>();
        for (int j = 0; j < 60; j++) {
            eps.add(Upserts.dubboAppInstance(
                            "10.7." + (j == 0 ? round / 250 : 255) + "." + (j == 0 ? round % 250 : j), 50051)
                    .label("version", "v" + j)
                    .build());
        }
        return Upserts.dubboApplication("shop", eps);
    }

    @Test
    void clientNotReading_changesAreCoalesced_andTheLatestArrivesWhenItReads() throws Exception {
        try (XdsTestBed bed = new XdsTestBed()) {
            bed.send(shop(0));
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", bed.server.port())
                    .usePlaintext()
                    .flowControlWindow(65_535)
                    .build();
            LinkedBlockingDeque<DiscoveryResponse> received = new LinkedBlockingDeque<>();
            @SuppressWarnings("unchecked")
            ClientCallStreamObserver<DiscoveryRequest>[] requests = new ClientCallStreamObserver[1];
            var stream = AggregatedDiscoveryServiceGrpc.newStub(channel)
                    .streamAggregatedResources(new ClientResponseObserver<DiscoveryRequest, DiscoveryResponse>() {
                        @Override
                        public void beforeStart(ClientCallStreamObserver<DiscoveryRequest> r) {
                            requests[0] = r;
                            r.disableAutoRequestWithInitial(1); // read the first response, then stop reading
                        }

                        @Override
                        public void onNext(DiscoveryResponse value) {
                            received.add(value);
                        }

                        @Override
                        public void onError(Throwable t) {}

                        @Override
                        public void onCompleted() {}
                    });
            stream.onNext(DiscoveryRequest.newBuilder()
                    .setNode(Node.newBuilder().setId("slow-1"))
                    .setTypeUrl(XdsType.ENDPOINT.typeUrl())
                    .addResourceNames(AdsSotwTest.SHOP_CLUSTER)
                    .build());
            assertThat(received.poll(30, TimeUnit.SECONDS)).isNotNull();

            // one change at a time, each pushed, until the transport stops taking more (the client does not read)
            int round = 0;
            while (pending(bed) == 0) {
                assertThat(++round).as("the transport fills up").isLessThan(1000);
                bed.send(shop(round));
            }
            double pushes = bed.counter("meshbridge.xds.pushes", "type", "eds", "protocol", "sotw");

            int held = 50;
            for (int k = 0; k < held; k++) bed.send(shop(++round));
            assertThat(pending(bed))
                    .as("one resource pending, however many changes")
                    .isEqualTo(1);
            assertThat(bed.counter("meshbridge.xds.pushes", "type", "eds", "protocol", "sotw"))
                    .as("nothing pushed while the client does not read")
                    .isEqualTo(pushes);
            assertThat(bed.server
                            .debugView()
                            .client("slow-1")
                            .types()
                            .get("eds")
                            .status())
                    .isEqualTo("STALE");

            requests[0].request(Integer.MAX_VALUE);
            String latest = "10.7." + round / 250 + "." + round % 250 + ":50051";
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                DiscoveryResponse last = received.peekLast();
                assertThat(EnvoyTranslatorTest.endpoints(AdsSotwTest.cla(last.getResources(0))))
                        .contains(latest);
            });
            assertThat(received.size())
                    .as("responses: the %d held changes arrive as one", held)
                    .isLessThan(round - held + 3);
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
