package dev.meshbridge.registry.zookeeper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper server in this JVM (curator-test), listening on 127.0.0.1 and a random port. Sessions may be as
 * short as 200 ms (so tests can let one expire) and as long as 60 s (so writers survive a restart).
 */
public final class ZkServer implements AutoCloseable {

    private final TestingServer server;
    private final Path dataDirectory;

    public ZkServer() throws Exception {
        dataDirectory = Files.createTempDirectory("meshbridge-zk-");
        InstanceSpec spec = new InstanceSpec(
                dataDirectory.toFile(),
                -1,
                -1,
                -1,
                true,
                -1,
                100,
                200,
                Map.of(
                        "clientPortAddress", "127.0.0.1",
                        "minSessionTimeout", "200",
                        "maxSessionTimeout", "60000",
                        "admin.enableServer", "false"),
                "127.0.0.1");
        server = new TestingServer(spec, true);
    }

    public int port() {
        return server.getPort();
    }

    public String address() {
        return "127.0.0.1:" + server.getPort();
    }

    /** A started client that writes like a registering application would. */
    public CuratorFramework client() throws InterruptedException {
        return client("");
    }

    public CuratorFramework client(String chroot) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(address() + chroot)
                .sessionTimeoutMs(30_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        c.start();
        if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper");
        return c;
    }

    /** Stops the server and starts it again on the same port with the same data (sessions survive). */
    public void restart() throws Exception {
        server.restart();
    }

    /** Stops the server (clients lose their connection and try again). */
    public void stop() throws Exception {
        server.stop();
    }

    /** Starts a stopped server again with its data (sessions come back, each with its full timeout). */
    public void start() throws Exception {
        server.restart();
    }

    /**
     * Stops the server, empties its data directory and starts it again on the same port: every znode and every
     * session is gone, as after an ensemble rebuilt from nothing.
     */
    public void restartEmpty() throws Exception {
        server.stop();
        try (Stream<Path> paths = Files.walk(dataDirectory)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                if (!p.equals(dataDirectory)) Files.delete(p);
            }
        }
        server.restart();
    }

    public static Duration timeout() {
        return Duration.ofSeconds(20);
    }

    @Override
    public void close() throws Exception {
        server.close();
    }
}
