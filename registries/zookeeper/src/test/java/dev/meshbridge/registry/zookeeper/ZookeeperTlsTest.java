package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real ZooKeeper (curator-test) with its secure client port (Netty, {@code ssl.clientAuth=need}, PEM key and trust
 * stores made in the test): the watcher syncs over TLS with a client certificate; a trust store that does not hold the
 * server's CA gives a clear TLS error on the registry's status (what {@code /healthz} and {@code /debug/registries}
 * show) and the last good state stays.
 */
class ZookeeperTlsTest {

    @TempDir
    static Path dir;

    private static SecureZkServer server;

    @BeforeAll
    static void start() throws Exception {
        server = new SecureZkServer(dir);
        server.registerDubbo("org.demo.Tls", "10.0.13.1");
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) server.close();
    }

    @Test
    void clientCertificateOverTheSecurePort_syncs_andAWrongTrustStoreIsNamedWhileTheStateStays() throws Exception {
        Path clientPem = server.clientKeyStore("meshbridge");
        Path trust = Files.copy(server.caPem(), dir.resolve("client-trust.pem"));
        try (WatcherHarness h = WatcherHarness.start(
                server.secureAddress(),
                "zkServicesPath: [/dubbo]",
                "connectionTimeout: 2s",
                "tls: {keyStore: " + clientPem + ", keyStoreType: PEM, trustStore: " + trust
                        + ", trustStoreType: PEM}")) {
            assertThat(h.awaitService("org.demo.tls.dubbo", s -> true).endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.13.1");
            assertThat(h.status.state()).isEqualTo(RegistryStatus.State.UP);

            // the trust store is replaced by one of another CA; the next connection cannot verify the server
            TestPki.ca("another-ca").writeCa(trust);
            server.restart();

            await().atMost(ZkServer.timeout())
                    .until(() ->
                            h.status.lastError() != null && h.status.lastError().contains("TLS handshake"));
            assertThat(h.status.lastError())
                    .contains(server.secureAddress())
                    .containsAnyOf("PKIX", "certification path", "unable to find valid");
            assertThat(h.status.state()).isNotEqualTo(RegistryStatus.State.UP);
            assertThat(h.snapshot().services()).as("the last good state stays").containsKey("org.demo.tls.dubbo");
        }
    }
}
