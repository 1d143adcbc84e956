package dev.meshbridge.samples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.registry.consul.ConsulTestServer;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.samples.testing.DemoFiles;
import dev.meshbridge.samples.testing.WatchedRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The Spring Cloud service as the demo runs it: started with the environment {@code compose.yaml} gives its container
 * (registry addresses pointed at in-process servers), registered by Spring Cloud's own client, watched by the
 * bridge's real watcher configured with the demo's {@code bridge.yaml} entry, found healthy under the host the demo's
 * Ingress routes to, and answering at the endpoint the catalog lists.
 */
class HelloServiceTest {

    private static final DemoFiles DEMO = DemoFiles.locate();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void inEureka_withTheComposeEnvironment_isServedUnderTheEurekaRoute() throws Exception {
        try (EmbeddedEurekaServer eureka = EmbeddedEurekaServer.start()) {
            Map<String, String> env = new HashMap<>(DEMO.environment("hello-eureka"));
            assertThat(env).containsKey("EUREKA_SERVER_URL");
            env.put("EUREKA_SERVER_URL", eureka.serviceUrl() + "/");
            env.put("EUREKA_INSTANCE_IP_ADDRESS", "127.0.0.1");
            // the embedded server puts a Jersey client on this class path; the application itself has none and
            // talks to Eureka through Spring's RestTemplate, as here
            env.put("EUREKA_CLIENT_JERSEY_ENABLED", "false");
            try (ConfigurableApplicationContext app = start(env);
                    WatchedRegistry bridge = WatchedRegistry.start(DEMO.registry("eureka", eureka.serviceUrl()))) {
                assertServedAndAnswering(
                        app, bridge, DEMO.routeHost("/eureka"), "eureka at " + eureka.serviceUrl() + "/");
            }
        }
    }

    @Test
    void inConsul_withTheComposeEnvironment_isServedHealthyUnderTheConsulRoute() throws Exception {
        try (ConsulTestServer consul = ConsulTestServer.builder().start()) {
            Map<String, String> env = new HashMap<>(DEMO.environment("hello-consul"));
            assertThat(env).containsKeys("SPRING_CLOUD_CONSUL_HOST", "SPRING_CLOUD_CONSUL_PORT");
            env.put("SPRING_CLOUD_CONSUL_HOST", "127.0.0.1");
            env.put("SPRING_CLOUD_CONSUL_PORT", Integer.toString(consul.port()));
            env.put("SPRING_CLOUD_CONSUL_DISCOVERY_IP_ADDRESS", "127.0.0.1");
            try (ConfigurableApplicationContext app = start(env);
                    WatchedRegistry bridge = WatchedRegistry.start(DEMO.registry("consul", consul.address()))) {
                // healthy only once Consul's HTTP check of /actuator/health passes
                assertServedAndAnswering(
                        app, bridge, DEMO.routeHost("/consul"), "consul at 127.0.0.1:" + consul.port());
            }
        }
    }

    @Test
    void withoutProfile_runsUnregistered() throws Exception {
        try (ConfigurableApplicationContext app = start(new HashMap<>())) {
            JsonNode hello = get(app, "/hello");
            assertThat(hello.get("message").asText()).isEqualTo("hello, world");
            assertThat(hello.get("instance").asText()).isEqualTo("not registered");
            assertThat(hello.get("registry").asText()).isEqualTo("none");
        }
    }

    /** The application with {@code env} as its environment variables, on a free port. */
    private static ConfigurableApplicationContext start(Map<String, String> env) {
        Map<String, Object> variables = new HashMap<>(env);
        variables.put("SERVER_PORT", "0");
        StandardEnvironment environment = new StandardEnvironment();
        // named like the system environment, so Spring Boot maps SPRING_CLOUD_CONSUL_HOST to spring.cloud.consul.host
        environment
                .getPropertySources()
                .addFirst(new SystemEnvironmentPropertySource(
                        "compose-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
        SpringApplication app = new SpringApplication(HelloApplication.class);
        app.setEnvironment(environment);
        return app.run();
    }

    private static void assertServedAndAnswering(
            ConfigurableApplicationContext app, WatchedRegistry bridge, String routeHost, String registry)
            throws Exception {
        int port = port(app);
        MeshService service = bridge.awaitEndpoint(routeHost, "127.0.0.1", "http", port);
        assertThat(service.port("http")).isEqualTo(new ServicePort("http", 80, Protocol.HTTP));

        JsonNode hello = get(app, "/hello?name=compose");
        assertThat(hello.get("message").asText()).isEqualTo("hello, compose");
        assertThat(hello.get("service").asText()).isEqualTo("hello");
        assertThat(hello.get("instance").asText()).isEqualTo("127.0.0.1:" + port);
        assertThat(hello.get("registry").asText()).isEqualTo(registry);
    }

    private static JsonNode get(ConfigurableApplicationContext app, String path)
            throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(app) + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static int port(ConfigurableApplicationContext app) {
        return ((WebServerApplicationContext) app).getWebServer().getPort();
    }
}
