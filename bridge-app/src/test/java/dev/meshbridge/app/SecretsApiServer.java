package dev.meshbridge.app;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Secrets read path of a Kubernetes API server ({@code GET /api/v1/namespaces/NS/secrets/NAME}), for the bridge's
 * fabric8 client where no kube-apiserver can run and fabric8's mock server cannot start (its Vert.x needs a newer Netty
 * than the one grpc brings onto this module's test class path). Answers as the API server does: the Secret with its
 * {@code data} Base64-encoded, or a {@code Status} with code 404 {@code NotFound}; anything else is 404 too.
 */
final class SecretsApiServer implements AutoCloseable {

    private static final Pattern SECRET = Pattern.compile("^/api/v1/namespaces/([^/]+)/secrets/([^/?]+)$");

    private final HttpServer server;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Map<String, String>> secrets = new ConcurrentHashMap<>();
    private final AtomicInteger reads = new AtomicInteger();

    SecretsApiServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Writes a kubeconfig for this server into {@code dir}, whose context namespace (the bridge's own) is given. */
    Path kubeconfig(Path dir, String namespace) throws IOException {
        return Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: api, cluster: {server: "%s"}}]
                contexts: [{name: api, context: {cluster: api, user: bridge, namespace: %s}}]
                current-context: api
                users: [{name: bridge, user: {token: not-a-secret}}]
                """.formatted(url(), namespace));
    }

    /** Creates or replaces the Secret {@code namespace/name} with these plain values. */
    void put(String namespace, String name, Map<String, String> data) {
        secrets.put(namespace + "/" + name, Map.copyOf(data));
    }

    /** How many times a Secret was asked for (found or not). */
    int reads() {
        return reads.get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            Matcher m = SECRET.matcher(exchange.getRequestURI().getPath());
            Map<String, String> data = null;
            if (exchange.getRequestMethod().equals("GET") && m.matches()) {
                reads.incrementAndGet();
                data = secrets.get(m.group(1) + "/" + m.group(2));
            }
            Map<String, Object> body = new LinkedHashMap<>();
            int code;
            if (data != null) {
                code = 200;
                Map<String, String> encoded = new LinkedHashMap<>();
                data.forEach((k, v) ->
                        encoded.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
                body.put("apiVersion", "v1");
                body.put("kind", "Secret");
                body.put("metadata", Map.of("name", m.group(2), "namespace", m.group(1)));
                body.put("type", "Opaque");
                body.put("data", encoded);
            } else {
                code = 404;
                body.put("apiVersion", "v1");
                body.put("kind", "Status");
                body.put("status", "Failure");
                body.put("reason", "NotFound");
                body.put("code", 404);
                body.put("message", "not found");
            }
            byte[] bytes = json.writeValueAsBytes(body);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(code, bytes.length);
            exchange.getResponseBody().write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
