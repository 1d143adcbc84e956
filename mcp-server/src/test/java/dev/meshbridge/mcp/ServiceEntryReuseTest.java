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
        return service(HOST, PORTS, endpoints, labels, KEY);
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
            assertSameAsFromScratch(t, translator.translateFully(service));
            McpResource got = t.translation().resources().get(0);
            if (previousBytes != null) assertThat(got.body().getValue()).isNotEqualTo(previousBytes);
            previousBytes = got.body().getValue();
            assertThat(t.reuse())
                    .as("an inline ServiceEntry keeps what it can reuse")
                    .isNotNull();
            if (reuse != null)
                assertThat(t.reuse().head())
                        .as("instances changed only: the head is reused")
                        .isSameAs(reuse.head());
            reuse = t.reuse();
        }
        // the endpoint with a note is rebuilt every time, so that its note is said every time
        assertThat(reuse.endpoints()).noneMatch(e -> e.ports().containsKey("admin"));
    }

    static MeshService service(
            String host,
            List<ServicePort> ports,
            List<Endpoint> endpoints,
            TreeMap<String, String> labels,
            ServiceKey key) {
        List<Endpoint> sorted = new ArrayList<>(endpoints);
        sorted.sort(null);
        return new MeshService(host, ports, sorted, labels, new java.util.TreeSet<>(List.of(key)), "v-" + sorted);
    }

    /** The incremental translation equals the one from scratch: body bytes, version, name and labels. */
    private static void assertSameAsFromScratch(ServiceEntryTranslator.Translated t, ServiceTranslation full) {
        assertThat(t.translation().problems()).isEqualTo(full.problems());
        assertThat(t.translation().notes()).isEqualTo(full.notes());
        assertThat(t.translation().resources()).hasSameSizeAs(full.resources());
        McpResource got = t.translation().resources().get(0);
        McpResource want = full.resources().get(0);
        assertThat(got.fullName()).isEqualTo(want.fullName());
        assertThat(got.labels()).isEqualTo(want.labels());
        assertThat(got.body()).isEqualTo(want.body());
        assertThat(got.version()).isEqualTo(want.version());
        assertThat(got.resourceBytes()).isEqualTo(want.resourceBytes());
    }

    /**
     * A change of instances only leaves the service-level part (name, metadata labels, head) as it was: it is reused,
     * also from the bytes the server serves (at rest, then over the bytes again), and from equal inputs that are other
     * objects.
     */
    @Test
    void loneEndpointChange_reusesTheHead_byteForByte() {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(McpOptions.defaults());
        MeshService before = service(endpoints(10));
        ServiceEntryTranslator.Reuse kept = translator.translate(before, null).reuse();
        List<Endpoint> list = new ArrayList<>(endpoints(10));
        list.set(3, endpoint(4, b -> b.weight(7)));
        // equal ports, labels and origin, made again (the catalog may share them, or not)
        MeshService after = service(
                HOST,
                new ArrayList<>(PORTS),
                list,
                new TreeMap<>(java.util.Map.of("team", "shop")),
                new ServiceKey("nacos", "nacos-a", "public", "DEFAULT_GROUP", "orders", ""));

        ServiceEntryTranslator.Translated t = translator.translate(after, kept);
        assertSameAsFromScratch(t, translator.translateFully(after));
        assertThat(t.reuse().head()).as("the head is reused").isSameAs(kept.head());

        // as the server keeps it: no bytes at rest, the served bytes given back
        ByteString served = t.translation().resources().get(0).body().getValue();
        ServiceEntryTranslator.Reuse atRest = t.reuse().atRest(42);
        list.set(5, endpoint(6, b -> b.health(Health.UNHEALTHY)));
        MeshService third = service(list);
        ServiceEntryTranslator.Translated u = translator.translate(third, atRest.withBytes(served));
        assertSameAsFromScratch(u, translator.translateFully(third));
        assertThat(u.reuse().head()).isSameAs(kept.head());
        assertThat(translator.translate(third, atRest).reuse().head())
                .as("nothing is reused without the bytes")
                .isNotSameAs(kept.head());
    }

    /**
     * A change of what the service-level part is made from makes it again: each equals the translation from scratch,
     * and the head kept is not the one before.
     */
    @Test
    void serviceLevelChange_makesTheHeadAgain_byteForByte() {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(McpOptions.defaults());
        List<Endpoint> list = endpoints(6);
        TreeMap<String, String> labels = new TreeMap<>(java.util.Map.of("team", "shop"));
        MeshService before = service(HOST, PORTS, list, labels, KEY);
        java.util.Map<String, MeshService> changes = new java.util.LinkedHashMap<>();
        changes.put(
                "service labels",
                service(HOST, PORTS, list, new TreeMap<>(java.util.Map.of("team", "shop", "tier", "gold")), KEY));
        java.util.function.Function<ServicePort, MeshService> withHttp =
                http -> service(HOST, List.of(http, PORTS.get(1)), list, labels, KEY);
        java.util.function.Function<ServiceKey, MeshService> from = key -> service(HOST, PORTS, list, labels, key);
        changes.put("a port's number", withHttp.apply(new ServicePort("http", 8081, Protocol.HTTP)));
        changes.put("a port's protocol", withHttp.apply(new ServicePort("http", 8080, Protocol.TCP)));
        changes.put(
                "the origin registry",
                from.apply(new ServiceKey("nacos", "nacos-b", "public", "DEFAULT_GROUP", "orders", "")));
        changes.put(
                "the origin registry type",
                from.apply(new ServiceKey("consul", "nacos-a", "public", "DEFAULT_GROUP", "orders", "")));
        changes.put("the host", service("payments.reuse.svc", PORTS, list, labels, KEY));

        // a template that uses the registry, and a revision label: both fixed per translator
        ServiceEntryTranslator templated = new ServiceEntryTranslator(McpOptions.builder()
                .resourceName(dev.meshbridge.core.naming.HostTemplate.parse(
                        "{registryType}-{registry}-{host}", McpOptions.NAME_VARIABLES))
                .revision("canary")
                .build());
        for (ServiceEntryTranslator tr : List.of(translator, templated)) {
            ServiceEntryTranslator.Reuse kept = tr.translate(before, null).reuse();
            changes.forEach((what, changed) -> {
                ServiceEntryTranslator.Translated t = tr.translate(changed, kept);
                ServiceTranslation full = tr.translateFully(changed);
                assertThat(full.resources().get(0).resourceBytes())
                        .as(what + " changes the resource")
                        .isNotEqualTo(
                                tr.translateFully(before).resources().get(0).resourceBytes());
                assertSameAsFromScratch(t, full);
                assertThat(t.reuse().head()).as(what).isNotSameAs(kept.head());
                assertThat(t.reuse().head().madeFrom(changed)).isTrue();
                assertThat(t.reuse().head().madeFrom(before)).isFalse();
            });
        }
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
