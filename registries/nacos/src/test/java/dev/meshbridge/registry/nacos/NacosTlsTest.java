package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.naming.NamingService;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nacos over TLS: the test server serves its gRPC port (netty) and its HTTP API over TLS with certificates made here;
 * an application registers through the real nacos-client with its own {@code nacos.remote.client.rpc.tls.*}
 * properties, and the watcher reads it through nacos-client's gRPC (subscriptions) and its own HTTPS calls (the
 * namespace list of {@code nacosNamespaceId: "*"} and the service lists of {@code nacosGroups: ["*"]}).
 */
class NacosTlsTest {

    private static final String HOST = "orders.default-group.public.nacos";

    @TempDir
    Path dir;

    private final TestPki ca = TestPki.ca("nacos-test-ca");
    private final TestCatalog catalog = new TestCatalog();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private NacosTestServer server;

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing.reversed()) c.close();
        catalog.close();
        if (server != null) server.close();
    }

    /** A server whose certificate {@link #ca} signs; with {@code mtls}, clients must present one it signs too. */
    private void startServer(boolean mtls) {
        Path cert = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        ca.leaf("nacos").dns("localhost").ip("127.0.0.1").issue().write(cert, key);
        server = NacosTestServer.builder()
                .tls(cert, key, mtls ? ca.writeCa(dir.resolve("clients-ca.crt")) : null)
                .start();
    }

    /** An application registering with the real nacos-client over TLS (and its client certificate with mTLS). */
    private void register(boolean mtls) throws Exception {
        Properties p = new Properties();
        p.setProperty("nacos.remote.client.rpc.tls.enable", "true");
        p.setProperty(
                "nacos.remote.client.rpc.tls.trustCollectionChainPath",
                ca.writeCa(dir.resolve("app-ca.crt")).toUri().toString());
        if (mtls) {
            Path cert = dir.resolve("app.crt");
            Path key = dir.resolve("app.key");
            ca.leaf("orders-app").issue().write(cert, key);
            p.setProperty("nacos.remote.client.rpc.tls.mutualAuth", "true");
            p.setProperty(
                    "nacos.remote.client.rpc.tls.certChainFile", cert.toUri().toString());
            p.setProperty(
                    "nacos.remote.client.rpc.tls.certPrivateKey", key.toUri().toString());
        }
        NamingService app = NacosTestSupport.registrant(server.address(), "public", p);
        closing.add(() -> NacosTestSupport.shutDown(app));
        app.registerInstance("orders", springCloudInstance("10.60.0.1", 8080));
    }

    private WatcherContext watch(String name, String... tlsLines) {
        // every namespace and group: the namespace list and the service lists are the watcher's own HTTPS calls
        List<String> fields = new ArrayList<>(
                List.of("nacosNamespaceId: \"*\"", "nacosGroups: [\"*\"]", "nacosRefreshInterval: 200ms", "tls:"));
        for (String l : tlsLines) fields.add("  " + l);
        RegistryConfig config = NacosTestSupport.config(name, server.address(), fields.toArray(String[]::new));
        WatcherContext context = catalog.context(config);
        NacosWatcher watcher = new NacosWatcher(config, context);
        closing.add(watcher);
        watcher.start();
        return context;
    }

    @Test
    void overTls_anApplicationRegistersWithNacosClient_andTheWatcherSyncs() throws Exception {
        startServer(false);
        register(false);
        Path caFile = ca.writeCa(dir.resolve("ca.crt"));

        watch("nacos-tls", "caFile: " + caFile);

        assertThat(catalog.awaitService(HOST, s -> s.endpoints().size() == 1).endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.60.0.1");
        assertThat(server.instances("public", "DEFAULT_GROUP", "orders")).hasSize(1);
    }

    @Test
    void aServerCertificateForAnotherHost_isRefusedByTheWatchersHttps_whileNacosClientAcceptsIt() throws Exception {
        Path cert = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        ca.leaf("nacos").dns("nacos.elsewhere.example").issue().write(cert, key);
        server = NacosTestServer.builder().tls(cert, key, null).start();

        // a finding, not a wish: nacos-client 3.1.1's gRPC TLS checks the chain but not the host name, so the
        // application registers at 127.0.0.1 with a certificate for another host
        register(false);
        await().atMost(TestCatalog.TIMEOUT)
                .until(() ->
                        server.instances("public", "DEFAULT_GROUP", "orders").size() == 1);
        WatcherContext context = watch("nacos-wrong-host", "caFile: " + ca.writeCa(dir.resolve("ca.crt")));

        await().atMost(TestCatalog.TIMEOUT).until(() -> context.status().lastError() != null);
        assertThat(context.status().lastError()).contains("TLS handshake failed");
        assertThat(catalog.snapshot().services()).isEmpty();
    }

    @Test
    void mutualTls_withAClientCertificate_syncs() throws Exception {
        startServer(true);
        register(true);
        Path cert = dir.resolve("bridge.crt");
        Path key = dir.resolve("bridge.key");
        ca.leaf("meshbridge").issue().write(cert, key);

        watch("nacos-mtls", "caFile: " + ca.writeCa(dir.resolve("ca.crt")), "certFile: " + cert, "keyFile: " + key);

        assertThat(catalog.awaitService(HOST, s -> s.endpoints().size() == 1).endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.60.0.1");
    }

    @Test
    void aRotatedClientCertificate_isPresentedOnTheNextConnections_ofBothChannels() throws Exception {
        startServer(true);
        register(true);
        Path cert = dir.resolve("bridge.crt");
        Path key = dir.resolve("bridge.key");
        ca.leaf("meshbridge").serial(1001).issue().write(cert, key);
        watch(
                "nacos-rotating",
                "caFile: " + ca.writeCa(dir.resolve("ca.crt")),
                "certFile: " + cert,
                "keyFile: " + key,
                "reloadInterval: 100ms");
        catalog.awaitService(HOST, s -> s.endpoints().size() == 1);
        java.math.BigInteger first = java.math.BigInteger.valueOf(1001);
        assertThat(server.clientSerials("grpc")).contains(first);
        assertThat(server.clientSerials("http")).contains(first);

        // cert-manager writes the renewed certificate; the connections open now (after a restart) present it
        ca.leaf("meshbridge").serial(1002).issue().write(cert, key);
        server.restart();

        java.math.BigInteger renewed = java.math.BigInteger.valueOf(1002);
        await().atMost(TestCatalog.TIMEOUT)
                .until(() -> server.clientSerials("grpc").contains(renewed)
                        && server.clientSerials("http").contains(renewed));
        assertThat(catalog.service(HOST).endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.60.0.1");
    }

    @Test
    void mutualTls_withoutAClientCertificate_isRefused_withTheHandshakeNamed() throws Exception {
        startServer(true);
        register(true);

        WatcherContext context = watch("nacos-no-cert", "caFile: " + ca.writeCa(dir.resolve("ca.crt")));

        await().atMost(TestCatalog.TIMEOUT).until(() -> context.status().lastError() != null);
        // the HTTP client may see the server's certificate_required alert, or only the closed connection (then the
        // watcher's own handshake names it); nacos-client's gRPC failure is named by that handshake too
        assertThat(context.status().lastError())
                .containsAnyOf("certificate_required", "it may want a client certificate")
                .containsAnyOf("127.0.0.1:" + server.port(), "127.0.0.1:" + (server.port() + 1000));
        assertThat(context.status().state()).isNotEqualTo(RegistryStatus.State.UP);
        assertThat(catalog.snapshot().services()).isEmpty();
    }

    @Test
    void aWrongCa_afterARotation_isNamedOnTheStatus_andTheLastGoodStateStays() throws Exception {
        startServer(false);
        register(false);
        Path caFile = ca.writeCa(dir.resolve("ca.crt"));
        WatcherContext context = watch("nacos-rotated", "caFile: " + caFile, "reloadInterval: 100ms");
        catalog.awaitService(HOST, s -> s.endpoints().size() == 1);

        // the CA file is replaced by one that did not sign the server's certificate; new connections use it
        TestPki.ca("someone-else").writeCa(caFile);
        server.restart();

        await().atMost(TestCatalog.TIMEOUT)
                .until(() -> context.status().lastError() != null
                        && context.status().lastError().contains("TLS handshake failed"));
        assertThat(context.status().lastError()).contains("tls.caFile");
        assertThat(context.status().state()).isEqualTo(RegistryStatus.State.DOWN);
        assertThat(catalog.service(HOST).endpoints())
                .as("the last good state stays")
                .extracting(Endpoint::address)
                .containsExactly("10.60.0.1");
    }

    @Test
    void aTlsBlock_withoutACaFile_orWithAKeyNacosClientCannotRead_isRefusedNamingTheField() throws Exception {
        Path cert = dir.resolve("c.crt");
        Path key = dir.resolve("c.key");
        ca.leaf("meshbridge").issue().write(cert, key);
        assertThatThrownBy(() -> NacosTestSupport.config(
                        "n", "127.0.0.1:8848", "tls:", "  certFile: " + cert, "  keyFile: " + key))
                .hasMessageContaining("caFile")
                .hasMessageContaining("is required");

        // the same key in SEC1 form ("BEGIN EC PRIVATE KEY"), which netty inside nacos-client cannot read
        Path sec1 = dir.resolve("sec1.key");
        Files.writeString(
                sec1,
                Files.readString(key)
                        .replace("BEGIN PRIVATE KEY", "BEGIN EC PRIVATE KEY")
                        .replace("END PRIVATE KEY", "END EC PRIVATE KEY"));
        assertThatThrownBy(() -> NacosTestSupport.config(
                        "n",
                        "127.0.0.1:8848",
                        "tls:",
                        "  caFile: " + ca.writeCa(dir.resolve("ca.crt")),
                        "  certFile: " + cert,
                        "  keyFile: " + sec1))
                .hasMessageContaining("keyFile")
                .hasMessageContaining("PKCS#8");
    }
}
