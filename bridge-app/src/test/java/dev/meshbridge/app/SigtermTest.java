package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.AdsTestClient;
import dev.meshbridge.registry.zookeeper.ZkServer;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.Status;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real process and the real signal: {@code meshbridge --config} in a JVM of its own, sent SIGTERM as Kubernetes
 * sends it. {@code /ready} turns 503 while the xDS stream is still served, then the stream ends with {@code
 * UNAVAILABLE} telling the client to reconnect to another replica, then the process exits.
 */
class SigtermTest {

    @TempDir
    Path dir;

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static int status(HttpClient http, int port, String path) {
        try {
            return http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void sigterm_readyTurns503_thenStreamsAreSentAway_thenTheProcessExits() throws Exception {
        try (ZkServer zk = new ZkServer()) {
            int admin = freePort();
            int xds = freePort();
            Path config = dir.resolve("bridge.yaml");
            Files.writeString(config, """
                    mcp: {enabled: false}
                    xds: {bindAddress: 127.0.0.1}
                    data: {directory: ""}
                    shutdown: {drainPeriod: 15s}
                    registries:
                      - type: zookeeper
                        name: zk
                        addresses: ["%s"]
                    """.formatted(zk.address()));
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            Process bridge = new ProcessBuilder(
                            java.toString(),
                            "-cp",
                            System.getProperty("java.class.path"),
                            Main.class.getName(),
                            "--config",
                            config.toString(),
                            "--admin-port",
                            Integer.toString(admin),
                            "--xds-port",
                            Integer.toString(xds))
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("bridge.log").toFile())
                    .start();
            HttpClient http = HttpClient.newHttpClient();
            try (AdsTestClient client =
                    new AdsTestClient(xds, Node.newBuilder().setId("envoy").build())) {
                await().atMost(Duration.ofSeconds(60)).until(() -> status(http, admin, "/ready") == 200);
                client.openSotw().sotw("type.googleapis.com/envoy.config.cluster.v3.Cluster", List.of(), "", "");
                assertThat(client.next().getVersionInfo()).isNotEmpty();

                bridge.destroy(); // SIGTERM
                // the drain period is long enough for a loaded machine to see it: with 2 s the process could be gone
                // before the test had looked at /healthz (what a drain promises is checked, not how long it lasts)
                await().atMost(Duration.ofSeconds(30)).until(() -> status(http, admin, "/ready") == 503);
                assertThat(status(http, admin, "/healthz")).isEqualTo(200);
                assertThat(bridge.isAlive())
                        .as("still serving during the drain period")
                        .isTrue();

                Status ended = Status.fromThrowable(client.failure());
                assertThat(ended.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(ended.getDescription()).contains("reconnect to another replica");
                assertThat(bridge.waitFor(30, TimeUnit.SECONDS))
                        .as("the process exits")
                        .isTrue();
            } finally {
                bridge.destroyForcibly();
            }
            assertThat(Files.readString(dir.resolve("bridge.log")))
                    .contains("shutting down: /ready answers 503")
                    .contains("xds server drained");
        }
    }
}
