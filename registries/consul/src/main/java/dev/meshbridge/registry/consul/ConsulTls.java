package dev.meshbridge.registry.consul;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.tls.ReloadingTls;
import dev.meshbridge.core.tls.TlsFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import javax.net.ssl.HostnameVerifier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.X509TrustManager;

/**
 * TLS to Consul's HTTPS port: which CA to trust, the client certificate Consul asks for with {@code
 * verify_incoming}, and the name to check the server certificate against. Files are read each time a client is built,
 * so rotated certificates are picked up on the next (re)start of the watcher.
 *
 * @param enabled use HTTPS
 * @param caFile PEM CA certificates to trust; empty trusts the JVM's default CAs
 * @param certFile PEM client certificate (chain); empty for none
 * @param keyFile PEM private key of the client certificate
 * @param serverName the name the server certificate must carry (Consul's {@code CONSUL_TLS_SERVER_NAME}, e.g. {@code
 *     server.dc1.consul}); empty checks the address's host
 * @param reloadInterval how often, at most, a new connection checks the files for a change (default 10s): a rotated
 *     client certificate or CA bundle is used from the next connection on, without a restart
 */
public record ConsulTls(
        boolean enabled, String caFile, String certFile, String keyFile, String serverName, Duration reloadInterval) {

    /** With the default reload interval. */
    public ConsulTls(boolean enabled, String caFile, String certFile, String keyFile, String serverName) {
        this(enabled, caFile, certFile, keyFile, serverName, RELOAD_CHECK);
    }

    public ConsulTls {
        caFile = Objects.requireNonNullElse(caFile, "");
        certFile = Objects.requireNonNullElse(certFile, "");
        keyFile = Objects.requireNonNullElse(keyFile, "");
        serverName = Objects.requireNonNullElse(serverName, "");
        reloadInterval = Objects.requireNonNullElse(reloadInterval, RELOAD_CHECK);
    }

    /** The SSL context and trust manager OkHttp needs. */
    record Material(SSLContext context, X509TrustManager trustManager) {}

    /** How often, at most, a new connection checks the files for a change. */
    static final Duration RELOAD_CHECK = Duration.ofSeconds(10);

    private static Duration positive(ConfigNode n, Duration d) {
        if (d.isNegative() || d.isZero()) {
            n.problem("reloadInterval", "must be positive");
            return RELOAD_CHECK;
        }
        return d;
    }

    static ConsulTls parse(ConfigNode n) {
        if (!n.isMapping()) {
            n.problemHere("expected a mapping with enabled, caFile, certFile, keyFile, serverName");
            return new ConsulTls(false, "", "", "", "");
        }
        ConsulTls tls = new ConsulTls(
                n.bool("enabled", true),
                n.string("caFile", ""),
                n.string("certFile", ""),
                n.string("keyFile", ""),
                n.string("serverName", ""),
                positive(n, n.duration("reloadInterval", RELOAD_CHECK)));
        if (tls.certFile.isEmpty() != tls.keyFile.isEmpty()) {
            n.problem(tls.certFile.isEmpty() ? "certFile" : "keyFile", "certFile and keyFile go together");
            return tls;
        }
        for (String field : List.of("caFile", "certFile", "keyFile")) {
            String file = n.string(field, "");
            if (!file.isEmpty() && !Files.isReadable(Path.of(file))) {
                n.problem(field, "file " + file + " does not exist or is not readable");
                return tls;
            }
        }
        if (tls.enabled) {
            try {
                tls.material();
            } catch (IOException | GeneralSecurityException e) {
                n.problemHere("cannot use the TLS files: " + e.getMessage());
            }
        }
        return tls;
    }

    /**
     * Reads the files and builds the SSL context. The context checks the files for a change when it opens a
     * connection (at most every 10 s): a rotated client certificate or CA bundle is used from the next connection on,
     * without a restart.
     */
    Material material() throws IOException, GeneralSecurityException {
        ReloadingTls files = new ReloadingTls(
                        "consul",
                        new TlsFiles(
                                certFile.isEmpty() ? null : Path.of(certFile),
                                keyFile.isEmpty() ? null : Path.of(keyFile),
                                null,
                                caFile.isEmpty() ? null : Path.of(caFile)),
                        java.time.Clock.systemUTC())
                .load()
                .checkOnHandshake(reloadInterval);
        return new Material(files.clientContext(), files.trustManager(null));
    }

    /**
     * Checks the server certificate against {@link #serverName()} instead of the address's host; null when no server
     * name is set (the client's default check applies).
     */
    HostnameVerifier hostnameVerifier() {
        if (serverName.isEmpty()) return null;
        String expected = serverName.toLowerCase(Locale.ROOT);
        return (host, session) -> {
            try {
                Certificate[] peer = session.getPeerCertificates();
                return peer.length > 0 && peer[0] instanceof X509Certificate x && matches(x, expected);
            } catch (SSLPeerUnverifiedException e) {
                return false;
            }
        };
    }

    static boolean matches(X509Certificate cert, String expected) {
        try {
            var names = cert.getSubjectAlternativeNames();
            if (names == null) return false;
            for (List<?> san : names) {
                if (san.size() >= 2 && Integer.valueOf(2).equals(san.get(0)) && san.get(1) instanceof String dns) {
                    if (dnsMatches(dns.toLowerCase(Locale.ROOT), expected)) return true;
                }
            }
            return false;
        } catch (java.security.cert.CertificateParsingException e) {
            return false;
        }
    }

    private static boolean dnsMatches(String pattern, String name) {
        if (!pattern.startsWith("*.")) return pattern.equals(name);
        int dot = name.indexOf('.');
        return dot > 0 && name.substring(dot).equals(pattern.substring(1));
    }
}
