package dev.meshbridge.registry.consul;

import com.google.common.net.HostAndPort;
import dev.meshbridge.core.config.Secret;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.HostnameVerifier;
import org.kiwiproject.consul.AuthTokenProvider;
import org.kiwiproject.consul.Consul;

/** Builds the Consul client of one watcher: addresses with failover, ACL token, TLS, Enterprise scope, timeouts. */
final class ConsulClients {

    /** How long an address that failed is skipped when several are configured. */
    static final Duration FAILOVER_BLACKLIST = Duration.ofSeconds(5);

    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    private ConsulClients() {}

    /** Read timeout of a non-blocking request; blocking ones get their wait plus Consul's jitter on top. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    /**
     * A client for the given addresses ({@code host:port}). The client's timeout interceptor stretches the read
     * timeout of each blocking query to its wait plus the up to wait/16 of jitter Consul adds, plus a margin.
     */
    static Consul build(List<String> addresses, ConsulOptions options, CachedToken token)
            throws IOException, GeneralSecurityException {
        Consul.Builder builder = Consul.builder().withPing(false);
        List<HostAndPort> hosts =
                addresses.stream().map(HostAndPort::fromString).toList();
        if (hosts.isEmpty()) throw new IllegalArgumentException("no Consul address");
        if (options.tls().isPresent()) {
            ConsulTls tls = options.tls().get();
            ConsulTls.Material material = tls.material();
            builder.withHttps(true).withSslContext(material.context()).withTrustManager(material.trustManager());
            HostnameVerifier verifier = tls.hostnameVerifier();
            if (verifier != null) builder.withHostnameVerifier(verifier);
        }
        if (hosts.size() == 1) {
            builder.withHostAndPort(hosts.get(0));
        } else {
            builder.withMultipleHostAndPort(hosts, FAILOVER_BLACKLIST).withMaxFailoverAttempts(hosts.size());
        }
        if (token != null) builder.withTokenAuth(token);
        Map<String, String> headers = new LinkedHashMap<>();
        if (!options.namespace().isEmpty()) headers.put("X-Consul-Namespace", options.namespace());
        if (!options.partition().isEmpty()) headers.put("X-Consul-Partition", options.partition());
        if (!headers.isEmpty()) builder.withHeaders(headers);
        return builder.withConnectTimeoutMillis(CONNECT_TIMEOUT.toMillis())
                .withReadTimeoutMillis(READ_TIMEOUT.toMillis())
                .withWriteTimeoutMillis(CONNECT_TIMEOUT.toMillis())
                .build();
    }

    /**
     * The ACL token, resolved on first use and kept until {@link #invalidate()} (after Consul refused it), so a
     * rotated token file or variable is read again on the next attempt. Never printed.
     */
    static final class CachedToken implements AuthTokenProvider {
        private final Secret secret;
        private volatile String value;

        CachedToken(Secret secret) {
            this.secret = secret;
        }

        @Override
        public String getToken() {
            String v = value;
            if (v == null) {
                try {
                    v = secret.resolve().trim();
                } catch (IllegalStateException e) {
                    throw new TokenUnavailableException(
                            "cannot read the ACL token from " + describe() + ": " + e.getMessage());
                }
                value = v;
            }
            return v;
        }

        void invalidate() {
            value = null;
        }

        String describe() {
            return secret.describe();
        }

        @Override
        public String toString() {
            return describe();
        }
    }

    /** The configured token could not be read (an unset variable, a missing file). */
    static final class TokenUnavailableException extends RuntimeException {
        TokenUnavailableException(String message) {
            super(message);
        }
    }
}
