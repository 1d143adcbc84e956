package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.McpServerIstiodTest.DUBBO_AND_TRI;
import static dev.meshbridge.mcp.McpServerIstiodTest.demoApp;
import static dev.meshbridge.mcp.McpServerIstiodTest.greeter;
import static dev.meshbridge.mcp.McpServerIstiodTest.orders;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The {@code Resource} istiod receives is written directly from a resource's parts, without serializing it through
 * protobuf's builders again; these tests hold those bytes equal to protobuf's own deterministic serialization.
 */
class McpResourceTest {

    @Test
    void wireBytes_equalProtobufsDeterministicSerialization_forEveryTranslatedResource() throws Exception {
        List<McpResource> resources = new ArrayList<>();
        try (TestCatalog catalog = new TestCatalog()) {
            for (ServiceUpsert u : List.of(greeter(), demoApp(DUBBO_AND_TRI), orders())) {
                catalog.aggregator().accept(u);
                MeshService service = catalog.awaitService(u.host());
                for (EndpointMode mode : EndpointMode.values()) {
                    ServiceTranslation t = new ServiceEntryTranslator(
                                    McpOptions.builder().endpointMode(mode).build())
                            .translate(service);
                    assertThat(t.problems()).isEmpty();
                    resources.addAll(t.resources());
                }
            }
        }
        assertThat(resources).hasSizeGreaterThan(6);
        for (McpResource r : resources) assertSameWire(r);
    }

    @Test
    void wireBytes_equalProtobufsDeterministicSerialization_atTheEdges() throws Exception {
        Map<String, String> labels = new LinkedHashMap<>();
        // given out of order, one empty value, a long value: map entries carry both key and value, sorted by key
        labels.put("zone", "");
        labels.put("app", "a".repeat(63));
        labels.put("app.kubernetes.io/name", "orders");
        ServiceEntry big = ServiceEntry.newBuilder()
                .addHosts("h".repeat(200) + ".example")
                .addAllAddresses(java.util.Collections.nCopies(40, "10.0.0.1"))
                .build();
        assertSameWire(McpResource.of(McpKind.SERVICE_ENTRY, "ns", "big", labels, big, "host.example"));
        assertSameWire(McpResource.of(
                McpKind.SERVICE_ENTRY, "ns", "empty", Map.of(), ServiceEntry.getDefaultInstance(), "host.example"));
        // a body whose value is empty and a version-less, name-less edge do not occur; an empty body value does
        McpResource empty = McpResource.of(
                McpKind.SERVICE_ENTRY,
                "ns",
                "raw",
                Map.of("k", "v"),
                "istio.networking.v1alpha3.ServiceEntry",
                ByteString.EMPTY,
                "host.example");
        assertSameWire(empty);
    }

    private static void assertSameWire(McpResource r) throws Exception {
        Any expected = McpResource.pack(r.toResource(null));
        Any actual = r.toAny(null);
        assertThat(actual.getTypeUrl()).isEqualTo(expected.getTypeUrl());
        assertThat(actual.getValue().toByteArray())
                .as("wire bytes of %s", r)
                .isEqualTo(expected.getValue().toByteArray());
        // and istiod reads it back as the same resource
        Resource parsed = Resource.parseFrom(actual.getValue());
        assertThat(parsed).isEqualTo(r.toResource(null));
    }
}
