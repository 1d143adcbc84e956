package dev.meshbridge.core.tls;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.Secret;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a TLS identity and its trust anchors are on disk: a PEM certificate chain and its private key (RSA or EC,
 * optionally encrypted with a password), and a PEM bundle of CA certificates. Each part is optional; the files are
 * read by {@link ReloadingTls}, again whenever their content changes.
 *
 * @param certFile the certificate chain, leaf first; null for no identity
 * @param keyFile the private key of the leaf; null exactly when {@code certFile} is
 * @param keyPassword the password of an encrypted key; null for an unencrypted one
 * @param caFile the CA certificates to trust; null for none (a server: no client verification; a client: the JVM's
 *     default CAs)
 */
public record TlsFiles(Path certFile, Path keyFile, Secret keyPassword, Path caFile) {

    public TlsFiles {
        if ((certFile == null) != (keyFile == null))
            throw new IllegalArgumentException("certFile and keyFile go together");
    }

    public boolean hasIdentity() {
        return certFile != null;
    }

    /**
     * Reads {@code certFile}, {@code keyFile}, {@code keyPassword} and {@code caFile} of a {@code tls:} mapping;
     * problems (a missing file, a lone certFile) are recorded on the node, naming the field, never a value.
     */
    public static TlsFiles parse(ConfigNode n) {
        Path cert = file(n, "certFile");
        Path key = file(n, "keyFile");
        Secret password = n.secret("keyPassword").orElse(null);
        Path ca = file(n, "caFile");
        if ((cert == null) != (key == null)) {
            n.problem(cert == null ? "certFile" : "keyFile", "certFile and keyFile go together");
            return new TlsFiles(null, null, null, ca);
        }
        TlsFiles files = new TlsFiles(cert, key, password, ca);
        boolean readable = (cert == null || Files.isReadable(cert))
                && (key == null || Files.isReadable(key))
                && (ca == null || Files.isReadable(ca));
        if (readable) {
            try {
                new ReloadingTls("config check", files, java.time.Clock.systemUTC()).load();
            } catch (Exception e) {
                n.problemHere("cannot use the TLS files: " + e.getMessage());
            }
        }
        return files;
    }

    private static Path file(ConfigNode n, String key) {
        String s = n.string(key, "").trim();
        if (s.isEmpty()) return null;
        Path p = Path.of(s);
        if (!Files.isReadable(p)) n.problem(key, "file " + s + " does not exist or is not readable");
        return p;
    }

    @Override
    public String toString() {
        return "TlsFiles[cert=" + certFile + ", key=" + keyFile + ", keyPassword="
                + (keyPassword == null ? "none" : keyPassword.describe()) + ", ca=" + caFile + "]";
    }
}
