package dev.meshbridge.registry.nacos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.testing.TestPki;
import dev.meshbridge.core.tls.ReloadingTls;
import dev.meshbridge.core.tls.TlsFiles;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher's own handshake that names why a TLS connection to Nacos fails, against the test server's real TLS
 * ports (netty for gRPC, the JDK's HttpsServer for HTTP) requiring client certificates.
 */
class NacosTlsProbeTest {

    @TempDir
    Path dir;

    private SSLContext client(TestPki ca, boolean withCertificate) throws Exception {
        Path cert = null;
        Path key = null;
        if (withCertificate) {
            cert = dir.resolve("probe.crt");
            key = dir.resolve("probe.key");
            ca.leaf("meshbridge").issue().write(cert, key);
        }
        return new ReloadingTls(
                        "probe",
                        new TlsFiles(cert, key, null, ca.writeCa(dir.resolve("probe-ca.crt"))),
                        Clock.systemUTC())
                .load()
                .clientContext();
    }

    @Test
    void namesAMissingClientCertificate_andAnUntrustedServer_onBothPorts_andNothingWhenTheHandshakeWorks()
            throws Exception {
        TestPki ca = TestPki.ca("probe-ca");
        Path cert = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        ca.leaf("nacos").dns("localhost").ip("127.0.0.1").issue().write(cert, key);
        try (NacosTestServer server = NacosTestServer.builder()
                .tls(cert, key, ca.writeCa(dir.resolve("clients-ca.crt")))
                .start()) {
            List<String> addresses = List.of(server.address());
            Duration timeout = Duration.ofSeconds(2);
            int grpc = NacosTlsProbe.GRPC_PORT_OFFSET;

            SSLContext noCertificate = client(ca, false);
            assertThat(NacosTlsProbe.firstFailure(noCertificate, addresses, grpc, "gRPC", timeout))
                    .startsWith("gRPC 127.0.0.1:" + (server.port() + grpc))
                    .containsAnyOf("certificate_required", "it may want a client certificate");
            assertThat(NacosTlsProbe.firstFailure(noCertificate, addresses, 0, "HTTP", timeout))
                    .startsWith("HTTP 127.0.0.1:" + server.port())
                    .containsAnyOf("certificate_required", "it may want a client certificate");

            SSLContext otherCa = client(TestPki.ca("someone-else"), true);
            assertThat(NacosTlsProbe.firstFailure(otherCa, addresses, grpc, "gRPC", timeout))
                    .contains("TLS handshake failed")
                    .contains("tls.caFile");

            SSLContext good = client(ca, true);
            assertThat(NacosTlsProbe.firstFailure(good, addresses, grpc, "gRPC", timeout))
                    .isNull();
            assertThat(NacosTlsProbe.firstFailure(good, addresses, 0, "HTTP", timeout))
                    .isNull();
        }
    }
}
