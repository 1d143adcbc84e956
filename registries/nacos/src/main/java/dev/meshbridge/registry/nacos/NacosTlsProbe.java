package dev.meshbridge.registry.nacos;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * Why nacos-client cannot connect over TLS: nacos-client only says "Client not connected" (it logs the handshake
 * failure on its own logger), so after such a failure the watcher makes one TLS handshake of its own with the same
 * files to each server's gRPC port (HTTP port + 1000) and names what failed there (an untrusted server certificate, a
 * client certificate the server refuses).
 */
final class NacosTlsProbe {

    /** nacos-client's default offset of the gRPC port from the HTTP port ({@code nacos.server.grpc.port.offset}). */
    static final int GRPC_PORT_OFFSET = 1000;

    private NacosTlsProbe() {}

    /**
     * The first handshake failure at one of {@code addresses}' gRPC ports, as one line naming the address, or null
     * when every handshake succeeds or fails for another reason (a refused connection is reported elsewhere).
     */
    static String firstFailure(SSLContext tls, List<String> addresses, Duration timeout) {
        for (String address : addresses) {
            String failure = probe(tls, address, timeout);
            if (failure != null) return failure;
        }
        return null;
    }

    private static String probe(SSLContext tls, String address, Duration timeout) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0) return null;
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1)) + GRPC_PORT_OFFSET;
        } catch (NumberFormatException e) {
            return null;
        }
        int millis = (int) Math.max(100, Math.min(timeout.toMillis(), 3000));
        try (Socket raw = new Socket()) {
            raw.connect(new InetSocketAddress(host, port), millis);
            try (SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(raw, host, port, false)) {
                SSLParameters p = s.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                p.setApplicationProtocols(new String[] {"h2"});
                s.setSSLParameters(p);
                s.setSoTimeout(millis);
                s.startHandshake();
                // with TLS 1.3 a refused client certificate is only heard of on the first read
                try {
                    s.getInputStream().read();
                } catch (SocketTimeoutException quiet) {
                    // the server waits for the HTTP/2 preface: the handshake went through
                }
            }
            return null;
        } catch (SSLException e) {
            return "nacos-client cannot connect to Nacos's gRPC port " + host + ":" + port + ": "
                    + NacosErrors.cause(e);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
