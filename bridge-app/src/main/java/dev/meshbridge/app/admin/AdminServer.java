package dev.meshbridge.app.admin;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.util.LogText;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin HTTP server: {@code /ready}, {@code /healthz}, {@code /metrics} (Prometheus text), {@code /debug/...}
 * (JSON views contributed as {@link DebugSource}s) and actions ({@code POST /admin/...}). Requests are served on
 * virtual threads.
 *
 * <p>An action changes what the bridge serves, so it is taken only from a caller allowed to: with an admin token
 * configured, a request carrying {@code Authorization: Bearer <token>} (from any address); without one, a request from
 * a loopback address. Anything else gets 403 and changes nothing.
 */
public final class AdminServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

    /** A health answer: HTTP status and a JSON body. */
    public record Health(boolean ok, Object body) {}

    /** An action's answer: HTTP status and a JSON body. */
    public record Answer(int status, Object body) {}

    /** An action under {@code POST <prefix>}; gets the rest of the path. */
    @FunctionalInterface
    public interface Action {
        Answer run(String rest);
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final List<DebugSource> debugSources = new CopyOnWriteArrayList<>();
    private final Map<String, Action> actions = new java.util.concurrent.ConcurrentHashMap<>();
    private final ObjectMapper json;
    private final Secret token;
    /** Debug pages render on demand: at most this many at once, the rest answered 503 at once (admin bounds). */
    private final java.util.concurrent.Semaphore debugPermits;

    private final int maxConcurrentDebug;

    /**
     * @param ready answers {@code /ready}
     * @param healthz answers {@code /healthz}
     * @param metrics renders {@code /metrics} in the Prometheus text format
     */
    public AdminServer(
            String address, int port, Supplier<Health> ready, Supplier<Health> healthz, Supplier<String> metrics)
            throws IOException {
        this(address, port, null, ready, healthz, metrics, 2);
    }

    /**
     * @param token the admin token that allows actions from any address, or null: actions from loopback only
     * @param ready answers {@code /ready}
     * @param healthz answers {@code /healthz}
     * @param metrics renders {@code /metrics} in the Prometheus text format
     * @param maxConcurrentDebug debug pages rendered at once ({@code admin.maxConcurrentDebugRequests})
     */
    public AdminServer(
            String address,
            int port,
            Secret token,
            Supplier<Health> ready,
            Supplier<Health> healthz,
            Supplier<String> metrics,
            int maxConcurrentDebug)
            throws IOException {
        this.token = token;
        this.maxConcurrentDebug = maxConcurrentDebug;
        this.debugPermits = new java.util.concurrent.Semaphore(maxConcurrentDebug);
        this.json = new ObjectMapper()
                .registerModule(new JavaTimeModule())
                .registerModule(new SimpleModule()
                        .addSerializer(Secret.class, ToStringSerializer.instance)
                        // options records hold optional credentials (a Consul token): shown masked, or null
                        .addSerializer(new OptionalSerializer())
                        // a host naming scheme shows as the template in force (it has no bean properties)
                        .addSerializer(HostTemplate.class, ToStringSerializer.instance))
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
                .enable(SerializationFeature.INDENT_OUTPUT);
        this.server = HttpServer.create(new InetSocketAddress(address, port), 64);
        server.setExecutor(executor);
        server.createContext("/ready", ex -> health(ex, ready.get()));
        server.createContext("/healthz", ex -> health(ex, healthz.get()));
        server.createContext("/metrics", ex -> {
            if (!isGet(ex)) return;
            send(
                    ex,
                    200,
                    "text/plain; version=0.0.4; charset=utf-8",
                    metrics.get().getBytes(StandardCharsets.UTF_8));
        });
        server.createContext("/debug", this::debug);
        server.createContext("/admin/", this::action);
        server.createContext("/", ex -> {
            if (!isGet(ex)) return;
            if (!ex.getRequestURI().getPath().equals("/")) {
                sendJson(ex, 404, Map.of("error", "not found", "see", "/debug"));
                return;
            }
            sendJson(ex, 200, index());
        });
    }

    public void start() {
        server.start();
        log.info(
                "admin server listening on http://{}:{}/ (ready, healthz, metrics, debug)",
                server.getAddress().getHostString(),
                port());
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Adds a page under {@code /debug/<name>}. */
    public void addDebugSource(DebugSource source) {
        debugSources.removeIf(s -> s.name().equals(source.name()));
        debugSources.add(source);
    }

    /** Adds an action under {@code POST <prefix>} (for example {@code /admin/registries/}). */
    public void addAction(String prefix, Action action) {
        actions.put(prefix, action);
    }

    private void action(HttpExchange ex) throws IOException {
        if (!ex.getRequestMethod().equals("POST")) {
            send(ex, 405, "text/plain", "only POST\n".getBytes(StandardCharsets.UTF_8));
            return;
        }
        String refusal = refusal(
                ex.getRemoteAddress().getAddress(), ex.getRequestHeaders().getFirst("Authorization"), token);
        if (refusal != null) {
            log.warn(
                    "admin action {} refused from {}: {}",
                    LogText.safe(ex.getRequestURI().getPath()),
                    ex.getRemoteAddress().getAddress().getHostAddress(),
                    refusal);
            sendJson(ex, 403, Map.of("error", refusal));
            return;
        }
        String path = ex.getRequestURI().getPath();
        for (Map.Entry<String, Action> a : actions.entrySet()) {
            if (path.startsWith(a.getKey())) {
                Answer answer;
                try {
                    answer = a.getValue().run(path.substring(a.getKey().length()));
                } catch (RuntimeException e) {
                    log.warn("admin action {} failed", LogText.safe(path), e);
                    sendJson(ex, 500, Map.of("error", String.valueOf(e)));
                    return;
                }
                sendJson(ex, answer.status(), answer.body());
                return;
            }
        }
        sendJson(ex, 404, Map.of("error", "no admin action at " + LogText.safe(path), "actions", actions.keySet()));
    }

    /**
     * Why an action from {@code remote} with this {@code Authorization} header is refused, or null when it is allowed:
     * with a token, the header must carry it; without one, the caller must be on a loopback address.
     */
    public static String refusal(java.net.InetAddress remote, String authorization, Secret token) {
        if (token != null) {
            String want;
            try {
                want = "Bearer " + token.resolve();
            } catch (IllegalStateException e) {
                return "the admin token cannot be read (" + token.describe() + ")";
            }
            if (authorization == null
                    || !java.security.MessageDigest.isEqual(
                            want.getBytes(StandardCharsets.UTF_8), authorization.getBytes(StandardCharsets.UTF_8))) {
                return "admin actions need the admin token (Authorization: Bearer <admin.token>)";
            }
            return null;
        }
        if (remote != null && remote.isLoopbackAddress()) return null;
        return "admin actions are taken from loopback addresses only; set admin.token to allow them from elsewhere";
    }

    private Map<String, Object> index() {
        Map<String, Object> pages = new LinkedHashMap<>();
        pages.put(
                "/ready",
                "200 once every registry has synced (or passed its syncTimeout), else 503 naming what is pending");
        pages.put("/healthz", "200 while the bridge runs; lists each registry's connection state");
        pages.put("/metrics", "Prometheus metrics");
        for (String a : actions.keySet()) pages.put("POST " + a + "...", "an admin action (loopback or admin.token)");
        for (DebugSource s : debugSources) pages.put("/debug/" + s.name(), s.description());
        return pages;
    }

    private void debug(HttpExchange ex) throws IOException {
        if (!isGet(ex)) return;
        String path = ex.getRequestURI().getPath();
        String name = path.length() <= "/debug/".length()
                ? ""
                : path.substring("/debug/".length()).replaceAll("/+$", "");
        if (name.isEmpty()) {
            sendJson(ex, 200, index());
            return;
        }
        for (DebugSource s : debugSources) {
            if (s.name().equals(name)) {
                if (!debugPermits.tryAcquire()) {
                    ex.getResponseHeaders().set("Retry-After", "1");
                    sendJson(
                            ex,
                            503,
                            Map.of(
                                    "error",
                                    "too many debug pages rendering at once (admin.maxConcurrentDebugRequests="
                                            + maxConcurrentDebug + "); retry"));
                    return;
                }
                try {
                    Object body;
                    try {
                        body = s.debug(query(ex.getRequestURI().getRawQuery()));
                    } catch (IllegalArgumentException e) {
                        sendJson(ex, 400, Map.of("error", String.valueOf(e.getMessage())));
                        return;
                    } catch (RuntimeException e) {
                        log.warn("debug page {} failed", name, e);
                        sendJson(ex, 500, Map.of("error", String.valueOf(e)));
                        return;
                    }
                    streamJson(ex, body);
                } finally {
                    debugPermits.release();
                }
                return;
            }
        }
        sendJson(ex, 404, Map.of("error", "no debug page '" + name + "'", "pages", index().keySet()));
    }

    private void health(HttpExchange ex, Health h) throws IOException {
        if (!isGet(ex)) return;
        sendJson(ex, h.ok() ? 200 : 503, h.body());
    }

    private boolean isGet(HttpExchange ex) throws IOException {
        if (ex.getRequestMethod().equals("GET") || ex.getRequestMethod().equals("HEAD")) return true;
        send(ex, 405, "text/plain", "only GET\n".getBytes(StandardCharsets.UTF_8));
        return false;
    }

    private void sendJson(HttpExchange ex, int status, Object body) throws IOException {
        byte[] bytes;
        try {
            bytes = json.writeValueAsBytes(body);
        } catch (IOException e) {
            log.warn("cannot render {} as JSON", ex.getRequestURI(), e);
            status = 500;
            bytes = ("{\"error\":\"cannot render: " + e.getMessage().replace('"', '\'') + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
        }
        send(ex, status, "application/json", bytes);
    }

    /** Writes a page as it renders (chunked): no copy of the whole body is held in memory. */
    private void streamJson(HttpExchange ex, Object body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/json");
        if (ex.getRequestMethod().equals("HEAD")) {
            ex.sendResponseHeaders(200, -1);
            ex.close();
            return;
        }
        ex.sendResponseHeaders(200, 0);
        try (OutputStream out = new java.io.BufferedOutputStream(ex.getResponseBody(), 64 * 1024)) {
            json.writeValue(out, body);
        } catch (IOException e) {
            log.debug(
                    "debug page {} not sent whole: {}",
                    dev.meshbridge.core.util.LogText.safe(ex.getRequestURI().getPath()),
                    e.toString());
        } finally {
            ex.close();
        }
    }

    /** An {@link java.util.Optional} as its value, or null. */
    private static final class OptionalSerializer
            extends com.fasterxml.jackson.databind.ser.std.StdSerializer<java.util.Optional<?>> {
        @SuppressWarnings({"unchecked", "rawtypes"})
        OptionalSerializer() {
            super((Class) java.util.Optional.class);
        }

        @Override
        public void serialize(
                java.util.Optional<?> value,
                com.fasterxml.jackson.core.JsonGenerator gen,
                com.fasterxml.jackson.databind.SerializerProvider provider)
                throws IOException {
            if (value.isPresent()) provider.defaultSerializeValue(value.get(), gen);
            else gen.writeNull();
        }
    }

    private static void send(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", contentType);
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
        ex.close();
    }

    static Map<String, String> query(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) return out;
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(k, v);
        }
        return out;
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
