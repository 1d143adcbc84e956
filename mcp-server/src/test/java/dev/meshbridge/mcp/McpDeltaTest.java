package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.McpServerIstiodTest.DUBBO_AND_TRI;
import static dev.meshbridge.mcp.McpServerIstiodTest.GREETER;
import static dev.meshbridge.mcp.McpServerIstiodTest.GREETER_HOST;
import static dev.meshbridge.mcp.McpServerIstiodTest.ORDERS_HOST;
import static dev.meshbridge.mcp.McpServerIstiodTest.demoApp;
import static dev.meshbridge.mcp.McpServerIstiodTest.greeter;
import static dev.meshbridge.mcp.McpServerIstiodTest.orders;
import static dev.meshbridge.mcp.ZookeeperRegistrations.providerUrl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Delta (incremental) ADS protocol of the MCP server, with a raw client. */
class McpDeltaTest {

    static final String SE = McpServerIstiodTest.SE;
    static final String NS = McpOptions.DEFAULT_NAMESPACE;

    private final TestCatalog catalog = new TestCatalog();
    private McpServer server;
    private ManagedChannel channel;

    @BeforeEach
    void setUp() throws Exception {
        register(greeter(), demoApp(DUBBO_AND_TRI), orders());
        server = new McpServer(
                McpOptions.builder().bindAddress("127.0.0.1").port(0).build(), new SimpleMeterRegistry());
        server.start();
        catalog.aggregator().subscribe(server).join();
        catalog.aggregator().flushNow().thenRun(server::markCatalogReady).join();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                .usePlaintext()
                .build();
    }

    @AfterEach
    void tearDown() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
        catalog.close();
    }

    private void register(ServiceUpsert... upserts) {
        for (ServiceUpsert u : upserts) catalog.aggregator().accept(u);
    }

    /** A raw Delta stream: what it receives is queued; ACKs are sent by the test. */
    static final class DeltaClient {
        final BlockingQueue<DeltaDiscoveryResponse> received = new LinkedBlockingQueue<>();
        final StreamObserver<DeltaDiscoveryRequest> requests;

        DeltaClient(ManagedChannel channel) {
            requests = AggregatedDiscoveryServiceGrpc.newStub(channel).deltaAggregatedResources(new StreamObserver<>() {
                @Override
                public void onNext(DeltaDiscoveryResponse r) {
                    received.add(r);
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            });
        }

        DeltaDiscoveryResponse next() throws InterruptedException {
            DeltaDiscoveryResponse r = received.poll(20, TimeUnit.SECONDS);
            assertThat(r).as("a delta response").isNotNull();
            return r;
        }

        DeltaDiscoveryResponse ack(DeltaDiscoveryResponse r) {
            requests.onNext(DeltaDiscoveryRequest.newBuilder()
                    .setTypeUrl(r.getTypeUrl())
                    .setResponseNonce(r.getNonce())
                    .build());
            return r;
        }
    }

    @Test
    void wildcard_firstResponseHasEverything_thenOnlyWhatChanged() throws Exception {
        DeltaClient client = new DeltaClient(channel);
        client.requests.onNext(DeltaDiscoveryRequest.newBuilder().setTypeUrl(SE).build());

        DeltaDiscoveryResponse first = client.ack(client.next());
        assertThat(first.getResourcesList())
                .extracting(io.envoyproxy.envoy.service.discovery.v3.Resource::getName)
                .containsExactlyInAnyOrder(
                        NS + "/" + GREETER_HOST, NS + "/demo-provider.dubbo", NS + "/" + ORDERS_HOST);
        assertThat(first.getRemovedResourcesList()).isEmpty();

        register(greeter(providerUrl("dubbo", "10.0.0.13", 20880, GREETER, "version=1.0.0")));

        DeltaDiscoveryResponse change = client.ack(client.next());
        assertThat(change.getResourcesList()).singleElement().satisfies(r -> {
            assertThat(r.getName()).isEqualTo(NS + "/" + GREETER_HOST);
            ServiceEntry se = r.getResource().unpack(Resource.class).getBody().unpack(ServiceEntry.class);
            assertThat(se.getEndpointsCount()).isEqualTo(3);
        });

        catalog.aggregator().accept(ZookeeperRegistrations.removal(orders()));

        DeltaDiscoveryResponse removal = client.ack(client.next());
        assertThat(removal.getResourcesList()).isEmpty();
        assertThat(removal.getRemovedResourcesList()).containsExactly(NS + "/" + ORDERS_HOST);
        await().untilAsserted(() -> assertThat(
                        ((McpServer.DebugView) server.debugSource().debug(Map.of())).clients())
                .singleElement()
                .satisfies(c -> {
                    assertThat(c.protocol()).isEqualTo("delta");
                    assertThat(c.types().values())
                            .singleElement()
                            .satisfies(t -> assertThat(t.status()).isEqualTo("SYNCED"));
                }));
    }

    @Test
    void reconnect_withKnownVersions_getsOnlyWhatDiffers() throws Exception {
        DeltaClient first = new DeltaClient(channel);
        first.requests.onNext(DeltaDiscoveryRequest.newBuilder().setTypeUrl(SE).build());
        DeltaDiscoveryResponse all = first.ack(first.next());
        Map<String, String> known = new java.util.TreeMap<>();
        for (var r : all.getResourcesList()) known.put(r.getName(), r.getVersion());
        known.put(NS + "/gone.dubbo", "0123456789abcdef");
        known.put(NS + "/" + GREETER_HOST, "stale");

        DeltaClient second = new DeltaClient(channel);
        second.requests.onNext(DeltaDiscoveryRequest.newBuilder()
                .setTypeUrl(SE)
                .putAllInitialResourceVersions(known)
                .build());

        DeltaDiscoveryResponse diff = second.next();
        assertThat(diff.getResourcesList())
                .extracting(io.envoyproxy.envoy.service.discovery.v3.Resource::getName)
                .containsExactly(NS + "/" + GREETER_HOST);
        assertThat(diff.getRemovedResourcesList()).containsExactly(NS + "/gone.dubbo");
    }

    @Test
    void namedSubscription_getsOnlyThoseResources_andUnknownTypesAnEmptyAnswer() throws Exception {
        DeltaClient client = new DeltaClient(channel);
        client.requests.onNext(DeltaDiscoveryRequest.newBuilder()
                .setTypeUrl(SE)
                .addResourceNamesSubscribe(NS + "/" + ORDERS_HOST)
                .build());
        client.requests.onNext(DeltaDiscoveryRequest.newBuilder()
                .setTypeUrl("networking.istio.io/v1/VirtualService")
                .build());

        List<DeltaDiscoveryResponse> responses = List.of(client.ack(client.next()), client.ack(client.next()));

        assertThat(responses)
                .filteredOn(r -> r.getTypeUrl().equals(SE))
                .singleElement()
                .satisfies(r -> assertThat(r.getResourcesList())
                        .extracting(io.envoyproxy.envoy.service.discovery.v3.Resource::getName)
                        .containsExactly(NS + "/" + ORDERS_HOST));
        assertThat(responses)
                .filteredOn(r -> r.getTypeUrl().endsWith("VirtualService"))
                .singleElement()
                .satisfies(r -> assertThat(r.getResourcesCount()).isZero());

        // a change to a service the client did not ask for sends nothing; one to its service does
        register(greeter(providerUrl("dubbo", "10.0.0.13", 20880, GREETER, "version=1.0.0")));
        register(
                orders(ZookeeperRegistrations.springInstance("orders", "a9", "10.0.0.39", 8080, "\"version\":\"v9\"")));
        DeltaDiscoveryResponse next = client.next();
        assertThat(next.getResourcesList())
                .extracting(io.envoyproxy.envoy.service.discovery.v3.Resource::getName)
                .containsExactly(NS + "/" + ORDERS_HOST);
    }
}
