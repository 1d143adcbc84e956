package dev.meshbridge.registry.eureka;

import static dev.meshbridge.registry.eureka.testing.EurekaRegistrar.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.testing.TestPki;
import dev.meshbridge.core.tls.TlsFiles;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Eureka over HTTPS (the real Eureka server in Tomcat with a PEM certificate from a CA made in the test): the watcher
 * trusts that CA and presents its client certificate where Tomcat requires one; without the client certificate the
 * registry is down with the handshake named, and serves nothing.
 */
class EurekaTlsTest {

    @TempDir
    Path dir;

    private final TestCatalog catalog = new TestCatalog();
    private final TestPki ca = TestPki.ca("eureka-test-ca");
    private EmbeddedEurekaServer server;
    private EurekaWatcher watcher;
    private WatcherContext context;

    @AfterEach
    void stop() {
        if (watcher != null) watcher.close();
        catalog.close();
        if (server != null) server.close();
    }

    private void startServer() {
        Path cert = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        ca.leaf("eureka").dns("localhost").ip("127.0.0.1").issue().write(cert, key);
        server = EmbeddedEurekaServer.builder()
                .https(cert, key, ca.writeCa(dir.resolve("clients-ca.crt")))
                .start();
        server.registry()
                .register(springCloudInstance("orders", "10.0.7.1", 8080).build(), false);
    }

    private void watch(TlsFiles tls) {
        EurekaOptions options = EurekaOptions.builder()
                .fetchInterval(Duration.ofMillis(100))
                .maxBackoff(Duration.ofMillis(500))
                .tls(tls)
                .build();
        RegistryConfig config = RegistryConfig.of("eureka", "eu", List.of(server.serviceUrl()), options);
        context = catalog.context(config);
        watcher = new EurekaWatcher(context);
        watcher.start();
    }

    @Test
    void httpsWithACustomCaAndAClientCertificate_discovers() {
        startServer();
        Path cert = dir.resolve("client.crt");
        Path key = dir.resolve("client.key");
        ca.leaf("meshbridge").issue().write(cert, key);

        watch(new TlsFiles(cert, key, null, ca.writeCa(dir.resolve("ca.crt"))));

        assertThat(catalog.awaitService("orders.eureka").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.7.1");
        assertThat(server.serviceUrl()).startsWith("https://");
    }

    @Test
    void withoutTheClientCertificate_isDownWithTheHandshakeNamed_andServesNothing() {
        startServer();
        watch(new TlsFiles(null, null, null, ca.writeCa(dir.resolve("ca.crt"))));

        await().atMost(Duration.ofSeconds(20)).until(() -> context.status().lastError() != null);
        assertThat(context.status().lastError()).contains(server.serviceUrl());
        assertThat(catalog.snapshot().services()).isEmpty();
    }
}
