package dev.meshbridge.app;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder on 127.0.0.1 in front of a server, which a test can cut (connections refused, open ones closed) and
 * restore on the same port: for the bridge, the registry behind it is down, then back. The registering applications
 * talk to the server directly and never notice.
 */
final class TcpProxy implements AutoCloseable {

    private final java.util.function.IntSupplier target;
    private final int port;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;

    TcpProxy(int target) throws IOException {
        this(() -> target);
    }

    /** A forwarder that asks {@code target} for the port of each new connection; -1 refuses it. */
    TcpProxy(java.util.function.IntSupplier target) throws IOException {
        this.target = target;
        this.server = bind(0);
        this.port = server.getLocalPort();
        accept(server);
    }

    int port() {
        return port;
    }

    /** The registry is unreachable: no new connection, and the open ones are closed. */
    synchronized void cut() throws IOException {
        server.close();
        for (Socket s : open) s.close();
        open.clear();
    }

    /** The registry is reachable again, on the same port. */
    synchronized void restore() throws IOException {
        server = bind(port);
        accept(server);
    }

    private static ServerSocket bind(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return s;
    }

    private void accept(ServerSocket listening) {
        Thread.ofVirtual().name("tcp-proxy-accept").start(() -> {
            while (!listening.isClosed()) {
                try {
                    Socket client = listening.accept();
                    int to = target.getAsInt();
                    if (to < 0) {
                        client.close(); // no target: the connection is refused
                        continue;
                    }
                    Socket upstream;
                    try {
                        upstream = new Socket(InetAddress.getLoopbackAddress(), to);
                    } catch (IOException e) {
                        client.close();
                        continue;
                    }
                    open.add(client);
                    open.add(upstream);
                    pipe(client, upstream);
                    pipe(upstream, client);
                } catch (IOException e) {
                    // closed by cut(), or the target refused: the client sees its connection fail
                }
            }
        });
    }

    private void pipe(Socket from, Socket to) {
        Thread.ofVirtual().name("tcp-proxy-pipe").start(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side went
            } finally {
                try {
                    from.close();
                    to.close();
                } catch (IOException ignored) {
                    // already closed
                }
                open.remove(from);
                open.remove(to);
            }
        });
    }

    @Override
    public void close() throws IOException {
        cut();
    }
}
