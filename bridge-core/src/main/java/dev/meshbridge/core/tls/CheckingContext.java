package dev.meshbridge.core.tls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.security.KeyManagementException;
import java.security.SecureRandom;
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
 * HTTP client) or an engine (Netty, gRPC). The check is what lets a rotated certificate reach the next connection
 * even when the TLS stack would resume a session: a resumed handshake never asks the key manager.
 */
final class CheckingContext {

    private CheckingContext() {}

    static SSLContext wrap(SSLContext inner, Runnable beforeConnect) {
        return new SSLContext(new Spi(inner, beforeConnect), inner.getProvider(), inner.getProtocol()) {};
    }

    private static final class Spi extends SSLContextSpi {
        private final SSLContext inner;
        private final Runnable check;
        private final SSLSocketFactory sockets;

        Spi(SSLContext inner, Runnable check) {
            this.inner = inner;
            this.check = check;
            this.sockets = new Sockets(inner.getSocketFactory(), check);
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
            return inner.getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            check.run();
            return inner.createSSLEngine();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            check.run();
            return inner.createSSLEngine(host, port);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return inner.getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return inner.getClientSessionContext();
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            return inner.getDefaultSSLParameters();
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return inner.getSupportedSSLParameters();
        }
    }

    private static final class Sockets extends SSLSocketFactory {
        private final SSLSocketFactory inner;
        private final Runnable check;

        Sockets(SSLSocketFactory inner, Runnable check) {
            this.inner = inner;
            this.check = check;
        }

        @Override
        public String[] getDefaultCipherSuites() {
            return inner.getDefaultCipherSuites();
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return inner.getSupportedCipherSuites();
        }

        @Override
        public Socket createSocket() throws IOException {
            check.run();
            return inner.createSocket();
        }

        @Override
        public Socket createSocket(Socket s, String host, int port, boolean autoClose) throws IOException {
            check.run();
            return inner.createSocket(s, host, port, autoClose);
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            check.run();
            return inner.createSocket(host, port);
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            check.run();
            return inner.createSocket(host, port, localHost, localPort);
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            check.run();
            return inner.createSocket(host, port);
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
                throws IOException {
            check.run();
            return inner.createSocket(address, port, localAddress, localPort);
        }
    }
}
