package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.McpServerIstiodTest.DUBBO_AND_TRI;
import static dev.meshbridge.mcp.McpServerIstiodTest.demoApp;
import static dev.meshbridge.mcp.McpServerIstiodTest.greeter;
import static dev.meshbridge.mcp.McpServerIstiodTest.orders;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Timestamp;
import com.google.protobuf.util.JsonFormat;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What istiod receives for a Dubbo interface service, a Dubbo application service and a Spring Cloud service, in
 * both endpoint modes: each resource as the {@code istio.mcp.v1alpha1.Resource} on the wire, printed as JSON (creation
 * time fixed at 2024-05-01T10:00:00Z).
 *
 * <p>After an intended change, regenerate with {@code ./mvnw -pl mcp-server -am verify -Dtest=GoldenFilesTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dgolden.update=true} and review the diff of {@code
 * src/test/resources/golden}.
 */
class GoldenFilesTest {

    static final Timestamp CREATED =
            Timestamp.newBuilder().setSeconds(1714557600L).build();

    static final JsonFormat.Printer JSON = JsonFormat.printer()
            .usingTypeRegistry(JsonFormat.TypeRegistry.newBuilder()
                    .add(Resource.getDescriptor())
                    .add(ServiceEntry.getDescriptor())
                    .add(WorkloadEntry.getDescriptor())
                    .build())
            .sortingMapKeys();

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (EndpointMode mode : EndpointMode.values()) {
            String suffix = mode == EndpointMode.INLINE ? "inline" : "workload-entry";
            out.add(Arguments.of("dubbo-interface." + suffix, greeter(), mode));
            out.add(Arguments.of("dubbo-application." + suffix, demoApp(DUBBO_AND_TRI), mode));
            out.add(Arguments.of("spring-cloud." + suffix, orders(), mode));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void translation_matchesTheGoldenFile(String name, ServiceUpsert registration, EndpointMode mode) throws Exception {
        MeshService service;
        try (TestCatalog catalog = new TestCatalog()) {
            catalog.aggregator().accept(registration);
            service = catalog.awaitService(registration.host());
        }
        ServiceTranslation t = new ServiceEntryTranslator(
                        McpOptions.builder().endpointMode(mode).build())
                .translate(service);
        assertThat(t.problems()).isEmpty();

        StringBuilder json = new StringBuilder("[\n");
        for (int i = 0; i < t.resources().size(); i++) {
            if (i > 0) json.append(",\n");
            json.append(JSON.print(t.resources().get(i).toResource(CREATED)));
        }
        assertGolden(name, json.append("\n]\n").toString());
    }

    /**
     * Compares {@code actual} with {@code src/test/resources/golden/<name>.json}; writes the file first when the system
     * property {@code golden.update} is true.
     */
    static void assertGolden(String name, String actual) throws java.io.IOException {
        Path file = Path.of("src/test/resources/golden", name + ".json");
        if (Boolean.getBoolean("golden.update")) {
            Files.createDirectories(file.getParent());
            Files.writeString(file, actual, StandardCharsets.UTF_8);
        }
        assertThat(file).exists();
        assertThat(actual).isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
    }
}
