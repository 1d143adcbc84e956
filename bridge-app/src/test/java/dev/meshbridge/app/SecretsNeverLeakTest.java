package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.testing.TestPki;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * No credential leaves the bridge: a distinctive secret in every credential field of every registry type (ZooKeeper
 * digest password, also read from a Kubernetes Secret, Nacos password and access-key secret, Consul token, Eureka
 * password) and as the TLS key password
 * of both servers, through start, connections that fail (every registry address is a closed port), a config reload,
 * a refused reload, {@code --check} and shutdown; every log line at DEBUG and above (messages and exceptions) and
 * every admin response ({@code /}, {@code /ready}, {@code /healthz}, {@code /metrics}, every {@code /debug} page) is
 * scanned for it, raw and Base64-encoded (as HTTP basic auth would carry it).
 */
class SecretsNeverLeakTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    private static final String SECRET =
            "Leak-Canary-" + UUID.randomUUID().toString().replace("-", "");

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Map<String, String> responses = new LinkedHashMap<>();
    private ch.qos.logback.classic.Logger root;
    private Level rootLevel;
    private Bridge bridge;
    private int closedPort;
    private Path certFile;
    private Path keyFile;
    private Path caFile;
    /** The API server's Secrets path: a ZooKeeper password read from a Kubernetes Secret holds the secret too. */
    private SecretsApiServer api;

    @BeforeEach
    void capture() throws Exception {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        rootLevel = root.getLevel();
        root.setLevel(Level.DEBUG);
        logs.setContext(ctx);
        logs.start();
        root.addAppender(logs);
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort(); // closed again: every connection to it is refused
        }
        TestPki ca = TestPki.ca("leak-test-ca");
        TestPki.Issued server = ca.leaf("meshbridge").dns("localhost").issue();
        certFile = dir.resolve("tls.crt");
        keyFile = dir.resolve("tls.key");
        server.write(certFile, keyFile);
        server.writeEncryptedKey(keyFile, SECRET.toCharArray());
        caFile = ca.writeCa(dir.resolve("ca.crt"));
        api = new SecretsApiServer();
        api.put("meshbridge", "zk-auth", Map.of("password", SECRET));
    }

    @AfterEach
    void release() {
        if (bridge != null) bridge.close();
        if (api != null) api.close();
        root.detachAppender(logs);
        root.setLevel(rootLevel);
    }

    private String config(String extraRegistryField) throws Exception {
        Path secretFile = dir.resolve("consul-token");
        Files.writeString(secretFile, SECRET + "\n");
        String dead = "127.0.0.1:" + closedPort;
        String tls = "  tls: {certFile: " + certFile + ", keyFile: " + keyFile + ", keyPassword: \"" + SECRET
                + "\", caFile: " + caFile + ", allowedUriSans: [\"spiffe://cluster.local/ns/*/sa/istiod\"]}\n";
        return "admin: {port: 0}\n"
                + "xds:\n  port: 0\n  bindAddress: 127.0.0.1\n" + tls
                + "mcp:\n  port: 0\n  bindAddress: 127.0.0.1\n" + tls
                + "reload: {interval: 1h}\n"
                + "ingress:\n  kubernetes: {enabled: true, kubeconfig: " + api.kubeconfig(dir, "meshbridge")
                + ", watchIngresses: false, events: false}\n"
                + "registries:\n"
                + "  - {type: zookeeper, name: zk, addresses: [" + dead + "], syncTimeout: 1s, username: bridge,"
                + " password: \"" + SECRET + "\"" + extraRegistryField + "}\n"
                + "  - {type: nacos, name: nacos, addresses: [" + dead + "], syncTimeout: 1s, nacosUsername: nacos,"
                + " nacosPassword: \"" + SECRET + "\", nacosAccessKey: ak, nacosSecretKey: \"" + SECRET + "\"}\n"
                // Nacos over TLS (an encrypted client key) with access keys: both go into nacos-client's properties;
                // a user too, whose login goes over the watcher's HTTPS (nacos-client gets the token)
                + "  - {type: nacos, name: nacos-tls, addresses: [" + dead + "], syncTimeout: 1s,"
                + " nacosUsername: nacos, nacosPassword: \"" + SECRET + "\","
                + " nacosGroups: [\"*\"], nacosAccessKey: ak, nacosSecretKey: \"" + SECRET + "\", tls: {caFile: "
                + caFile + ", certFile: " + certFile + ", keyFile: " + keyFile + ", keyPassword: \"" + SECRET
                + "\"}}\n"
                + "  - {type: consul, name: consul, addresses: [" + dead + "], syncTimeout: 1s,"
                + " consulToken: {file: " + secretFile + "}}\n"
                + "  - {type: eureka, name: eureka, addresses: [\"http://" + dead + "/eureka\"], syncTimeout: 1s,"
                + " username: eureka, password: \"" + SECRET + "\"}\n"
                + "  - {type: zookeeper, name: zk-secret, addresses: [" + dead + "], syncTimeout: 1s, username: bridge,"
                + " password: {secret: {name: zk-auth, key: password}}}\n";
    }

    private String get(String path) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort() + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        responses.put(path + " #" + responses.size(), r.body());
        if (!path.equals("/ready")) assertThat(r.statusCode()).as(path).isEqualTo(200);
        return r.body();
    }

    /** Every admin page, the debug pages found from the index. */
    private void readEveryPage() throws Exception {
        String index = get("/");
        for (String p : List.of("/ready", "/healthz", "/metrics", "/debug")) get(p);
        Matcher m = Pattern.compile("\"(/debug/[a-z0-9/_-]+)\"").matcher(index + get("/debug"));
        List<String> pages = new ArrayList<>();
        while (m.find()) if (!pages.contains(m.group(1))) pages.add(m.group(1));
        assertThat(pages).contains("/debug/xds", "/debug/mcp", "/debug/registries");
        for (String p : pages) get(p);
    }

    private boolean everyRegistryFailedToConnect() throws Exception {
        JsonNode health = new ObjectMapper().readTree(get("/healthz"));
        List<String> failed = new ArrayList<>();
        health.findParents("name").forEach(n -> {
            JsonNode error = n.get("lastError");
            if (error != null && !error.isNull() && !error.asText().isEmpty())
                failed.add(n.get("name").asText());
        });
        return failed.containsAll(List.of("zk", "nacos", "nacos-tls", "consul", "eureka", "zk-secret"));
    }

    @Test
    void aSecretInEveryCredentialField_appearsInNoLogLineAndNoAdminResponse() throws Exception {
        Path file = dir.resolve("bridge.yaml");
        Files.writeString(file, config(""));

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int check = Main.run(
                new String[] {"--config", file.toString(), "--check"},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                false);
        assertThat(check).isEqualTo(Main.EXIT_OK);

        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(this::everyRegistryFailedToConnect);
        readEveryPage();

        // a reload that restarts the ZooKeeper watcher, then one that is refused
        Files.writeString(file, config(", sessionTimeout: 20s"));
        bridge.checkConfigFile();
        Files.writeString(file, config(", passwrd: \"" + SECRET + "\""));
        bridge.checkConfigFile();
        readEveryPage();
        // the refused edit, checked from the command line too
        Main.run(
                new String[] {"--config", file.toString(), "--check"},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                false);

        bridge.close();
        bridge = null;

        List<String> texts = new ArrayList<>();
        for (ILoggingEvent e : logs.list) {
            texts.add("log " + e.getLoggerName() + ": " + e.getFormattedMessage()
                    + (e.getThrowableProxy() == null ? "" : "\n" + ThrowableProxyUtil.asString(e.getThrowableProxy())));
        }
        responses.forEach((path, body) -> texts.add("admin " + path + ": " + body));
        texts.add("--check stdout: " + out.toString(StandardCharsets.UTF_8));
        texts.add("--check stderr: " + err.toString(StandardCharsets.UTF_8));

        assertThat(logs.list).as("log lines captured").hasSizeGreaterThan(20);
        assertThat(api.reads())
                .as("the zk-secret password was read from the Kubernetes Secret")
                .isPositive();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .as("the refused edit is reported")
                .contains("passwrd");
        String b64 = Base64.getEncoder().encodeToString(("eureka:" + SECRET).getBytes(StandardCharsets.UTF_8));
        assertThat(texts)
                .as("no log line, admin response or --check output carries the secret")
                .noneMatch(t -> t.contains(SECRET) || t.contains(b64));
    }
}
