package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.net.HostAndPort;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.ManualTicker;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.model.agent.ImmutableRegCheck;
import org.kiwiproject.consul.model.agent.ImmutableRegistration;
import org.kiwiproject.consul.model.agent.Registration;

/**
 * The shared scenarios against {@link ConsulTestServer} (a fresh server per test), plus what only the test server can
 * show here: Enterprise namespaces, TLS with a client certificate, and the watcher's lifecycle.
 */
class ConsulWatcherTest extends ConsulWatcherScenarios {

    private TestServerEnvironment env;

    @BeforeEach
    void startServer() throws Exception {
        env = new TestServerEnvironment();
    }

    @Override
    protected void afterScenario() {
        env.close();
    }

    @Override
    protected ConsulEnvironment env() {
        return env;
    }

    @Test
    void enterpriseNamespace_scopesTheWatchToThatNamespace() throws Exception {
        try (ConsulTestServer ent =
                ConsulTestServer.builder().enterprise().acl("root").start()) {
            Consul teamA = namespaced(ent, "team-a");
            Consul teamB = namespaced(ent, "team-b");
            teamA.agentClient().register(registration(svc("orders"), "10.0.0.1"));
            teamB.agentClient().register(registration(svc("billing"), "10.0.0.2"));

            RegistryStatus status = watch(
                    "c1",
                    List.of(ent.address()),
                    "consulToken: root",
                    "consulNamespace: team-a",
                    "hostTemplate: '{service}.{namespace}.{datacenter}.consul'");

            MeshService orders = awaitService(svc("orders") + ".team-a.dc1.consul", endpoints(1));
            await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);
            assertThat(orders.endpoints().get(0).address()).isEqualTo("10.0.0.1");
            assertThat(orders.endpoints().get(0).health()).isEqualTo(Health.HEALTHY);
            teamA.destroy();
            teamB.destroy();
        }
    }

    private static Consul namespaced(ConsulTestServer server, String namespace) {
        return Consul.builder()
                .withHostAndPort(HostAndPort.fromString(server.address()))
                .withTokenAuth("root")
                .withHeaders(Map.of("X-Consul-Namespace", namespace))
                .build();
    }

    private static Registration registration(String name, String address) {
        return ImmutableRegistration.builder()
                .id(name + "-1")
                .name(name)
                .address(address)
                .port(8080)
                .check(ImmutableRegCheck.builder().ttl("60s").status("passing").build())
                .build();
    }

    @Test
    void tls_withCaAndClientCertificate_discoversOverHttps() throws Exception {
        HeldCertificate ca = new HeldCertificate.Builder()
                .certificateAuthority(0)
                .commonName("Consul Agent CA")
                .build();
        HeldCertificate serverCert = new HeldCertificate.Builder()
                .signedBy(ca)
                .addSubjectAlternativeName("server.dc1.consul")
                .commonName("server.dc1.consul")
                .build();
        HeldCertificate clientCert = new HeldCertificate.Builder()
                .signedBy(ca)
                .commonName("meshbridge")
                .build();
        HandshakeCertificates serverSide = new HandshakeCertificates.Builder()
                .heldCertificate(serverCert)
                .addTrustedCertificate(ca.certificate())
                .build();
        Path caFile = Files.writeString(tmp.resolve("ca.pem"), ca.certificatePem());
        Path certFile = Files.writeString(tmp.resolve("client.pem"), clientCert.certificatePem());
        Path keyFile = Files.writeString(tmp.resolve("client-key.pem"), clientCert.privateKeyPkcs8Pem());

        try (ConsulTestServer secure = ConsulTestServer.builder()
                .tls(serverSide.sslContext(), true)
                .acl("root")
                .start()) {
            Consul admin = Consul.builder()
                    .withHttps(true)
                    .withHostAndPort(HostAndPort.fromString(secure.address()))
                    .withSslContext(new HandshakeCertificates.Builder()
                            .heldCertificate(clientCert)
                            .addTrustedCertificate(ca.certificate())
                            .build()
                            .sslContext())
                    .withTrustManager(serverSide.trustManager())
                    .withHostnameVerifier((host, session) -> true)
                    .withTokenAuth("root")
                    .build();
            admin.agentClient().register(registration(svc("vault"), "10.0.0.5"));
            admin.destroy();

            watch(
                    "c1",
                    List.of(secure.address()),
                    "consulToken: root",
                    "tls: {caFile: " + caFile + ", certFile: " + certFile + ", keyFile: " + keyFile
                            + ", serverName: server.dc1.consul}");

            MeshService vault = awaitService(svc("vault") + ".dc1.consul", endpoints(1));
            assertThat(vault.endpoints().get(0).address()).isEqualTo("10.0.0.5");
        }
    }

    @Test
    void tls_rotatedClientCertificate_isPresentedOnTheNextConnection_withoutARestart() throws Exception {
        HeldCertificate ca = new HeldCertificate.Builder()
                .certificateAuthority(0)
                .commonName("Consul Agent CA")
                .build();
        HeldCertificate serverCert = new HeldCertificate.Builder()
                .signedBy(ca)
                .addSubjectAlternativeName("server.dc1.consul")
                .build();
        HeldCertificate first = new HeldCertificate.Builder()
                .signedBy(ca)
                .serialNumber(1001)
                .commonName("meshbridge")
                .build();
        HeldCertificate rotated = new HeldCertificate.Builder()
                .signedBy(ca)
                .serialNumber(2002)
                .commonName("meshbridge")
                .build();
        HandshakeCertificates serverSide = new HandshakeCertificates.Builder()
                .heldCertificate(serverCert)
                .addTrustedCertificate(ca.certificate())
                .build();
        Path caFile = Files.writeString(tmp.resolve("ca.pem"), ca.certificatePem());
        Path certFile = Files.writeString(tmp.resolve("client.pem"), first.certificatePem());
        Path keyFile = Files.writeString(tmp.resolve("client-key.pem"), first.privateKeyPkcs8Pem());

        try (ConsulTestServer secure =
                ConsulTestServer.builder().tls(serverSide.sslContext(), true).start()) {
            Consul admin = Consul.builder()
                    .withHttps(true)
                    .withHostAndPort(HostAndPort.fromString(secure.address()))
                    .withSslContext(new HandshakeCertificates.Builder()
                            .heldCertificate(first)
                            .addTrustedCertificate(ca.certificate())
                            .build()
                            .sslContext())
                    .withTrustManager(serverSide.trustManager())
                    .withHostnameVerifier((host, session) -> true)
                    .build();
            admin.agentClient().register(registration(svc("vault"), "10.0.0.5"));
            admin.destroy();
            java.time.Duration reloadInterval = java.time.Duration.ofMillis(50);
            watch(
                    "c1",
                    List.of(secure.address()),
                    "tls: {caFile: " + caFile + ", certFile: " + certFile + ", keyFile: " + keyFile
                            + ", serverName: server.dc1.consul, reloadInterval: " + reloadInterval.toMillis() + "ms}");
            awaitService(svc("vault") + ".dc1.consul", endpoints(1));
            assertThat(secure.clientSerials()).containsExactly(java.math.BigInteger.valueOf(1001));

            // cert-manager writes the new pair; the connections Consul drops are made again with it. The files are
            // checked at most every reloadInterval: a connection made sooner after the watcher's last handshake may
            // still use the old pair (OkHttp retries a dropped keep-alive connection at once, and on a loaded machine
            // the restarted server may already accept it), so Consul restarts once the interval has passed
            Files.writeString(keyFile, rotated.privateKeyPkcs8Pem());
            Files.writeString(certFile, rotated.certificatePem());
            long written = System.nanoTime();
            // the condition is the interval itself: no event tells the test that a check would now see the files
            await().atMost(java.time.Duration.ofSeconds(5))
                    .pollInterval(java.time.Duration.ofMillis(10))
                    .until(() -> System.nanoTime() - written
                            >= reloadInterval.multipliedBy(2).toNanos());
            secure.stop();
            secure.restart();

            await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> secure.clientSerials().contains(java.math.BigInteger.valueOf(2002)));
        }
    }

    @Test
    void tls_withoutTheClientCertificate_isDownWithTheHandshakeError() throws Exception {
        HeldCertificate ca =
                new HeldCertificate.Builder().certificateAuthority(0).build();
        HeldCertificate serverCert = new HeldCertificate.Builder()
                .signedBy(ca)
                .addSubjectAlternativeName("server.dc1.consul")
                .build();
        Path caFile = Files.writeString(tmp.resolve("ca.pem"), ca.certificatePem());
        try (ConsulTestServer secure = ConsulTestServer.builder()
                .tls(
                        new HandshakeCertificates.Builder()
                                .heldCertificate(serverCert)
                                .addTrustedCertificate(ca.certificate())
                                .build()
                                .sslContext(),
                        true)
                .start()) {
            RegistryStatus status = watch(
                    "c1",
                    List.of(secure.address()),
                    null,
                    "tls: {caFile: " + caFile + ", serverName: server.dc1.consul}");

            awaitState(status, RegistryStatus.State.DOWN);

            assertThat(status.lastError()).contains("cannot reach Consul").contains(secure.address());
        }
    }

    @Test
    void outage_retriesOnlyAsTheInjectedTickerAdvances_thenResyncs() throws Exception {
        ManualTicker ticker = new ManualTicker();
        ttlInstance("web", "web-1", "10.0.0.1", 8080);
        RegistryStatus status =
                watch(new WatcherRuntime(ticker, dev.meshbridge.core.watch.HostResolver.Lookup.SYSTEM), "c1");
        awaitService(host("web", dc1()), endpoints(1));
        await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);

        env.stopConsul();
        awaitState(status, RegistryStatus.State.DOWN);
        // every failed query waits for its backoff on the ticker: nothing is retried while time stands still
        await().atMost(TestCatalog.TIMEOUT).until(() -> ticker.pending() >= 2);
        env.startConsul();
        ttlInstance("web", "web-2", "10.0.0.2", 8080);
        await().during(java.time.Duration.ofMillis(300))
                .atMost(java.time.Duration.ofSeconds(15))
                .until(() -> status.state() == RegistryStatus.State.DOWN);

        ticker.advance(java.time.Duration.ofSeconds(1)); // the first backoff is at most the initial 200 ms
        awaitState(status, RegistryStatus.State.UP);
        MeshService web = awaitService(host("web", dc1()), endpoints(2));
        assertThat(web.endpoints()).extracting(e -> e.address()).containsExactly("10.0.0.1", "10.0.0.2");
    }

    @Test
    void close_isIdempotentAndSendsNothingAfterwards() throws Exception {
        ttlInstance("web", "web-1", "10.0.0.1", 8080);
        ConsulRegistryProvider provider = new ConsulRegistryProvider();
        ConsulOptions options = new ConsulOptions(
                List.of(),
                java.util.Optional.of(dev.meshbridge.core.config.Secret.literal(TestServerEnvironment.TOKEN)),
                "",
                "",
                List.of(),
                List.of(svc("*")),
                ConsulOptions.DEFAULT_DENY,
                java.time.Duration.ofSeconds(2),
                ConsulOptions.Consistency.STALE,
                ConsulOptions.WarningHealth.HEALTHY,
                ConsulOptions.BareTags.LABEL,
                ConsulOptions.defaults().hostTemplate(),
                dev.meshbridge.core.model.Protocol.HTTP,
                "zone",
                java.util.Optional.empty());
        RegistryConfig config = RegistryConfig.of("consul", "c1", List.of(env.address()), options);
        RecordingSink sink = new RecordingSink();
        RegistryStatus status = new RegistryStatus("c1", "consul");
        ConsulWatcher watcher = (ConsulWatcher) provider.create(config, new WatcherContext(config, sink, status));
        watcher.start();
        sink.awaitEvent(e -> e instanceof dev.meshbridge.core.spi.RegistrySynced s
                && s.services().size() == 1);

        watcher.close();
        watcher.close();
        List<RegistryEvent> atClose = sink.events();
        ttlInstance("web", "web-2", "10.0.0.2", 8080);
        env.client().agentClient().fail(svc("web-1"));

        assertThat(status.state()).isEqualTo(RegistryStatus.State.STOPPED);
        await().during(java.time.Duration.ofMillis(300))
                .atMost(java.time.Duration.ofSeconds(15))
                .until(() -> sink.events().equals(atClose));
    }

    @Test
    void unknownDatacenter_isDownNamingIt_whileTheKnownOneIsServed() throws Exception {
        ttlInstance("web", "web-1", "10.0.0.1", 8080);

        RegistryStatus status = watch("c1", "consulDatacenter: [dc1, dc9]");

        awaitService(host("web", "dc1"), endpoints(1));
        awaitState(status, RegistryStatus.State.DOWN);
        assertThat(status.lastError()).contains("No path to datacenter");
    }

    @Test
    void noDatacenterConfigured_usesTheAgentsDatacenter() throws Exception {
        ttlInstance("web", "web-1", "10.0.0.1", 8080);

        watch("c1");

        assertThat(awaitService(host("web", "dc1"), endpoints(1))
                        .endpoints()
                        .get(0)
                        .locality()
                        .region())
                .isEqualTo("dc1");
    }
}
