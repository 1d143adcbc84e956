package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.TlsOptions;
import dev.meshbridge.core.testing.SecretVolume;
import dev.meshbridge.core.testing.TestPki;
import dev.meshbridge.core.tls.TlsFiles;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.math.BigInteger;
import java.net.Socket;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The xDS server over mutual TLS, with real handshakes: grpc-java's own xDS client (grpc-xds, its bootstrap naming
 * {@code tls} channel credentials) resolves and calls through the bridge; clients with a certificate from another CA,
 * an expired certificate or a SAN outside the allow list are refused, counted and never served; the server's
 * certificate, published as a Kubernetes Secret volume publishes it, rotates under a streaming client.
 */
class XdsMtlsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String ALLOWED = "spiffe://cluster.local/ns/*/sa/grpc-client";

    @TempDir
    Path tmp;

    private final TestPki ca = TestPki.ca("meshbridge-test-ca");
    private final Backends backends = new Backends();
    private SecretVolume serverFiles;
    private XdsTestBed bed;
    private Path caFile;

    @BeforeEach
    void start() {
        serverFiles = new SecretVolume(tmp.resolve("server"));
        serverFiles.publish(serverLeaf(1001), ca);
        caFile = ca.writeCa(tmp.resolve("ca.crt"));
        TlsOptions tls = TlsOptions.mutual(
                        new TlsFiles(
                                serverFiles.file("tls.crt"),
                                serverFiles.file("tls.key"),
                                null,
                                serverFiles.file("ca.crt")),
                        List.of(ALLOWED),
                        List.of())
                .withReloadInterval(Duration.ofMillis(50));
        bed = new XdsTestBed(XdsOptions.loopbackEphemeral().withTls(tls));
    }

    @AfterEach
    void stop() {
        backends.close();
        bed.close();
    }

    private TestPki.Issued serverLeaf(long serial) {
        return ca.leaf("meshbridge")
                .dns("localhost")
                .ip("127.0.0.1")
                .serial(serial)
                .issue();
    }

    /** The bootstrap's channel credentials: gRFC A65 {@code tls} with the client's files. */
    private List<Map<String, ?>> tlsCreds(TestPki.Issued client, String name) {
        Path cert = tmp.resolve(name + ".crt");
        Path key = tmp.resolve(name + ".key");
        client.write(cert, key);
        return List.of(Map.of(
                "type",
                "tls",
                "config",
                Map.of(
                        "ca_certificate_file",
                        caFile.toString(),
                        "certificate_file",
                        cert.toString(),
                        "private_key_file",
                        key.toString())));
    }

    private double refused(String reason) {
        return bed.counter("meshbridge.xds.tls.refused", "reason", reason);
    }

    private double pushes() {
        return bed.meters.find("meshbridge.xds.pushes").counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }

    @Test
    void grpcJavaXdsClient_overMutualTls_resolvesAndCalls() {
        Backends.Backend a = backends.start("a");
        Backends.Backend b = backends.start("b");
        bed.send(Upserts.dubboApplication(
                "shop",
                List.of(
                        Upserts.dubboAppInstance("127.0.0.1", a.port()).build(),
                        Upserts.dubboAppInstance("127.0.0.1", b.port()).build())));
        TestPki.Issued client = ca.leaf("client")
                .uri("spiffe://cluster.local/ns/shop/sa/grpc-client")
                .issue();
        ManagedChannel channel = backends.xdsChannel(
                "shop.dubbo", "localhost:" + bed.server.port(), tlsCreds(client, "client"), "mtls-1");

        Set<String> seen = new HashSet<>();
        await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .untilAsserted(() -> {
                    seen.add(Backends.who(channel));
                    assertThat(seen).containsExactlyInAnyOrder("a", "b");
                });

        XdsDebugView view = bed.server.debugView();
        assertThat(view.client("mtls-1")).isNotNull();
        assertThat(view.tls().mode()).isEqualTo("mtls");
        assertThat(view.tls().certificate().serial())
                .isEqualTo(BigInteger.valueOf(1001).toString(16));
        assertThat(view.tls().refused().values()).allMatch(n -> n == 0);
    }

    /** How a client's certificate is wrong. */
    enum Wrong {
        /** grpc-java presents no certificate that the server's CA list does not name: refused per call */
        OTHER_CA("no_certificate"),
        /** a CA with the bridge CA's name but another key: presented, and the handshake fails */
        FORGED_CA("untrusted"),
        EXPIRED("expired"),
        SAN_NOT_ALLOWED("san_not_allowed");

        final String reason;

        Wrong(String reason) {
            this.reason = reason;
        }
    }

    @ParameterizedTest
    @EnumSource(Wrong.class)
    void grpcJavaXdsClient_withAWrongCertificate_isRefusedCountedAndNeverServed(Wrong wrong) {
        Backends.Backend a = backends.start("a");
        bed.send(Upserts.dubboApplication(
                "shop", List.of(Upserts.dubboAppInstance("127.0.0.1", a.port()).build())));
        TestPki.Issued client = switch (wrong) {
            case OTHER_CA ->
                TestPki.ca("another-ca")
                        .leaf("client")
                        .uri("spiffe://cluster.local/ns/shop/sa/grpc-client")
                        .issue();
            case FORGED_CA ->
                TestPki.ca("meshbridge-test-ca")
                        .leaf("client")
                        .uri("spiffe://cluster.local/ns/shop/sa/grpc-client")
                        .issue();
            case EXPIRED ->
                ca.leaf("client")
                        .uri("spiffe://cluster.local/ns/shop/sa/grpc-client")
                        .validity(
                                Instant.now().minus(Duration.ofDays(2)),
                                Instant.now().minus(Duration.ofDays(1)))
                        .issue();
            case SAN_NOT_ALLOWED ->
                ca.leaf("client")
                        .uri("spiffe://cluster.local/ns/shop/sa/someone-else")
                        .dns("grpc-client.shop.svc")
                        .issue();
        };
        ManagedChannel channel = backends.xdsChannel(
                "shop.dubbo", "localhost:" + bed.server.port(), tlsCreds(client, "client"), "refused-" + wrong);

        assertThatThrownBy(() -> Backends.who(channel))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        await().atMost(WAIT).until(() -> refused(wrong.reason) >= 1);

        assertThat(a.calls.get()).as("no RPC reached the backend").isZero();
        assertThat(pushes()).as("no resource was sent").isZero();
        XdsDebugView view = bed.server.debugView();
        assertThat(view.clients()).isEmpty();
        assertThat(view.tls().recentRefusals())
                .anySatisfy(r -> assertThat(r.reason()).isEqualTo(wrong.reason));
    }

    @Test
    void sanNotAllowed_rawStream_getsPermissionDenied_namingNothingOfTheConfiguration() throws Exception {
        TestPki.Issued client = ca.leaf("client")
                .uri("spiffe://cluster.local/ns/shop/sa/intruder")
                .issue();
        try (AdsClient c = new AdsClient(tlsChannel(client, new CopyOnWriteArrayList<>()), "intruder")) {
            c.openSotw().subscribe(XdsType.CLUSTER);
            await().atMost(WAIT).until(() -> c.error() != null);
            Status status = Status.fromThrowable(c.error());
            assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
            assertThat(status.getDescription()).doesNotContain("spiffe", "grpc-client", "*");
        }
        assertThat(refused("san_not_allowed")).isEqualTo(1);
        assertThat(pushes()).isZero();
    }

    @Test
    void rotation_streamStaysUp_andANewConnectionSeesTheNewSerial() throws Exception {
        Backends.Backend a = backends.start("a");
        bed.send(Upserts.dubboApplication(
                "shop", List.of(Upserts.dubboAppInstance("127.0.0.1", a.port()).build())));
        TestPki.Issued client = ca.leaf("client")
                .uri("spiffe://cluster.local/ns/shop/sa/grpc-client")
                .issue();
        List<BigInteger> seenBefore = new CopyOnWriteArrayList<>();
        try (AdsClient streaming = new AdsClient(tlsChannel(client, seenBefore), "rotating")) {
            streaming.openSotw().subscribe(XdsType.CLUSTER);
            DiscoveryResponse first = streaming.next();
            streaming.ack(first);
            assertThat(seenBefore).containsOnly(BigInteger.valueOf(1001));

            // a half-written rotation (a certificate with another key) is not used; the last good one stays
            TestPki.Issued mismatched = serverLeaf(1500);
            TestPki.Issued other = serverLeaf(1501);
            serverFiles.publish(Map.of(
                    "tls.crt", pemOf(mismatched),
                    "tls.key", keyPemOf(other),
                    "ca.crt", caPem()));
            await().atMost(WAIT).until(() -> bed.counter("meshbridge.xds.tls.reloads", "result", "failed") >= 1);
            assertThat(bed.server.debugView().tls().certificate().serial())
                    .isEqualTo(BigInteger.valueOf(1001).toString(16));

            serverFiles.publish(serverLeaf(2002), ca);
            await().atMost(WAIT)
                    .until(() -> BigInteger.valueOf(2002)
                            .toString(16)
                            .equals(bed.server.debugView().tls().certificate().serial()));
            assertThat(bed.counter("meshbridge.xds.tls.reloads", "result", "ok"))
                    .isEqualTo(1);

            // the established stream stays up and keeps getting pushes
            Backends.Backend b = backends.start("b");
            bed.send(Upserts.dubboApplication(
                    "orders",
                    List.of(Upserts.dubboAppInstance("127.0.0.1", b.port()).build())));
            DiscoveryResponse pushed = streaming.next();
            assertThat(pushed.getResourcesCount()).isGreaterThan(first.getResourcesCount());
            assertThat(streaming.error()).isNull();

            List<BigInteger> seenAfter = new CopyOnWriteArrayList<>();
            try (AdsClient fresh = new AdsClient(tlsChannel(client, seenAfter), "fresh")) {
                fresh.openSotw().subscribe(XdsType.CLUSTER);
                assertThat(fresh.next().getResourcesCount()).isEqualTo(pushed.getResourcesCount());
            }
            assertThat(seenAfter).containsOnly(BigInteger.valueOf(2002));
            assertThat(seenBefore).containsOnly(BigInteger.valueOf(1001));
        }
    }

    private String pemOf(TestPki.Issued issued) {
        Path c = tmp.resolve("x.crt");
        issued.write(c, tmp.resolve("x.key"));
        return read(c);
    }

    private String keyPemOf(TestPki.Issued issued) {
        Path k = tmp.resolve("y.key");
        issued.write(tmp.resolve("y.crt"), k);
        return read(k);
    }

    private String caPem() {
        return read(caFile);
    }

    private static String read(Path p) {
        try {
            return java.nio.file.Files.readString(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A TLS channel to the bridge with the client's certificate; records the serial of each server certificate. */
    private ManagedChannel tlsChannel(TestPki.Issued client, List<BigInteger> serverSerials) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", ca.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        X509ExtendedTrustManager real = (X509ExtendedTrustManager) tmf.getTrustManagers()[0];
        X509ExtendedTrustManager recording = new X509ExtendedTrustManager() {
            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                    throws CertificateException {
                serverSerials.add(chain[0].getSerialNumber());
                real.checkServerTrusted(chain, authType, engine);
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                    throws CertificateException {
                serverSerials.add(chain[0].getSerialNumber());
                real.checkServerTrusted(chain, authType, socket);
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                serverSerials.add(chain[0].getSerialNumber());
                real.checkServerTrusted(chain, authType);
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
                throw new UnsupportedOperationException();
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return real.getAcceptedIssuers();
            }
        };
        SslContext ssl = GrpcSslContexts.forClient()
                .trustManager(recording)
                .keyManager(client.keyPair().getPrivate(), client.certificate(), client.issuer())
                .build();
        return NettyChannelBuilder.forAddress("localhost", bed.server.port())
                .sslContext(ssl)
                .build();
    }
}
