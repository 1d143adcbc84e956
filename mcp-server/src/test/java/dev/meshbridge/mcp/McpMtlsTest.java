package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.ZookeeperRegistrations.providerUrl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.TlsOptions;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.testing.TestPki;
import dev.meshbridge.core.tls.TlsFiles;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MCP server over mutual TLS, as istiod reaches it with a {@code configSources} entry whose {@code tlsSettings}
 * say {@code MUTUAL}: the istiod-like client with istiod's SPIFFE identity syncs every type; one allowed by a DNS SAN
 * glob too; one whose SANs match neither list gets {@code PERMISSION_DENIED} and no resource. The server's key is RSA
 * and encrypted, opened with {@code keyPassword}.
 */
class McpMtlsTest {

    private static final String SE = "networking.istio.io/v1/ServiceEntry";
    private static final String GREETER = "org.apache.dubbo.demo.GreetingService";

    @TempDir
    Path tmp;

    private final TestPki ca = TestPki.ca("istio-test-ca");
    private final TestCatalog catalog = new TestCatalog();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private McpServer server;

    @BeforeEach
    void start() throws Exception {
        TestPki.Issued serverCert = ca.leaf("meshbridge")
                .dns("localhost")
                .dns("meshbridge.meshbridge.svc")
                .rsa()
                .issue();
        Path cert = tmp.resolve("tls.crt");
        Path key = tmp.resolve("tls.key");
        serverCert.write(cert, key);
        serverCert.writeEncryptedKey(key, "mcp-key-password".toCharArray());
        TlsOptions tls = TlsOptions.mutual(
                new TlsFiles(cert, key, Secret.literal("mcp-key-password"), ca.writeCa(tmp.resolve("ca.crt"))),
                List.of("spiffe://cluster.local/ns/istio-system/sa/istiod"),
                List.of("*.istio-system.svc"));
        server = new McpServer(
                McpOptions.defaults().toBuilder()
                        .bindAddress("127.0.0.1")
                        .port(0)
                        .tls(tls)
                        .build(),
                meters);
        closeables.add(server);
        server.start();
        catalog.aggregator().subscribe(server).join();
        catalog.aggregator()
                .accept(ZookeeperRegistrations.dubboInterface(
                        List.of(providerUrl("dubbo", "10.0.0.11", 20880, GREETER, "version=1.0.0"))));
        catalog.aggregator().flushNow().thenRun(server::markCatalogReady).join();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeables.reversed()) c.close();
        catalog.close();
    }

    private IstiodMcpClient istiod(TestPki.Issued identity) throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forAddress("localhost", server.port())
                .sslContext(GrpcSslContexts.forClient()
                        .trustManager(ca.certificate())
                        .keyManager(identity.keyPair().getPrivate(), identity.certificate(), identity.issuer())
                        .build())
                .maxInboundMessageSize(Integer.MAX_VALUE)
                .build();
        IstiodMcpClient client = new IstiodMcpClient(channel, IstiodMcpClient.PILOT_TYPES_1_24);
        closeables.add(client);
        return client.start();
    }

    private McpServer.DebugView debug() {
        return (McpServer.DebugView) server.debugSource().debug(java.util.Map.of());
    }

    @Test
    void istiodWithItsSpiffeIdentity_syncsEveryType_overMutualTls() throws Exception {
        IstiodMcpClient istiod = istiod(ca.leaf("istiod")
                .uri("spiffe://cluster.local/ns/istio-system/sa/istiod")
                .issue());
        istiod.awaitSynced();

        assertThat(istiod.configs(SE)).hasSize(1);
        assertThat(istiod.error()).isNull();
        McpServer.DebugView view = debug();
        assertThat(view.tls().mode()).isEqualTo("mtls");
        assertThat(view.tls().certificate().subject()).isEqualTo("CN=meshbridge");
        assertThat(view.tls().allowedUriSans()).containsExactly("spiffe://cluster.local/ns/istio-system/sa/istiod");
        assertThat(view.clients()).hasSize(1);
    }

    @Test
    void aClientAllowedByADnsSanGlob_syncs() throws Exception {
        IstiodMcpClient istiod =
                istiod(ca.leaf("istiod").dns("istiod.istio-system.svc").issue());
        istiod.awaitSynced();
        assertThat(istiod.configs(SE)).hasSize(1);
    }

    @Test
    void aClientOutsideBothAllowLists_isDeniedAndGetsNothing() throws Exception {
        IstiodMcpClient intruder = istiod(ca.leaf("intruder")
                .uri("spiffe://cluster.local/ns/default/sa/istiod")
                .dns("istiod.default.svc")
                .issue());
        await().atMost(Duration.ofSeconds(30)).until(() -> intruder.error() != null);

        assertThat(Status.fromThrowable(intruder.error()).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(intruder.responses(SE)).isEmpty();
        assertThat(meters.find("meshbridge.mcp.tls.refused")
                        .tag("reason", "san_not_allowed")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(debug().tls().recentRefusals())
                .singleElement()
                .satisfies(r -> assertThat(r.sans())
                        .containsExactly("URI:spiffe://cluster.local/ns/default/sa/istiod", "DNS:istiod.default.svc"));
        assertThat(debug().clients()).isEmpty();
    }
}
