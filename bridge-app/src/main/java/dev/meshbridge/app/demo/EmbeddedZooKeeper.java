package dev.meshbridge.app.demo;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/** A standalone ZooKeeper server in this JVM, on 127.0.0.1, with its data in a temporary directory. */
public final class EmbeddedZooKeeper implements AutoCloseable {

    private final Path dir;
    private final int port;
    private final ZooKeeperServerEmbedded server;

    /** Starts a server on {@code port} (0 picks a free port). */
    public EmbeddedZooKeeper(int port) throws Exception {
        this.dir = Files.createTempDirectory("meshbridge-demo-zk");
        this.port = port == 0 ? freePort() : port;
        Properties p = new Properties();
        p.setProperty("clientPort", Integer.toString(this.port));
        p.setProperty("clientPortAddress", "127.0.0.1");
        p.setProperty("dataDir", dir.resolve("data").toString());
        p.setProperty("admin.enableServer", "false");
        p.setProperty("tickTime", "500");
        p.setProperty("initLimit", "10");
        p.setProperty("syncLimit", "5");
        this.server = ZooKeeperServerEmbedded.builder()
                .baseDir(dir)
                .configuration(p)
                .exitHandler(ExitHandler.LOG_ONLY)
                .build();
        server.start(30_000);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    public String connectString() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    @Override
    public void close() {
        server.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory; the OS cleans it eventually
        }
    }
}
