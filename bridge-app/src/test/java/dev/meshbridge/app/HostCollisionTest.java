package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two Dubbo interfaces that differ only in case ({@code org.bad.Case}, {@code org.bad.CASE}), registered by Dubbo's own
 * registry code in a real ZooKeeper, map to one host under the default lower-casing template: the bridge serves one of
 * them on it, never a merge of both, and reports the other as a conflict on {@code /debug/catalog} and in {@code
 * meshbridge_catalog_conflicts} (issue 18).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class HostCollisionTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();

    @TempDir
    Path dir;

    @Test
    void twoInterfacesDifferingOnlyInCase_oneIsServed_theOtherIsAReportedConflict_neverMerged() throws Exception {
        try (ZkServer zk = new ZkServer();
                ZookeeperApps apps = new ZookeeperApps(zk)) {
            apps.registerDubboInterface("org.bad.Case", "lower", 20001, Map.of());
            apps.registerDubboInterface("org.bad.CASE", "upper", 20002, Map.of());
            Path file = dir.resolve("bridge.yaml");
            Files.writeString(file, """
                    admin: {port: 0}
                    xds: {port: 0, bindAddress: 127.0.0.1}
                    mcp: {enabled: false}
                    reload: {enabled: false}
                    data: {directory: ""}
                    registries:
                      - type: zookeeper
                        name: zk
                        addresses: ["%s"]
                    """.formatted(zk.address()));
            try (Bridge bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS)) {
                HttpClient http = HttpClient.newHttpClient();
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> get(http, bridge, "/metrics").contains("meshbridge_catalog_conflicts 1.0"));

                MeshService served = bridge.aggregator().flushNow().join().service("org.bad.case.dubbo");
                assertThat(served.endpoints())
                        .as("one interface's provider, not both")
                        .hasSize(1)
                        .extracting(Endpoint::ports)
                        .allSatisfy(ports -> assertThat(ports.values()).containsAnyOf(20001, 20002));
                assertThat(served.sources()).hasSize(1);
                String refused =
                        served.sources().first().name().equals("org.bad.Case") ? "org.bad.CASE" : "org.bad.Case";

                String page = get(http, bridge, "/debug/catalog?host=org.bad.case.dubbo");
                assertThat(page)
                        .contains("\"conflicts\"")
                        .contains("org.bad.case.dubbo")
                        .contains(refused);
            }
        }
    }

    private static String get(HttpClient http, Bridge bridge, String path) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort() + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }
}
