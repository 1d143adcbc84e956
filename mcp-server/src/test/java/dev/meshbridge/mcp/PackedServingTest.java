package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Any;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Through a real MCP stream: the server holds its resources packed, and what an istiod-like client receives is, byte
 * for byte, what the translator makes of the catalog from scratch, for services of every shape, before and after
 * changes that go through the reuse path (which splices the unpacked served bytes).
 */
class PackedServingTest {

    private static final String SE = "networking.istio.io/v1/ServiceEntry";
    private static final int SERVICES = 60;

    private static ServiceUpsert service(int s, int weightOfFirst) {
        List<Endpoint> endpoints = new ArrayList<>();
        int n = s % 10 == 0 ? 400 : s % 7 == 0 ? 0 : 1 + s % 12;
        for (int i = 0; i < n; i++) {
            Endpoint.Builder b = Endpoint.builder("10.9." + s + "." + (i % 250 + 1) + (i >= 250 ? "0" : ""))
                    .port("http", 8080)
                    .weight(i == 0 ? weightOfFirst : 100);
            if (s % 3 != 0) b.label("version", "v" + i % 3).label("app", "svc-" + s);
            if (s % 5 == 0) b.label("instance", "i-" + i).locality(Locality.of("eu", "eu-" + i % 2));
            endpoints.add(b.build());
        }
        TreeMap<String, String> labels = s % 4 == 0 ? new TreeMap<>() : new TreeMap<>(Map.of("team", "t" + s % 3));
        return new ServiceUpsert(
                new ServiceKey("nacos", "nacos-a", "public", "DEFAULT_GROUP", "svc-" + s, ""),
                "svc-" + s + ".packed.svc",
                List.of(new ServicePort("http", 8080, Protocol.HTTP)),
                endpoints,
                labels);
    }

    /** The last ServiceEntry response's resources, by name, as the client received them. */
    private static Map<String, Any> received(IstiodMcpClient istiod) throws Exception {
        List<DiscoveryResponse> responses = istiod.responses(SE);
        Map<String, Any> out = new HashMap<>();
        for (Any a : responses.get(responses.size() - 1).getResourcesList()) {
            out.put(Resource.parseFrom(a.getValue()).getMetadata().getName(), a);
        }
        return out;
    }

    private static void sameAsFromScratch(Map<String, Any> got, MeshSnapshot snapshot) throws Exception {
        ServiceEntryTranslator fresh = new ServiceEntryTranslator(McpOptions.defaults());
        int services = 0;
        for (var service : snapshot.services().values()) {
            McpResource want = fresh.translateFully(service).resources().get(0);
            Any any = got.get(want.fullName());
            assertThat(any).as(want.fullName()).isNotNull();
            assertThat(any.toByteString())
                    .as(want.fullName())
                    .isEqualTo(want.toAny(null).toByteString());
            // and what istiod decodes from it is the translator's ServiceEntry
            Resource r = Resource.parseFrom(any.getValue());
            assertThat(r.getBody().unpack(ServiceEntry.class))
                    .isEqualTo(want.body().unpack(ServiceEntry.class));
            services++;
        }
        assertThat(got).hasSize(services);
    }

    /**
     * An MCP server on a free port that pushes at once, subscribed to {@code catalog}, with {@code services} in it and
     * the catalog marked ready.
     */
    static McpServer serving(TestCatalog catalog, List<ServiceUpsert> services) throws Exception {
        McpServer server = new McpServer(
                McpOptions.builder()
                        .bindAddress("127.0.0.1")
                        .port(0)
                        .minPushInterval(Duration.ZERO)
                        .build(),
                new SimpleMeterRegistry());
        try {
            server.start();
            catalog.aggregator().subscribe(server).join();
            for (ServiceUpsert s : services) catalog.aggregator().accept(s);
            catalog.aggregator().flushNow().thenRun(server::markCatalogReady).join();
            return server;
        } catch (Exception | Error e) {
            server.close();
            throw e;
        }
    }

    @Test
    void istiodReceivesTheTranslatorsBytes_beforeAndAfterChanges() throws Exception {
        List<ServiceUpsert> services = new ArrayList<>();
        for (int s = 0; s < SERVICES; s++) services.add(service(s, 100));
        try (TestCatalog catalog = new TestCatalog();
                McpServer server = serving(catalog, services)) {
            try (IstiodMcpClient istiod = new IstiodMcpClient(server.port(), IstiodMcpClient.PILOT_TYPES_1_24)) {
                istiod.start();
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> !istiod.responses(SE).isEmpty());
                sameAsFromScratch(received(istiod), catalog.aggregator().current());

                // one instance changes in every third service: the reuse path, over the served bytes unpacked
                long reusedBefore = server.reusedTranslations().get(60, TimeUnit.SECONDS);
                for (int s = 0; s < SERVICES; s += 3) catalog.aggregator().accept(service(s, 7));
                MeshSnapshot after = catalog.aggregator().flushNow().join();
                server.idle().get(60, TimeUnit.SECONDS);
                long changedWithEndpoints = java.util.stream.IntStream.range(0, SERVICES)
                        .filter(s -> s % 3 == 0 && !(s % 7 == 0 && s % 10 != 0))
                        .count();
                assertThat(server.reusedTranslations().get(60, TimeUnit.SECONDS) - reusedBefore)
                        .as("the changed services were translated over their served bytes")
                        .isEqualTo(changedWithEndpoints);
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> sameAsFromScratch(received(istiod), after));
                ServiceEntry changed = Resource.parseFrom(received(istiod)
                                .get(new ServiceEntryTranslator(McpOptions.defaults())
                                        .translateFully(after.service("svc-3.packed.svc"))
                                        .resources()
                                        .get(0)
                                        .fullName())
                                .getValue())
                        .getBody()
                        .unpack(ServiceEntry.class);
                assertThat(changed.getEndpointsList()).anyMatch(we -> we.getWeight() == 7);
            }
        }
    }
}
