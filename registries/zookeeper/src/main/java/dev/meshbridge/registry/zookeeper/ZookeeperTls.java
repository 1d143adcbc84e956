package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.Secret;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLSocket;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;

/**
 * TLS to ZooKeeper's secure client port ({@code secureClientPort}): ZooKeeper's own Netty client socket with a key
 * store (the client certificate, for {@code ssl.clientAuth=need}) and a trust store, in any type ZooKeeper reads
 * ({@code PEM}, {@code PKCS12}, {@code JKS}; guessed from the file name when not given). The files are read by the
 * ZooKeeper client at every connection, so a rotated store is used from the next (re)connection on.
 *
 * @param keyStore the client key store, null for none
 * @param keyStoreType its type, null to let ZooKeeper guess it from the file name
 * @param keyStorePassword its password, null for none
 * @param trustStore the trust store (the CA of the ZooKeeper servers), null for the JVM's default
 * @param trustStoreType its type, null to guess
 * @param trustStorePassword its password, null for none
 * @param hostnameVerification check the server certificate against the address (ZooKeeper's default: on)
 */
public record ZookeeperTls(
        String keyStore,
        String keyStoreType,
        Secret keyStorePassword,
        String trustStore,
        String trustStoreType,
        Secret trustStorePassword,
        boolean hostnameVerification) {

    static ZookeeperTls parse(ConfigNode n) {
        if (!n.isMapping()) {
            n.problemHere("expected a mapping with keyStore, trustStore and their types and passwords");
            return null;
        }
        if (!n.bool("enabled", true)) {
            n.accept(
                    "keyStore",
                    "keyStoreType",
                    "keyStorePassword",
                    "trustStore",
                    "trustStoreType",
                    "trustStorePassword",
                    "hostnameVerification");
            return null;
        }
        ZookeeperTls tls = new ZookeeperTls(
                file(n, "keyStore"),
                type(n, "keyStoreType"),
                n.secret("keyStorePassword").orElse(null),
                file(n, "trustStore"),
                type(n, "trustStoreType"),
                n.secret("trustStorePassword").orElse(null),
                n.bool("hostnameVerification", true));
        if (tls.keyStore == null && tls.keyStorePassword != null)
            n.problem("keyStorePassword", "a key store password needs keyStore");
        return tls;
    }

    private static String file(ConfigNode n, String key) {
        String s = n.string(key, "").trim();
        if (s.isEmpty()) return null;
        if (!Files.isReadable(Path.of(s))) n.problem(key, "file " + s + " does not exist or is not readable");
        return s;
    }

    private static String type(ConfigNode n, String key) {
        String s = n.string(key, "").trim().toUpperCase(java.util.Locale.ROOT);
        if (s.isEmpty()) return null;
        if (!java.util.Set.of("PEM", "PKCS12", "JKS", "BCFKS").contains(s)) {
            n.problem(key, "expected PEM, PKCS12, JKS or BCFKS, got '" + s + "'");
            return null;
        }
        return s;
    }

    /**
     * Sets the ZooKeeper client properties for TLS on {@code config}: the Netty socket, {@code client.secure} and the
     * stores; passwords are resolved now (a rotated password file is read at the next session).
     */
    void apply(ZKClientConfig config) {
        config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "org.apache.zookeeper.ClientCnxnSocketNetty");
        config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        try (ClientX509Util x509 = new ClientX509Util()) {
            if (keyStore != null) {
                config.setProperty(x509.getSslKeystoreLocationProperty(), keyStore);
                if (keyStoreType != null) config.setProperty(x509.getSslKeystoreTypeProperty(), keyStoreType);
                if (keyStorePassword != null)
                    config.setProperty(x509.getSslKeystorePasswdProperty(), keyStorePassword.resolve());
            }
            if (trustStore != null) {
                config.setProperty(x509.getSslTruststoreLocationProperty(), trustStore);
                if (trustStoreType != null) config.setProperty(x509.getSslTruststoreTypeProperty(), trustStoreType);
                if (trustStorePassword != null)
                    config.setProperty(x509.getSslTruststorePasswdProperty(), trustStorePassword.resolve());
            }
            config.setProperty(
                    x509.getSslHostnameVerificationEnabledProperty(), Boolean.toString(hostnameVerification));
        }
    }

    /**
     * Tries a TLS handshake with one server as the ZooKeeper client would, for a clear error when the client cannot
     * connect ("PKIX path building failed" rather than a silent retry); null when it succeeds or fails for another
     * reason than TLS.
     */
    String probe(ZKClientConfig config, String host, int port, int timeoutMillis) {
        try (ClientX509Util x509 = new ClientX509Util()) {
            javax.net.ssl.SSLContext ctx = x509.createSSLContext(config);
            try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket()) {
                s.connect(new InetSocketAddress(host, port), timeoutMillis);
                s.setSoTimeout(timeoutMillis);
                s.startHandshake();
                return null;
            }
        } catch (Exception e) {
            boolean tls = false;
            for (Throwable t = e; t != null && !tls; t = t.getCause()) {
                tls = t instanceof javax.net.ssl.SSLException
                        || t instanceof java.security.GeneralSecurityException
                        || t instanceof org.apache.zookeeper.common.X509Exception;
            }
            if (!tls) return null; // not a TLS problem (the server is down): the usual connection error says it
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) root = root.getCause();
            String m = root.getMessage();
            return "TLS handshake with " + host + ":" + port + " failed: "
                    + root.getClass().getSimpleName() + (m == null ? "" : ": " + m);
        }
    }

    @Override
    public String toString() {
        return "ZookeeperTls[keyStore=" + keyStore + ", trustStore=" + trustStore + ", keyStorePassword="
                + (keyStorePassword == null ? "none" : keyStorePassword.describe()) + ", trustStorePassword="
                + (trustStorePassword == null ? "none" : trustStorePassword.describe()) + ", hostnameVerification="
                + hostnameVerification + "]";
    }
}
