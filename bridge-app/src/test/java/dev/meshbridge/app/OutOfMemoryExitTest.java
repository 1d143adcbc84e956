package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bridge that runs out of heap anyway ends its JVM, so the orchestrator restarts it, instead of living on as a
 * process that answers nothing (issue 18: an OutOfMemoryError on the xDS, ZooKeeper and admin threads left a JVM that
 * even SIGTERM did not stop). The real {@link Main} runs in its own JVM with the options of the {@code meshbridge}
 * launcher, read from the script, and a small heap; once it serves, a configuration edit asks for a catalog far too
 * large for that heap, so the error hits a worker thread of a running bridge (without the launcher's option that JVM
 * stays up: its admin server and servers keep it alive).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class OutOfMemoryExitTest {

    @TempDir
    Path dir;

    /** The JVM options the launcher always passes: its {@code opts=(...)} line. */
    static List<String> launcherOptions() throws Exception {
        String script = Files.readString(Path.of("..", "meshbridge"));
        Matcher m = Pattern.compile("(?m)^opts=\\(([^)]*)\\)").matcher(script);
        assertThat(m.find()).as("the launcher's opts=(...) line").isTrue();
        List<String> out = new ArrayList<>();
        for (String o : m.group(1).trim().split("\\s+")) if (!o.isEmpty()) out.add(o);
        return out;
    }

    private static String config(String registries) {
        return """
                xds: {port: 0, bindAddress: 127.0.0.1}
                mcp: {port: 0, bindAddress: 127.0.0.1}
                data: {directory: ""}
                reload: {interval: 100ms}
                registries:
                  - type: fixed
                    name: small
                    addresses: [x]
                    services: [a]
                """ + registries;
    }

    @Test
    void anOutOfMemoryErrorInARunningBridge_endsTheProcess_asTheLauncherRunsIt() throws Exception {
        List<String> options = launcherOptions();
        assertThat(options).contains("-XX:+ExitOnOutOfMemoryError");
        int admin;
        try (ServerSocket s = new ServerSocket(0)) {
            admin = s.getLocalPort();
        }
        Path config = dir.resolve("bridge.yaml");
        Files.writeString(config, config(""));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        command.add("-Xmx64m");
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(List.of("--config", config.toString(), "--admin-port", Integer.toString(admin)));
        Path log = dir.resolve("bridge.log");
        Process bridge = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            HttpClient http = HttpClient.newHttpClient();
            await().atMost(Duration.ofSeconds(60))
                    .ignoreExceptions()
                    .until(() -> http.send(
                                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin + "/ready"))
                                                    .build(),
                                            HttpResponse.BodyHandlers.discarding())
                                    .statusCode()
                            == 200);

            StringBuilder services = new StringBuilder();
            for (int i = 0; i < 2_000; i++)
                services.append(i == 0 ? "" : ", ").append("svc").append(i);
            Files.writeString(config, config("""
                      - type: fixed
                        name: huge
                        addresses: [x]
                        endpoints: 65536
                        services: [%s]
                    """.formatted(services)));

            assertThat(bridge.waitFor(60, TimeUnit.SECONDS))
                    .as("the JVM ends after its OutOfMemoryError")
                    .isTrue();
            assertThat(bridge.exitValue()).isNotZero();
            assertThat(Files.readString(log)).contains("Terminating due to java.lang.OutOfMemoryError");
        } finally {
            bridge.destroyForcibly();
        }
    }
}
