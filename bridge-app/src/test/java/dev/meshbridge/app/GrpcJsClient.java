package dev.meshbridge.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Node's grpc-js with its own xDS implementation ({@code @grpc/grpc-js-xds}) as a {@link ProxylessClient}: {@code
 * src/test/node/grpc-js-client/client.js} in a Node process of its own, driven over stdin and stdout, its bootstrap
 * inline in {@code GRPC_XDS_BOOTSTRAP_CONFIG} (grpc-js requires the node to carry a {@code locality}).
 *
 * <p>{@link #install()} copies the client with its {@code package-lock.json} to {@code target/grpc-js-client} and runs
 * {@code npm ci} there once per lock file (the exact versions the lock pins); the test is skipped, saying so, only
 * where no {@code node} is on the PATH. The client's own log (grpc-js writes rejected resources there) goes to {@code
 * target/grpc-js-client/client-<n>.log}; {@code -Dmeshbridge.grpcjs.trace=true} adds grpc-js's xds_client and
 * xds_resolver traces to it.
 */
final class GrpcJsClient implements ProxylessClient {

    private static final Logger log = LoggerFactory.getLogger(GrpcJsClient.class);
    private static final Path SOURCE = Path.of("src/test/node/grpc-js-client");
    private static final Path DIR = Path.of("target/grpc-js-client");
    private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(90);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final Process process;
    private final OutputStream stdin;
    private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final String implementation;
    private final Path logFile;

    /**
     * Makes sure {@code node} runs here and the client's packages are installed; skips the calling test, naming what
     * is missing, where there is no {@code node}.
     */
    static void install() throws IOException, InterruptedException {
        String node;
        try {
            node = run(List.of("node", "--version"), Path.of("."), Duration.ofSeconds(30))
                    .trim();
        } catch (IOException e) {
            Assumptions.abort("no `node` on the PATH (" + e.getMessage() + "): the grpc-js xDS client test needs"
                    + " Node.js (>= 18) and npm; .ci/run installs them on Debian");
            return;
        }
        Files.createDirectories(DIR);
        for (String f : List.of("package.json", "package-lock.json", "client.js")) {
            Files.copy(SOURCE.resolve(f), DIR.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        String lock = sha256(Files.readAllBytes(DIR.resolve("package-lock.json")));
        Path stamp = DIR.resolve("node_modules/.meshbridge-lock-sha256");
        if (Files.exists(stamp) && Files.readString(stamp).equals(lock)) return;
        log.info("grpc-js client: npm ci in {} (node {})", DIR, node);
        run(List.of("npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"), DIR, INSTALL_TIMEOUT);
        Files.writeString(stamp, lock);
    }

    GrpcJsClient(int xdsPort) throws IOException {
        int n = CLIENTS.incrementAndGet();
        ObjectNode bootstrap = JSON.createObjectNode();
        ObjectNode server = bootstrap.putArray("xds_servers").addObject();
        server.put("server_uri", "127.0.0.1:" + xdsPort);
        server.putArray("channel_creds").addObject().put("type", "insecure");
        server.putArray("server_features").add("xds_v3");
        ObjectNode nodeId = bootstrap.putObject("node");
        nodeId.put("id", "meshbridge-grpc-js-" + n);
        nodeId.put("cluster", "zk-e2e");
        nodeId.putObject("locality");
        logFile = DIR.resolve("client-" + n + ".log").toAbsolutePath();
        ProcessBuilder pb = new ProcessBuilder("node", "client.js")
                .directory(DIR.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        pb.environment().put("GRPC_XDS_BOOTSTRAP_CONFIG", JSON.writeValueAsString(bootstrap));
        if (Boolean.getBoolean("meshbridge.grpcjs.trace")) {
            pb.environment().put("GRPC_TRACE", "xds_client,xds_resolver");
            pb.environment().put("GRPC_VERBOSITY", "DEBUG");
        } else {
            pb.environment().put("GRPC_VERBOSITY", "ERROR");
        }
        process = pb.start();
        stdin = process.getOutputStream();
        Thread.ofPlatform().name("grpc-js-client-" + n).daemon().start(this::readAnswers);
        JsonNode v = request(JSON.createObjectNode().put("op", "versions"));
        implementation = "grpc-js " + v.path("grpcJs").asText() + " + grpc-js-xds "
                + v.path("grpcJsXds").asText() + " on Node " + v.path("node").asText();
    }

    @Override
    public String implementation() {
        return implementation;
    }

    @Override
    public Calls call(String host, int n) {
        return calls(request(
                JSON.createObjectNode().put("op", "call").put("host", host).put("n", n)));
    }

    @Override
    public void startTraffic(List<String> hosts) {
        ObjectNode r = JSON.createObjectNode().put("op", "start");
        hosts.forEach(r.putArray("hosts")::add);
        request(r);
    }

    @Override
    public Calls traffic() {
        return calls(request(JSON.createObjectNode().put("op", "progress")));
    }

    @Override
    public Calls stopTraffic() {
        return calls(request(JSON.createObjectNode().put("op", "stop")));
    }

    @Override
    public void close() {
        try {
            stdin.close();
            if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly();
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    private static Calls calls(JsonNode answer) {
        Map<String, Long> answered = new TreeMap<>();
        answer.path("answeredBy")
                .fields()
                .forEachRemaining(e -> answered.put(e.getKey(), e.getValue().asLong()));
        List<String> failures = new ArrayList<>();
        answer.path("failures").forEach(f -> failures.add(f.asText()));
        return new Calls(answered, failures);
    }

    /** Sends one request and waits for its answer; an error answer, a dead process or a timeout fail the test. */
    private JsonNode request(ObjectNode request) {
        long id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        try {
            stdin.write((JSON.writeValueAsString(request.put("id", id)) + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
            JsonNode a = answer.get(ANSWER_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (a.has("error"))
                throw new AssertionError("grpc-js client: " + a.get("error").asText() + tail());
            return a;
        } catch (IOException | ExecutionException | TimeoutException e) {
            throw new AssertionError("grpc-js client: no answer to " + request + ": " + e + tail(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } finally {
            pending.remove(id);
        }
    }

    private void readAnswers() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                JsonNode a = JSON.readTree(line);
                CompletableFuture<JsonNode> f = pending.get(a.path("id").asLong());
                if (f != null) f.complete(a);
            }
        } catch (IOException e) {
            log.warn("grpc-js client: reading its answers failed: {}", e.toString());
        }
        IOException gone = new IOException("the node process ended");
        pending.values().forEach(f -> f.completeExceptionally(gone));
    }

    /** The end of the client's log, for a failure message. */
    private String tail() {
        try {
            List<String> lines = Files.readAllLines(logFile);
            return "\n--- " + logFile + " (last lines) ---\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    /** Runs a command to completion within {@code timeout}; its output, or an error naming its exit and output. */
    private static String run(List<String> command, Path dir, Duration timeout)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("meshbridge-cmd", ".log");
        try {
            Process p = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(command + " did not finish within " + timeout + ": " + Files.readString(out));
            }
            String output = Files.readString(out);
            if (p.exitValue() != 0)
                throw new AssertionError(command + " in " + dir + " exited with " + p.exitValue() + ":\n" + output);
            return output;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new UncheckedIOException(new IOException(e));
        }
    }
}
