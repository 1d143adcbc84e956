package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.McpServerIstiodTest.DUBBO_AND_TRI;
import static dev.meshbridge.mcp.McpServerIstiodTest.demoApp;
import static dev.meshbridge.mcp.McpServerIstiodTest.orders;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Any;
import com.google.protobuf.util.JsonFormat;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.mcp.IstiodMcpClient.Config;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The exact Gateways, VirtualServices and DestinationRules istiod holds for the Ingress YAML of {@code
 * src/test/resources/ingress} (read by the real directory source, merged in a real aggregator, served by the MCP
 * server to an istiod-like client), printed as the {@code istio.mcp.v1alpha1.Resource} JSON (with no creation time:
 * none is sent, so replicas send the same bytes): a representative set ({@code shop.yaml}), destinations the catalog
 * lacks ({@code unknown-destination.yaml}) and two Ingresses claiming one route ({@code conflict.yaml}).
 *
 * <p>After an intended change, regenerate with {@code ./mvnw -pl mcp-server -am verify -Dtest=IngressGoldenFilesTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dgolden.update=true} and review the diff of {@code
 * src/test/resources/golden}.
 */
class IngressGoldenFilesTest {

    static final JsonFormat.Printer JSON = JsonFormat.printer()
            .usingTypeRegistry(JsonFormat.TypeRegistry.newBuilder()
                    .add(Resource.getDescriptor())
                    .add(Gateway.getDescriptor())
                    .add(VirtualService.getDescriptor())
                    .add(DestinationRule.getDescriptor())
                    .build())
            .sortingMapKeys();

    static final List<String> KINDS = List.of(
            "networking.istio.io/v1/Gateway",
            "networking.istio.io/v1/VirtualService",
            "networking.istio.io/v1/DestinationRule");

    @TempDir
    Path dir;

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("ingress-shop", "shop.yaml", List.of(orders(), demoApp(DUBBO_AND_TRI))),
                Arguments.of("ingress-unknown-destination", "unknown-destination.yaml", List.of(orders())),
                Arguments.of("ingress-conflict", "conflict.yaml", List.of(orders(), demoApp(DUBBO_AND_TRI))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void istiodHolds_theGoldenFile(String name, String yaml, List<ServiceUpsert> services) throws Exception {
        String actual;
        try (IngressBed bed = new IngressBed(dir)) {
            bed.register(services.toArray(ServiceUpsert[]::new)).start();
            bed.copy(yaml);
            IstiodMcpClient istiod = bed.istiod(IstiodMcpClient.PILOT_TYPES_1_24);
            istiod.awaitSynced();
            await().atMost(Duration.ofSeconds(20)).until(bed::routesApplied);
            bed.server.idle().join();
            for (McpKind kind : List.of(McpKind.GATEWAY, McpKind.VIRTUAL_SERVICE, McpKind.DESTINATION_RULE)) {
                Map<String, String> served = bed.server.servedVersions(kind).join();
                istiod.awaitConfigs(kind.typeUrl("v1"), c -> versions(c).equals(served));
            }
            StringBuilder json = new StringBuilder("[\n");
            boolean first = true;
            for (String kind : KINDS) {
                for (Config c : istiod.configs(kind).values()) {
                    if (!first) json.append(",\n");
                    first = false;
                    json.append(JSON.print(Resource.newBuilder()
                            .setMetadata(c.metadata())
                            .setBody(Any.pack(c.spec()))
                            .build()));
                }
            }
            actual = json.append("\n]\n").toString();
            assertThat(istiod.decodeErrors()).isZero();
        }
        GoldenFilesTest.assertGolden(name, actual);
    }

    private static Map<String, String> versions(Map<String, Config> configs) {
        Map<String, String> out = new TreeMap<>();
        configs.forEach((n, c) -> out.put(n, c.metadata().getVersion()));
        return out;
    }
}
