package dev.meshbridge.xds;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.xds.XdsCredentialsProvider;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The {@code tls} channel credentials of an xDS bootstrap as gRFC A65 defines them ({@code ca_certificate_file},
 * {@code certificate_file}, {@code private_key_file} in {@code config}), which grpc-go and C-core read. grpc-java
 * 1.85's own {@code tls} provider ignores {@code config} (JVM default trust, no client certificate), so the test
 * registers this one, with a higher priority, through {@code META-INF/services}: the bootstrap stays the one the
 * README documents, and the TLS underneath is grpc-java's own ({@link TlsChannelCredentials}).
 */
public final class A65TlsCredentialsProvider extends XdsCredentialsProvider {

    @Override
    protected ChannelCredentials newChannelCredentials(Map<String, ?> config) {
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
        try {
            if (config != null && config.get("ca_certificate_file") instanceof String ca) b.trustManager(new File(ca));
            if (config != null
                    && config.get("certificate_file") instanceof String cert
                    && config.get("private_key_file") instanceof String key) {
                b.keyManager(new File(cert), new File(key));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.build();
    }

    @Override
    protected String getName() {
        return "tls";
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public int priority() {
        return 10; // above grpc-java's own (5)
    }
}
