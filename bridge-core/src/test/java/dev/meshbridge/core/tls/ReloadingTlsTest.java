package dev.meshbridge.core.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.testing.TestPki;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A registry client's TLS files rotated under it: the next connection presents the new certificate, also when the
 * TLS stack would have resumed the session made with the old one (a resumed handshake asks no key manager, so the
 * check for changed files cannot wait for one).
 */
class ReloadingTlsTest {

    @TempDir
    Path tmp;

    /** A registry CA, the bridge's first client pair (written as its files) and the pair that replaces it. */
    private final TestPki ca = TestPki.ca("registry CA");

    private final TestPki.Issued first = ca.leaf("meshbridge").issue();
    private final TestPki.Issued rotated = ca.leaf("meshbridge").issue();
    private Path caFile;
    private Path certFile;
    private Path keyFile;

    private final List<BigInteger> presented = new CopyOnWriteArrayList<>();
    private SSLServerSocket server;
    private Thread acceptor;

    @BeforeEach
    void writeFirstPair() {
        caFile = ca.writeCa(tmp.resolve("ca.pem"));
        certFile = tmp.resolve("tls.crt");
        keyFile = tmp.resolve("tls.key");
        first.write(certFile, keyFile);
    }

    /** The bridge's view of the files, checked on connections at most every {@code interval}. */
    private ReloadingTls reloading(Duration interval) throws Exception {
        return new ReloadingTls("registry test", new TlsFiles(certFile, keyFile, null, caFile), Clock.systemUTC())
                .load()
                .checkOnHandshake(interval);
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) server.close();
        if (acceptor != null) acceptor.interrupt();
    }

    @Test
    void rotatedClientCertificate_isPresentedOnTheNextConnection_evenWhereTheOldSessionCouldBeResumed()
            throws Exception {
        startServer();

        ReloadingTls tls = reloading(Duration.ZERO);
        SSLContext client = tls.clientContext();

        call(client);
        assertThat(presented).containsExactly(first.serial());

        rotated.write(certFile, keyFile);
        call(client); // well inside the 1 s a session may be resumed for

        assertThat(presented).containsExactly(first.serial(), rotated.serial());
        assertThat(tls.status().serial()).isEqualTo(ReloadingTls.serialHex(rotated.serial()));
        assertThat(tls.status().generation()).isEqualTo(2);
    }

    @Test
    void aSessionTheOldFilesMadeButCachedAfterTheReload_isNotResumedByTheNextConnection() throws Exception {
        startServer();
        ReloadingTls tls = reloading(Duration.ZERO);
        SSLContext client = tls.clientContext();

        // a connection made with the old files: its TLS 1.3 session is cached when the client reads the server's
        // ticket, after its handshake, here only after the reload forgot the sessions cached so far
        try (SSLSocket before =
                (SSLSocket) client.getSocketFactory().createSocket("localhost", server.getLocalPort())) {
            before.setSoTimeout(10_000);
            before.startHandshake();
            rotated.write(certFile, keyFile);
            assertThat(tls.reloadIfChanged()).isTrue();
            before.getOutputStream().write('?');
            before.getOutputStream().flush();
            assertThat(before.getInputStream().read()).isEqualTo('!');
        }
        assertThat(presented).containsExactly(first.serial());

        call(client); // well inside the 1 s a session may be resumed for

        assertThat(presented).containsExactly(first.serial(), rotated.serial());
    }

    @Test
    void aKeyCaughtBeforeItsCertificate_keepsTheOldIdentity_andTheNextConnectionLooksAgainAtOnce() throws Exception {
        rotated.write(tmp.resolve("new.crt"), tmp.resolve("new.key"));
        startServer();
        ReloadingTls tls = reloading(Duration.ofMinutes(10));
        SSLContext client = tls.clientContext();

        // cert-manager has written the new key, not yet its certificate, when a check looks
        java.nio.file.Files.copy(tmp.resolve("new.key"), keyFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(tls.reloadIfChanged()).isFalse();
        call(client);
        assertThat(presented).containsExactly(first.serial());
        assertThat(tls.status().failures()).isEqualTo(1);
        assertThat(tls.status().lastError()).contains("does not belong to the certificate");

        java.nio.file.Files.copy(tmp.resolve("new.crt"), certFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        call(client); // ten minutes before the next check would be due
        assertThat(presented).containsExactly(first.serial(), rotated.serial());
    }

    @Test
    void anEngineFromTheContext_checksTheFilesBeforeItsHandshake() throws Exception {
        ReloadingTls tls = reloading(Duration.ZERO);
        SSLContext client = tls.clientContext();

        rotated.write(certFile, keyFile);
        SSLEngine engine = client.createSSLEngine("localhost", 443);

        assertThat(engine).isNotNull();
        assertThat(tls.status().serial()).isEqualTo(ReloadingTls.serialHex(rotated.serial()));
    }

    /** One request and its answer over a new connection, so the server sees the handshake. */
    private void call(SSLContext client) throws IOException {
        try (SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket("localhost", server.getLocalPort())) {
            s.setSoTimeout(10_000);
            s.startHandshake();
            OutputStream out = s.getOutputStream();
            out.write('?');
            out.flush();
            assertThat(s.getInputStream().read()).isEqualTo('!');
        }
    }

    /** A registry requiring client certificates of {@link #ca}, recording the serial each connection presents. */
    private void startServer() throws Exception {
        X509Certificate caCert = ca.certificate();
        TestPki.Issued identity = ca.leaf("registry").dns("localhost").issue();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("server", identity.keyPair().getPrivate(), new char[0], new java.security.cert.Certificate[] {
            identity.certificate(), identity.issuer()
        });
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
        kmf.init(keys, new char[0]);
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", caCert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        server = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0);
        server.setNeedClientAuth(true);
        acceptor = Thread.ofPlatform().daemon().start(() -> {
            while (!server.isClosed()) {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                    s.setSoTimeout(10_000);
                    InputStream in = s.getInputStream();
                    if (in.read() < 0) continue;
                    if (s.getSession().getPeerCertificates()[0] instanceof X509Certificate x)
                        presented.add(x.getSerialNumber());
                    s.getOutputStream().write('!');
                    s.getOutputStream().flush();
                } catch (IOException e) {
                    // closed, or a client that went away
                }
            }
        });
    }
}
