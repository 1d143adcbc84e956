package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.testing.TestPki;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
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

    /** ZooKeeper reads server TLS settings from system properties (QuorumPeerConfig copies unknown keys there). */
    private static final List<String> SERVER_PROPERTIES = List.of(
            "zookeeper.serverCnxnFactory",
            "zookeeper.ssl.keyStore.location",
            "zookeeper.ssl.keyStore.type",
            "zookeeper.ssl.trustStore.location",
            "zookeeper.ssl.trustStore.type",
            "zookeeper.ssl.clientAuth",
            "zookeeper.ssl.clientHostnameVerification");

    @TempDir
    static Path dir;

    private static TestingServer server;
    private static int securePort;
    private static TestPki ca;

    @BeforeAll
    static void start() throws Exception {
        ca = TestPki.ca("zookeeper-test-ca");
        Path serverPem =
                combined(ca.leaf("zookeeper").dns("localhost").ip("127.0.0.1").issue(), "server");
        Path caPem = ca.writeCa(dir.resolve("ca.pem"));
        try (ServerSocket s = new ServerSocket(0)) {
            securePort = s.getLocalPort();
        }
        InstanceSpec spec = new InstanceSpec(
                null,
                -1,
                -1,
                -1,
                true,
                -1,
                100,
                200,
                Map.ofEntries(
                        Map.entry("clientPortAddress", "127.0.0.1"),
                        Map.entry("secureClientPort", Integer.toString(securePort)),
                        Map.entry("secureClientPortAddress", "127.0.0.1"),
                        Map.entry("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory"),
                        Map.entry("ssl.keyStore.location", serverPem.toString()),
                        Map.entry("ssl.keyStore.type", "PEM"),
                        Map.entry("ssl.trustStore.location", caPem.toString()),
                        Map.entry("ssl.trustStore.type", "PEM"),
                        Map.entry("ssl.clientAuth", "need"),
                        Map.entry("ssl.clientHostnameVerification", "false"),
                        Map.entry("admin.enableServer", "false")),
                "127.0.0.1");
        server = new TestingServer(spec, true);
        // an application registers over the plain port, as most still do
        try (CuratorFramework writer = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + server.getPort())
                .retryPolicy(new RetryOneTime(100))
                .build()) {
            writer.start();
            writer.blockUntilConnected(10, TimeUnit.SECONDS);
            String url = "dubbo://10.0.13.1:20880/org.demo.Tls?application=vault&interface=org.demo.Tls";
            writer.create()
                    .creatingParentsIfNeeded()
                    .forPath("/dubbo/org.demo.Tls/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) server.close();
        SERVER_PROPERTIES.forEach(System::clearProperty);
    }

    /** A PEM key store as ZooKeeper reads it: the private key and the certificate chain in one file. */
    private static Path combined(TestPki.Issued issued, String name) throws Exception {
        Path cert = dir.resolve(name + ".crt");
        Path key = dir.resolve(name + ".key");
        issued.write(cert, key);
        return Files.writeString(dir.resolve(name + ".pem"), Files.readString(key) + Files.readString(cert));
    }

    @Test
    void clientCertificateOverTheSecurePort_syncs_andAWrongTrustStoreIsNamedWhileTheStateStays() throws Exception {
        Path clientPem =
                combined(ca.leaf("meshbridge").dns("localhost").ip("127.0.0.1").issue(), "client");
        Path trust = Files.copy(dir.resolve("ca.pem"), dir.resolve("client-trust.pem"));
        try (WatcherHarness h = WatcherHarness.start(
                "127.0.0.1:" + securePort,
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
                    .contains("127.0.0.1:" + securePort)
                    .containsAnyOf("PKIX", "certification path", "unable to find valid");
            assertThat(h.status.state()).isNotEqualTo(RegistryStatus.State.UP);
            assertThat(h.snapshot().services()).as("the last good state stays").containsKey("org.demo.tls.dubbo");
        }
    }
}
