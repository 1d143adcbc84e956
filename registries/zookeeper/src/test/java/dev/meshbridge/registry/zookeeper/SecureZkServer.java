package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.testing.TestPki;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper (curator-test) with its secure client port next to the plain one: Netty, {@code
 * ssl.clientAuth=need}, a server certificate and a CA made here (PEM key and trust stores), for the watcher's and the
 * whole bridge's TLS tests. Applications register over the plain port, as most still do.
 */
public final class SecureZkServer implements AutoCloseable {

    /** ZooKeeper reads server TLS settings from system properties (QuorumPeerConfig copies unknown keys there). */
    private static final List<String> SERVER_PROPERTIES = List.of(
            "zookeeper.serverCnxnFactory",
            "zookeeper.ssl.keyStore.location",
            "zookeeper.ssl.keyStore.type",
            "zookeeper.ssl.trustStore.location",
            "zookeeper.ssl.trustStore.type",
            "zookeeper.ssl.clientAuth",
            "zookeeper.ssl.clientHostnameVerification");

    private final Path dir;
    private final TestPki ca;
    private final TestingServer server;
    private final int securePort;

    /** Starts the server; its certificates and key stores are written under {@code dir}. */
    public SecureZkServer(Path dir) throws Exception {
        this.dir = dir;
        ca = TestPki.ca("zookeeper-test-ca");
        Path serverPem =
                keyStore(ca.leaf("zookeeper").dns("localhost").ip("127.0.0.1").issue(), "server");
        Path caPem = ca.writeCa(dir.resolve("ca.pem"));
        try (ServerSocket s = new ServerSocket(0)) {
            securePort = s.getLocalPort();
        }
        InstanceSpec spec = new InstanceSpec(
                null,
                -1,
                -1,
                -1,
                true,
                -1,
                100,
                200,
                Map.ofEntries(
                        Map.entry("clientPortAddress", "127.0.0.1"),
                        Map.entry("secureClientPort", Integer.toString(securePort)),
                        Map.entry("secureClientPortAddress", "127.0.0.1"),
                        Map.entry("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory"),
                        Map.entry("ssl.keyStore.location", serverPem.toString()),
                        Map.entry("ssl.keyStore.type", "PEM"),
                        Map.entry("ssl.trustStore.location", caPem.toString()),
                        Map.entry("ssl.trustStore.type", "PEM"),
                        Map.entry("ssl.clientAuth", "need"),
                        Map.entry("ssl.clientHostnameVerification", "false"),
                        Map.entry("admin.enableServer", "false")),
                "127.0.0.1");
        server = new TestingServer(spec, true);
    }

    /** {@code 127.0.0.1:port} of the secure client port. */
    public String secureAddress() {
        return "127.0.0.1:" + securePort;
    }

    /** The CA that issued the server certificate, as PEM. */
    public Path caPem() {
        return dir.resolve("ca.pem");
    }

    /** A PEM key store (private key and chain in one file, as ZooKeeper reads it) for a client certificate of the CA. */
    public Path clientKeyStore(String name) throws Exception {
        return keyStore(ca.leaf(name).dns("localhost").ip("127.0.0.1").issue(), name);
    }

    /** Registers a Dubbo provider of {@code service} at {@code address} over the plain port. */
    public void registerDubbo(String service, String address) throws Exception {
        try (CuratorFramework writer = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + server.getPort())
                .retryPolicy(new RetryOneTime(100))
                .build()) {
            writer.start();
            writer.blockUntilConnected(10, TimeUnit.SECONDS);
            String url = "dubbo://" + address + ":20880/" + service + "?application=vault&interface=" + service;
            writer.create()
                    .creatingParentsIfNeeded()
                    .forPath("/dubbo/" + service + "/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8));
        }
    }

    /** Stops and starts the server with its data: every client connects (and handshakes) again. */
    public void restart() throws Exception {
        server.restart();
    }

    private Path keyStore(TestPki.Issued issued, String name) throws Exception {
        Path cert = dir.resolve(name + ".crt");
        Path key = dir.resolve(name + ".key");
        issued.write(cert, key);
        return Files.writeString(dir.resolve(name + ".pem"), Files.readString(key) + Files.readString(cert));
    }

    @Override
    public void close() throws Exception {
        try {
            server.close();
        } finally {
            SERVER_PROPERTIES.forEach(System::clearProperty);
        }
    }
}
