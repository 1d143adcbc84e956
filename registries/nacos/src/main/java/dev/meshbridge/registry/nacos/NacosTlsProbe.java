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
 * Why a connection over TLS fails: nacos-client only says "Client not connected" (it logs the handshake failure on
 * its own logger), and a server that refuses a missing client certificate after a TLS 1.3 handshake leaves the HTTP
 * client with "received no bytes". After such a failure the watcher makes one TLS handshake of its own with the same
 * files to each server's gRPC port (HTTP port + 1000) or HTTP port, and names what failed there (an untrusted server
 * certificate, a client certificate the server wants or refuses).
 */
final class NacosTlsProbe {

    /** nacos-client's default offset of the gRPC port from the HTTP port ({@code nacos.server.grpc.port.offset}). */
    static final int GRPC_PORT_OFFSET = 1000;

    private NacosTlsProbe() {}

    /**
     * The first handshake failure at one of {@code addresses}' ports (plus {@code portOffset}), as one line starting
     * with {@code what} and naming the address, or null when every handshake succeeds or fails for another reason (a
     * refused connection is reported elsewhere).
     */
    static String firstFailure(SSLContext tls, List<String> addresses, int portOffset, String what, Duration timeout) {
        for (String address : addresses) {
            String failure = probe(tls, address, portOffset, what, timeout);
            if (failure != null) return failure;
        }
        return null;
    }

    private static String probe(SSLContext tls, String address, int portOffset, String what, Duration timeout) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0) return null;
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1)) + portOffset;
        } catch (NumberFormatException e) {
            return null;
        }
        int millis = (int) Math.max(100, Math.min(timeout.toMillis(), 3000));
        try (Socket raw = new Socket()) {
            raw.connect(new InetSocketAddress(host, port), millis);
            try (SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(raw, host, port, false)) {
                SSLParameters p = s.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                if (portOffset == GRPC_PORT_OFFSET) p.setApplicationProtocols(new String[] {"h2"});
                s.setSSLParameters(p);
                s.setSoTimeout(millis);
                s.startHandshake();
                // with TLS 1.3 a refused client certificate is only heard of on the first read
                try {
                    if (s.getInputStream().read() < 0) {
                        return what + " " + host + ":" + port + ": the server closed the connection right after the"
                                + " TLS handshake: it may want a client certificate (tls.certFile, tls.keyFile) or"
                                + " refuse this one";
                    }
                } catch (SocketTimeoutException quiet) {
                    // the server waits for the client to speak: the handshake went through
                }
            }
            return null;
        } catch (SSLException e) {
            return what + " " + host + ":" + port + ": " + NacosErrors.cause(e);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
