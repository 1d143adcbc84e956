package dev.meshbridge.mcp;

import dev.meshbridge.ads.AdsConformanceSuite;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;

/**
 * The ADS protocol conformance suite against the MCP server's ADS service, with ServiceEntries under both type-URL
 * generations istiod asks for ({@code networking.istio.io/v1alpha3/ServiceEntry} up to Istio 1.23, {@code .../v1/...}
 * from 1.24).
 */
class McpConformanceTest extends AdsConformanceSuite {

    @Override
    protected Subject start(boolean hold) throws Exception {
        TestCatalog catalog = new TestCatalog();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        McpServer server = new McpServer(
                McpOptions.builder()
                        .bindAddress("127.0.0.1")
                        .port(0)
                        .initialSyncTimeout(Duration.ofMinutes(5))
                        .minPushInterval(Duration.ZERO)
                        .build(),
                meters);
        server.start();
        catalog.aggregator().subscribe(server).join();
        if (!hold) server.markCatalogReady();
        return new Subject() {
            @Override
            public int port() {
                return server.port();
            }

            @Override
            public List<String> typeUrls() {
                return List.of(McpKind.SERVICE_ENTRY.typeUrl("v1alpha3"), McpKind.SERVICE_ENTRY.typeUrl("v1"));
            }

            private ServiceKey key(String service) {
                return ServiceKey.of("zookeeper", "zk1", service);
            }

            @Override
            public String put(String service, int variant) {
                String address = "10.0.0." + (variant + 1);
                String host = service + ".conformance";
                catalog.aggregator()
                        .accept(new ServiceUpsert(
                                key(service),
                                host,
                                List.of(new ServicePort("http", 8080, Protocol.HTTP)),
                                List.of(Endpoint.builder(address)
                                        .port("http", 8080)
                                        .build())));
                catalog.aggregator().flushNow().join();
                return McpOptions.DEFAULT_NAMESPACE + "/" + host;
            }

            @Override
            public void remove(String service) {
                catalog.aggregator().accept(new ServiceRemoval(key(service)));
                catalog.aggregator().flushNow().join();
            }

            @Override
            public String nameOf(com.google.protobuf.Any resource) {
                try {
                    return resource.unpack(Resource.class).getMetadata().getName();
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    throw new AssertionError(e);
                }
            }

            @Override
            public void markReady() {
                server.markCatalogReady();
            }

            @Override
            public void idle() {
                server.idle().join();
            }

            @Override
            public double nacks() {
                return meters.find("meshbridge.mcp.nacks").counters().stream()
                        .mapToDouble(io.micrometer.core.instrument.Counter::count)
                        .sum();
            }

            @Override
            public Node node() {
                return Node.newBuilder().setId("istiod-conformance").build();
            }

            @Override
            public void close() {
                server.close();
                catalog.close();
            }
        };
    }
}
