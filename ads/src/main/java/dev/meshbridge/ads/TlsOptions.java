package dev.meshbridge.ads;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.tls.ReloadingTls;
import dev.meshbridge.core.tls.TlsFiles;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * TLS of one ADS server: the {@code tls:} section of {@code xds:} or {@code mcp:}.
 *
 * @param enabled serve TLS; off, the server speaks plaintext (for loopback, or a mesh that wraps the bridge in its
 *     own sidecar)
 * @param files the server certificate and key (PEM, RSA or EC, the key optionally encrypted with {@code
 *     keyPassword}) and the CA bundle that verifies client certificates
 * @param clientAuth whether clients must present a certificate
 * @param allowedUriSans globs over client URI SANs (SPIFFE IDs) that may connect; {@code *} does not cross {@code /}
 * @param allowedDnsSans globs over client DNS SANs that may connect; {@code *} does not cross {@code .}
 * @param reloadInterval how often the files are checked for a change
 */
public record TlsOptions(
        boolean enabled,
        TlsFiles files,
        ClientAuth clientAuth,
        List<String> allowedUriSans,
        List<String> allowedDnsSans,
        Duration reloadInterval) {

    /** Whether a client presents a certificate. */
    public enum ClientAuth {
        /** no client certificate is asked for */
        NONE,
        /** asked for; a client without one is served, a client with an untrusted one is refused */
        REQUEST,
        /** every call needs a trusted client certificate (and one allowed by the SAN lists, when set) */
        REQUIRE
    }

    public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(10);

    /** Plaintext. */
    public static final TlsOptions DISABLED = new TlsOptions(
            false,
            new TlsFiles(null, null, null, null),
            ClientAuth.NONE,
            List.of(),
            List.of(),
            DEFAULT_RELOAD_INTERVAL);

    public TlsOptions {
        Objects.requireNonNull(files, "files");
        Objects.requireNonNull(clientAuth, "clientAuth");
        allowedUriSans = List.copyOf(allowedUriSans);
        allowedDnsSans = List.copyOf(allowedDnsSans);
        Objects.requireNonNull(reloadInterval, "reloadInterval");
        if (enabled) {
            if (!files.hasIdentity()) throw new IllegalArgumentException("tls needs certFile and keyFile");
            if (clientAuth != ClientAuth.NONE && files.caFile() == null)
                throw new IllegalArgumentException("clientAuth " + clientAuth + " needs caFile");
            if (clientAuth != ClientAuth.REQUIRE && !(allowedUriSans.isEmpty() && allowedDnsSans.isEmpty()))
                throw new IllegalArgumentException("allowedUriSans and allowedDnsSans need clientAuth require");
        }
        if (reloadInterval.isNegative() || reloadInterval.isZero())
            throw new IllegalArgumentException("reloadInterval must be positive");
    }

    /** Mutual TLS: a server certificate, clients verified against {@code caFile}, optionally SAN allow lists. */
    public static TlsOptions mutual(TlsFiles files, List<String> uriSans, List<String> dnsSans) {
        return new TlsOptions(true, files, ClientAuth.REQUIRE, uriSans, dnsSans, DEFAULT_RELOAD_INTERVAL);
    }

    public TlsOptions withReloadInterval(Duration interval) {
        return new TlsOptions(enabled, files, clientAuth, allowedUriSans, allowedDnsSans, interval);
    }

    /** {@code mtls}, {@code tls} or {@code plaintext}: the mode in one word, for logs and debug pages. */
    public String mode() {
        if (!enabled) return "plaintext";
        return clientAuth == ClientAuth.REQUIRE ? "mtls" : "tls";
    }

    /**
     * Parses a {@code tls:} section (absent: plaintext). The files are read once, so a key that does not match its
     * certificate or a wrong key password is refused with the config, naming the field and never the value.
     */
    public static TlsOptions parse(ConfigNode n) {
        if (n.keys().isEmpty()) return DISABLED;
        boolean enabled = n.bool("enabled", true);
        TlsFiles files = TlsFiles.parse(n);
        ClientAuth auth = n.enumValue(
                "clientAuth", ClientAuth.class, files.caFile() == null ? ClientAuth.NONE : ClientAuth.REQUIRE);
        List<String> uris = globs(n, "allowedUriSans");
        List<String> dns = globs(n, "allowedDnsSans");
        Duration interval = n.duration("reloadInterval", DEFAULT_RELOAD_INTERVAL);
        if (interval.isNegative() || interval.isZero()) {
            n.problem("reloadInterval", "must be positive");
            interval = DEFAULT_RELOAD_INTERVAL;
        }
        if (!enabled) return DISABLED;
        boolean ok = true;
        if (!files.hasIdentity()) {
            if (!n.has("certFile") && !n.has("keyFile"))
                n.problemHere("tls needs certFile and keyFile (the server's certificate and private key)");
            ok = false;
        }
        if (auth != ClientAuth.NONE && files.caFile() == null) {
            n.problem("clientAuth", "clientAuth " + auth.name().toLowerCase(java.util.Locale.ROOT) + " needs caFile");
            ok = false;
        }
        if (auth != ClientAuth.REQUIRE && !(uris.isEmpty() && dns.isEmpty())) {
            n.problem(uris.isEmpty() ? "allowedDnsSans" : "allowedUriSans", "SAN allow lists need clientAuth: require");
            ok = false;
        }
        if (!ok || n.hasProblems()) return DISABLED;
        try {
            new ReloadingTls("config check", files, Clock.systemUTC()).load();
        } catch (Exception e) {
            n.problemHere("cannot use the TLS files: " + e.getMessage());
            return DISABLED;
        }
        return new TlsOptions(true, files, auth, uris, dns, interval);
    }

    private static List<String> globs(ConfigNode n, String key) {
        List<String> out = new java.util.ArrayList<>();
        for (String s : n.strings(key)) {
            if (s.isBlank()) n.problem(key, "a pattern must not be empty");
            else out.add(s.trim());
        }
        return out;
    }
}
