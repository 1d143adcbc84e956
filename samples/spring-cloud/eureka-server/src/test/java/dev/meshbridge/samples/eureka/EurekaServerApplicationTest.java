package dev.meshbridge.samples.eureka;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.appinfo.InstanceInfo;
import com.netflix.eureka.EurekaServerConfig;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import dev.meshbridge.samples.testing.DemoFiles;
import dev.meshbridge.samples.testing.WatchedRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The demo's Eureka server, read by the bridge's real Eureka watcher configured with the demo's {@code bridge.yaml}
 * entry: an instance registered the way a Spring Cloud client registers shows up, and its cancellation is seen within
 * the test's bounded wait (the server's read cache, 30 s by default, is off).
 */
class EurekaServerApplicationTest {

    private static final DemoFiles DEMO = DemoFiles.locate();

    @Test
    void registrationAndCancellation_reachTheBridgeWithoutCacheDelay() {
        SpringApplication application = new SpringApplication(EurekaServerApplication.class);
        try (ConfigurableApplicationContext server = application.run("--server.port=0")) {
            EurekaServerConfig config = server.getBean(EurekaServerConfig.class);
            assertThat(config.shouldUseReadOnlyResponseCache()).isFalse();
            assertThat(config.getWaitTimeInMsWhenSyncEmpty()).isZero();
            int port = ((WebServerApplicationContext) server).getWebServer().getPort();
            String serviceUrl = "http://127.0.0.1:" + port + "/eureka";
            try (EurekaRegistrar registrar = new EurekaRegistrar(serviceUrl);
                    WatchedRegistry bridge = WatchedRegistry.start(DEMO.registry("eureka", serviceUrl))) {
                InstanceInfo hello = EurekaRegistrar.springCloudInstance("HELLO", "10.0.0.7", 8080)
                        .build();
                registrar.register(hello);

                MeshService service = bridge.awaitEndpoint(DEMO.routeHost("/eureka"), "10.0.0.7", "http", 8080);
                assertThat(service.endpoints()).hasSize(1);

                registrar.cancel(hello);
                bridge.catalog().awaitAbsent(DEMO.routeHost("/eureka"));
            }
        }
    }
}
