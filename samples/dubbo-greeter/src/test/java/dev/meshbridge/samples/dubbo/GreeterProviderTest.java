package dev.meshbridge.samples.dubbo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.registry.nacos.NacosTestServer;
import dev.meshbridge.registry.zookeeper.ZkServer;
import dev.meshbridge.samples.testing.DemoFiles;
import dev.meshbridge.samples.testing.WatchedRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The greeter as the demo runs it: started with the environment {@code compose.yaml} gives its container (the
 * registry address pointed at an in-process server), watched by the bridge's real watcher configured with the demo's
 * {@code bridge.yaml} entry, found under the host the demo's Ingress routes to, and answering plain HTTP/1.1 and
 * HTTP/2 without TLS (h2c, as Envoy talks to a Triple port) at the endpoint the catalog lists.
 */
class GreeterProviderTest {

    private static final DemoFiles DEMO = DemoFiles.locate();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String INTERFACE_HOST = "dev.meshbridge.samples.dubbo.greeter.dubbo";
    private static final HttpClient HTTP1 = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private static final OkHttpClient H2C = new OkHttpClient.Builder()
            .protocols(List.of(okhttp3.Protocol.H2_PRIOR_KNOWLEDGE))
            .build();

    @AfterAll
    static void closeClients() {
        H2C.dispatcher().executorService().shutdown();
        H2C.connectionPool().evictAll();
    }

    @Test
    void inZooKeeper_withTheComposeEnvironment_isServedUnderTheDubboRoute() throws Exception {
        try (ZkServer zk = new ZkServer();
                GreeterProvider provider = start("dubbo-zookeeper", "zookeeper://" + zk.address());
                WatchedRegistry bridge = WatchedRegistry.start(DEMO.registry("zookeeper", zk.address()))) {
            assertServedAndAnswering(provider, bridge, DEMO.routeHost("/dubbo"), "greeter-zk");
        }
    }

    @Test
    void inNacos_withTheComposeEnvironment_isServedUnderTheNacosRoute() throws Exception {
        try (NacosTestServer nacos = NacosTestServer.builder().start();
                GreeterProvider provider = start("dubbo-nacos", "nacos://" + nacos.address());
                WatchedRegistry bridge = WatchedRegistry.start(DEMO.registry("nacos", nacos.address()))) {
            assertServedAndAnswering(provider, bridge, DEMO.routeHost("/nacos"), "greeter-nacos");
        }
    }

    @Test
    void settings_withoutRegistryAddress_areRefusedWithTheVariableName() {
        assertThatThrownBy(() -> GreeterProvider.Settings.fromEnvironment(Map.of()))
                .hasMessageContaining("REGISTRY_ADDRESS");
        assertThatThrownBy(() -> GreeterProvider.Settings.fromEnvironment(
                        Map.of("REGISTRY_ADDRESS", "zookeeper://zk:2181", "TRI_PORT", "tri")))
                .hasMessageContaining("TRI_PORT");
        assertThat(GreeterProvider.Settings.fromEnvironment(Map.of("REGISTRY_ADDRESS", "nacos://n:8848")))
                .isEqualTo(new GreeterProvider.Settings("nacos://n:8848", "greeter", 50051));
    }

    /** The provider with its container's environment, but this test's registry and a free Triple port. */
    private static GreeterProvider start(String composeService, String registryAddress) throws IOException {
        Map<String, String> env = new HashMap<>(DEMO.environment(composeService));
        assertThat(env).containsKey("REGISTRY_ADDRESS");
        env.put("REGISTRY_ADDRESS", registryAddress);
        env.put("TRI_PORT", Integer.toString(freePort()));
        return GreeterProvider.start(GreeterProvider.Settings.fromEnvironment(env));
    }

    private static void assertServedAndAnswering(
            GreeterProvider provider, WatchedRegistry bridge, String routeHost, String application) throws Exception {
        assertThat(provider.settings().application()).isEqualTo(application);
        // the application-level service, which the Ingress route names ...
        MeshService app = bridge.awaitEndpoint(routeHost, provider.host(), "tri", provider.port());
        assertThat(app.port("tri")).isEqualTo(new ServicePort("tri", 50051, Protocol.TRIPLE));
        // ... and the interface-level one, which both greeters share
        MeshService iface = bridge.awaitEndpoint(INTERFACE_HOST, provider.host(), "tri", provider.port());
        assertThat(iface.labels()).containsEntry("dubbo.interface", Greeter.class.getName());

        String base = "http://" + provider.instance();
        JsonNode viaHttp1 = http1(base + "/hello?name=compose");
        assertThat(viaHttp1.get("message").asText()).isEqualTo("hello, compose");
        assertThat(viaHttp1.get("service").asText()).isEqualTo(application);
        assertThat(viaHttp1.get("instance").asText()).isEqualTo(provider.instance());
        assertThat(viaHttp1.get("registry").asText())
                .isEqualTo(provider.settings().registryAddress());

        JsonNode viaH2c =
                h2c(new Request.Builder().url(base + "/hello?name=envoy").build());
        assertThat(viaH2c.get("message").asText()).isEqualTo("hello, envoy");
        assertThat(viaH2c.get("instance").asText()).isEqualTo(provider.instance());
        assertThat(http1(base + "/hello").get("message").asText()).isEqualTo("hello, world");
    }

    private static JsonNode http1(String uri) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP1.send(
                HttpRequest.newBuilder(URI.create(uri))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static JsonNode h2c(Request request) throws IOException {
        try (Response r = H2C.newCall(request).execute()) {
            String body = r.body().string();
            assertThat(r.protocol()).isEqualTo(okhttp3.Protocol.H2_PRIOR_KNOWLEDGE);
            assertThat(r.code()).as(body).isEqualTo(200);
            return JSON.readTree(body);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
