package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.testing.TestPki;
import dev.meshbridge.registry.zookeeper.SecureZkServer;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole bridge over a real ZooKeeper's secure client port ({@link SecureZkServer}: Netty, client certificates
 * required), seen over HTTP as an operator sees it: after a good sync, a trust store that no longer holds the server's
 * CA (the file rotated to another CA, or a config reload naming another one) is named on {@code /healthz} and {@code
 * /debug/registries}, and {@code /debug/catalog} keeps serving the last good endpoints.
 */
class ZookeeperTlsBridgeTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    private static final Duration WAIT = Duration.ofSeconds(40);

    @TempDir
    Path dir;

    private final AdminPages admin = new AdminPages(() -> this.bridge.adminPort());
    private SecureZkServer zk;
    private Bridge bridge;
    private Path clientPem;

    @BeforeEach
    void start() throws Exception {
        zk = new SecureZkServer(dir);
        zk.registerDubbo("org.demo.Tls", "10.0.13.1");
        clientPem = zk.clientKeyStore("meshbridge");
    }

    @AfterEach
    void stop() throws Exception {
        if (bridge != null) bridge.close();
        if (zk != null) zk.close();
    }

    private Path writeConfig(Path trust) throws Exception {
        return Files.writeString(dir.resolve("bridge.yaml"), """
                admin: {port: 0}
                mcp: {enabled: false}
                xds: {bindAddress: 127.0.0.1, port: 0}
                reload: {interval: 200ms}
                registries:
                  - type: zookeeper
                    name: zk-tls
                    addresses: ["%s"]
                    zkServicesPath: [/dubbo]
                    connectionTimeout: 2s
                    tls: {keyStore: %s, keyStoreType: PEM, trustStore: %s, trustStoreType: PEM}
                """.formatted(zk.secureAddress(), clientPem, trust));
    }

    private Path startBridge(Path trust) throws Exception {
        Path file = writeConfig(trust);
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
        await().atMost(WAIT).until(() -> admin.servedAddresses("org.demo.tls").equals(List.of("10.0.13.1")));
        assertThat(admin.registryStates()).containsExactly("UP");
        assertThat(admin.get("/healthz").body()).doesNotContain("TLS handshake");
        return file;
    }

    /** The TLS failure is named over HTTP on both pages, and the last good endpoints stay in the catalog. */
    private void assertTlsErrorShown_andLastGoodStateServed() throws Exception {
        await().atMost(WAIT).until(() -> admin.registryError().contains("TLS handshake"));
        assertThat(admin.registryError())
                .contains(zk.secureAddress())
                .containsAnyOf("PKIX", "certification path", "unable to find valid");
        HttpResponse<String> healthz = admin.get("/healthz");
        assertThat(healthz.body()).contains("zk-tls").contains("TLS handshake");
        assertThat(admin.registryStates()).doesNotContain("UP");
        assertThat(admin.servedAddresses("org.demo.tls"))
                .as("the last good endpoints stay served")
                .containsExactly("10.0.13.1");
    }

    @Test
    void trustStoreFileRotatedToAnotherCa_errorOnHealthzAndDebugRegistries_lastGoodEndpointsServed() throws Exception {
        Path trust = Files.copy(zk.caPem(), dir.resolve("client-trust.pem"));
        startBridge(trust);

        // the trust store file is replaced by one of another CA; the next connection cannot verify the server
        TestPki.ca("another-ca").writeCa(trust);
        zk.restart();

        assertTlsErrorShown_andLastGoodStateServed();
    }

    @Test
    void configReloadNamingAWrongTrustStore_errorOnHealthzAndDebugRegistries_lastGoodEndpointsServed()
            throws Exception {
        Path trust = Files.copy(zk.caPem(), dir.resolve("client-trust.pem"));
        startBridge(trust);

        // the file is edited at run time to name a trust store of another CA: the registry reconnects with it
        Path wrong = TestPki.ca("another-ca").writeCa(dir.resolve("wrong-trust.pem"));
        writeConfig(wrong);

        assertTlsErrorShown_andLastGoodStateServed();
    }
}
