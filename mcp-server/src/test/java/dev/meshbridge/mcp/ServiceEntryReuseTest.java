package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * A change of one instance rebuilds only that instance's WorkloadEntry; the others' bytes are copied from the served
 * ServiceEntry. What istiod receives must be what a translation from scratch makes, byte for byte.
 */
class ServiceEntryReuseTest {

    static final String HOST = "orders.reuse.svc";
    static final ServiceKey KEY = new ServiceKey("nacos", "nacos-a", "public", "DEFAULT_GROUP", "orders", "");
    static final List<ServicePort> PORTS =
            List.of(new ServicePort("http", 8080, Protocol.HTTP), new ServicePort("grpc", 9090, Protocol.GRPC));

    static Endpoint endpoint(int i, UnaryOperator<Endpoint.Builder> tweak) {
        Endpoint.Builder b = Endpoint.builder("10.1.0." + i)
                .port("http", 8080)
                .port("grpc", 9090)
                .weight(100)
                .label("version", "v" + (i % 3))
                .label("zone-label", "z" + (i % 2))
                .locality(Locality.of("eu", "eu-" + (i % 2)));
        return tweak.apply(b).build();
    }

    static List<Endpoint> endpoints(int n) {
        List<Endpoint> out = new ArrayList<>();
        for (int i = 1; i <= n; i++) out.add(endpoint(i, b -> b));
        return out;
    }

    static ServiceUpsert upsert(List<Endpoint> endpoints) {
        return new ServiceUpsert(KEY, HOST, PORTS, endpoints, new TreeMap<>(java.util.Map.of("team", "shop")));
    }

    /** The catalog's form of one registry's service: endpoints in catalog order (as merged, not checked again). */
    static MeshService service(List<Endpoint> endpoints) {
        return service(endpoints, new TreeMap<>(java.util.Map.of("team", "shop")));
    }

    static MeshService service(List<Endpoint> endpoints, TreeMap<String, String> labels) {
        List<Endpoint> sorted = new ArrayList<>(endpoints);
        sorted.sort(null);
        return new MeshService(HOST, PORTS, sorted, labels, new java.util.TreeSet<>(List.of(KEY)), "v-" + sorted);
    }

    /**
     * What a kept translation holds no index of: where each WorkloadEntry sits, read again from the served bytes. Every
     * span found is one endpoint of the message, in order; bytes that do not parse give none.
     */
    @Test
    void endpointSpans_readFromTheBytes_areTheMessagesEndpoints() throws Exception {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(McpOptions.defaults());
        ByteString bytes = translator
                .translateFully(service(endpoints(12)))
                .resources()
                .get(0)
                .body()
                .getValue();
        ServiceEntry message = ServiceEntry.parseFrom(bytes);
        int[] spans = ServiceEntryTranslator.endpointSpans(bytes);
        assertThat(spans).hasSize(2 * 12);
        for (int i = 0; i < 12; i++) {
            WorkloadEntry at = WorkloadEntry.parseFrom(bytes.substring(spans[2 * i], spans[2 * i] + spans[2 * i + 1]));
            assertThat(at).isEqualTo(message.getEndpoints(i));
        }
        assertThat(ServiceEntryTranslator.endpointSpans(ByteString.copyFrom(new byte[] {0x32, 0x7f, 1})))
                .as("a length past the end")
                .isNull();
        assertThat(ServiceEntryTranslator.endpointSpans(ByteString.EMPTY)).isEmpty();
    }

    /** Each step changes the list of the step before; every result equals the translation from scratch. */
    @Test
    void everyChangeMatchesAFullTranslation_byteForByte() {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(McpOptions.defaults());
        List<List<Endpoint>> steps = new ArrayList<>();
        List<Endpoint> list = endpoints(10);
        steps.add(list);
        list = new ArrayList<>(list);
        list.set(3, endpoint(4, b -> b.weight(7))); // a weight
        steps.add(list);
        list = new ArrayList<>(list);
        list.set(5, endpoint(6, b -> b.health(Health.UNHEALTHY))); // leaves the ServiceEntry
        steps.add(list);
        list = new ArrayList<>(list);
        list.add(endpoint(11, b -> b.port("admin", 9999))); // a port the service lacks: kept, with a note
        steps.add(list);
        list = new ArrayList<>(list);
        list.set(0, endpoint(1, b -> b.label("version", "v9"))); // a label
        list.remove(8);
        steps.add(list);
        list = new ArrayList<>(list);
        list.add(endpoint(12, b -> b.locality(new Locality("", "zone-only", "")))); // no region/zone/subzone form
        steps.add(list);

        ServiceEntryTranslator.Reuse reuse = null;
        ByteString previousBytes = null;
        for (List<Endpoint> step : steps) {
            MeshService service = service(step);
            ServiceEntryTranslator.Translated t = translator.translate(service, reuse);
            ServiceTranslation full = translator.translateFully(service);
            assertThat(t.translation().problems()).isEqualTo(full.problems());
            assertThat(t.translation().notes()).isEqualTo(full.notes());
            assertThat(t.translation().resources()).hasSameSizeAs(full.resources());
            McpResource got = t.translation().resources().get(0);
            McpResource want = full.resources().get(0);
            assertThat(got.body().getValue()).isEqualTo(want.body().getValue());
            assertThat(got.version()).isEqualTo(want.version());
            assertThat(got.labels()).isEqualTo(want.labels());
            if (previousBytes != null) assertThat(got.body().getValue()).isNotEqualTo(previousBytes);
            previousBytes = got.body().getValue();
            assertThat(t.reuse())
                    .as("an inline ServiceEntry keeps what it can reuse")
                    .isNotNull();
            reuse = t.reuse();
        }
        // the endpoint with a note is rebuilt every time, so that its note is said every time
        assertThat(reuse.endpoints()).noneMatch(e -> e.ports().containsKey("admin"));
    }

    /** What is noted at the service level is said as before (from scratch), and nothing is kept to reuse. */
    @Test
    void serviceLevelNote_sameAsFromScratch_nothingKept() {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(McpOptions.defaults());
        ServiceEntryTranslator.Reuse reuse =
                translator.translate(service(endpoints(3)), null).reuse();
        MeshService noted = service(endpoints(4), new TreeMap<>(java.util.Map.of("team", "shop", "bad key!", "x")));
        ServiceEntryTranslator.Translated t = translator.translate(noted, reuse);
        ServiceTranslation full = translator.translateFully(noted);
        assertThat(t.translation().notes()).isEqualTo(full.notes()).isNotEmpty();
        assertThat(t.translation().resources().get(0).body())
                .isEqualTo(full.resources().get(0).body());
        assertThat(t.reuse()).isNull();
    }

    /**
     * Through the server, fed by the real aggregator, to a Delta client: one changed instance re-sends its one
     * ServiceEntry, which carries the new weight and health, while the unchanged instances' WorkloadEntries are the
     * same as before; the version changes; the bytes equal a translation from scratch.
     */
    @Test
    void deltaClient_getsTheChangedInstance_andTheOthersUnchanged() throws Exception {
        try (TestCatalog catalog = new TestCatalog()) {
            McpServer server = new McpServer(
                    McpOptions.builder()
                            .bindAddress("127.0.0.1")
                            .port(0)
                            .minPushInterval(java.time.Duration.ZERO) // no pacing: one push per change
                            .build(),
                    new SimpleMeterRegistry());
            ManagedChannel channel = null;
            try {
                server.start();
                catalog.aggregator().subscribe(server).join();
                List<Endpoint> list = endpoints(10);
                catalog.aggregator().accept(upsert(list));
                catalog.aggregator()
                        .flushNow()
                        .thenRun(server::markCatalogReady)
                        .join();
                channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                        .usePlaintext()
                        .build();
                McpDeltaTest.DeltaClient client = new McpDeltaTest.DeltaClient(channel);
                client.requests.onNext(DeltaDiscoveryRequest.newBuilder()
                        .setTypeUrl(McpServerIstiodTest.SE)
                        .build());
                DeltaDiscoveryResponse first = client.ack(client.next());
                ServiceEntry before = serviceEntry(first);
                String versionBefore = first.getResources(0).getVersion();

                ServiceEntryTranslator fresh = new ServiceEntryTranslator(McpOptions.defaults());
                for (int change = 1; change <= 3; change++) {
                    int weight = 10 + change;
                    list = new ArrayList<>(list);
                    // instance 4 changes weight; on the last change instance 7 becomes unhealthy too
                    list.set(3, endpoint(4, b -> b.weight(weight)));
                    if (change == 3) list.set(6, endpoint(7, b -> b.health(Health.UNHEALTHY)));
                    catalog.aggregator().accept(upsert(list));
                    catalog.aggregator().flushNow().join();

                    DeltaDiscoveryResponse r = client.ack(client.next());
                    assertThat(r.getResourcesList())
                            .singleElement()
                            .satisfies(res -> assertThat(res.getName())
                                    .endsWith("/"
                                            + fresh.translateFully(catalog.aggregator()
                                                            .current()
                                                            .service(HOST))
                                                    .resources()
                                                    .get(0)
                                                    .name()));
                    assertThat(r.getResources(0).getVersion()).isNotEqualTo(versionBefore);
                    ServiceEntry after = serviceEntry(r);
                    WorkloadEntry changed = find(after, "10.1.0.4");
                    assertThat(changed.getWeight()).isEqualTo(weight);
                    for (WorkloadEntry we : after.getEndpointsList()) {
                        if (!we.getAddress().equals("10.1.0.4"))
                            assertThat(we).isEqualTo(find(before, we.getAddress()));
                    }
                    if (change == 3) {
                        assertThat(after.getEndpointsList())
                                .extracting(WorkloadEntry::getAddress)
                                .doesNotContain("10.1.0.7")
                                .hasSize(9);
                    }
                    ByteString wire = r.getResources(0)
                            .getResource()
                            .unpack(Resource.class)
                            .getBody()
                            .getValue();
                    assertThat(wire)
                            .as("the bytes istiod gets are those of a translation from scratch")
                            .isEqualTo(fresh.translateFully(
                                            catalog.aggregator().current().service(HOST))
                                    .resources()
                                    .get(0)
                                    .body()
                                    .getValue());
                    versionBefore = r.getResources(0).getVersion();
                }
            } finally {
                if (channel != null) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                server.close();
            }
        }
    }

    private static ServiceEntry serviceEntry(DeltaDiscoveryResponse r) throws Exception {
        assertThat(r.getResourcesList()).hasSize(1);
        return r.getResources(0).getResource().unpack(Resource.class).getBody().unpack(ServiceEntry.class);
    }

    private static WorkloadEntry find(ServiceEntry se, String address) {
        return se.getEndpointsList().stream()
                .filter(w -> w.getAddress().equals(address))
                .findFirst()
                .orElseThrow();
    }
}
