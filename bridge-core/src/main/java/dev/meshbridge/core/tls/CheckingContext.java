package dev.meshbridge.core.tls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.security.KeyManagementException;
import java.security.SecureRandom;
import java.util.function.Supplier;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * A client TLS context that runs a check before every connection it makes, whether through its socket factory (an
 * HTTP client) or an engine (Netty, gRPC), and then makes the connection with the context current after the check.
 * The check is what lets a rotated certificate reach the next connection even when the TLS stack would resume a
 * session: a resumed handshake never asks the key manager; a check that reloads the files also replaces the current
 * context, so the sessions of the old files stay in the old one's cache.
 */
final class CheckingContext {

    private CheckingContext() {}

    /**
     * @param first the context current now (its provider and protocol name the wrapper)
     * @param current the context to connect with, asked after each check
     */
    static SSLContext wrap(SSLContext first, Supplier<SSLContext> current, Runnable beforeConnect) {
        return new SSLContext(new Spi(current, beforeConnect), first.getProvider(), first.getProtocol()) {};
    }

    private static final class Spi extends SSLContextSpi {
        private final Supplier<SSLContext> current;
        private final Runnable check;
        private final SSLSocketFactory sockets;

        Spi(Supplier<SSLContext> current, Runnable check) {
            this.current = current;
            this.check = check;
            this.sockets = new Sockets(() -> current.get().getSocketFactory(), check);
        }

        @Override
        protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom random)
                throws KeyManagementException {
            throw new KeyManagementException("this context is initialised from its TLS files already");
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return sockets;
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return current.get().getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            check.run();
            return current.get().createSSLEngine();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            check.run();
            return current.get().createSSLEngine(host, port);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return current.get().getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return current.get().getClientSessionContext();
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            return current.get().getDefaultSSLParameters();
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return current.get().getSupportedSSLParameters();
        }
    }

    /** Checks, then creates the socket with the socket factory of the context current after the check. */
    private static final class Sockets extends SSLSocketFactory {
        private final Supplier<SSLSocketFactory> current;
        private final Runnable check;

        Sockets(Supplier<SSLSocketFactory> current, Runnable check) {
            this.current = current;
            this.check = check;
        }

        private SSLSocketFactory checked() {
            check.run();
            return current.get();
        }

        @Override
        public String[] getDefaultCipherSuites() {
            return current.get().getDefaultCipherSuites();
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return current.get().getSupportedCipherSuites();
        }

        @Override
        public Socket createSocket() throws IOException {
            return checked().createSocket();
        }

        @Override
        public Socket createSocket(Socket s, String host, int port, boolean autoClose) throws IOException {
            return checked().createSocket(s, host, port, autoClose);
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return checked().createSocket(host, port);
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            return checked().createSocket(host, port, localHost, localPort);
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            return checked().createSocket(host, port);
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
                throws IOException {
            return checked().createSocket(address, port, localAddress, localPort);
        }
    }
}
