package dev.meshbridge.registry.consul;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;

/**
 * Stands in for the Spring Boot applications Consul checks: {@code GET /actuator/health/<instance>} answers with the
 * status the test sets (200 by default, 503 for down, 429 for Consul's warning).
 */
final class HealthEndpoints implements AutoCloseable {

    private final HttpServer server;
    private final Map<String, Integer> status = new ConcurrentHashMap<>();
    private final String hostSeenByConsul;

    HealthEndpoints(String hostSeenByConsul) throws IOException {
        this.hostSeenByConsul = hostSeenByConsul;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/actuator/health/", ex -> {
            try (ex) {
                String instance = ex.getRequestURI().getPath().substring("/actuator/health/".length());
                int code = status.getOrDefault(instance, 200);
                byte[] body =
                        ("{\"status\":\"" + (code == 200 ? "UP" : "DOWN") + "\"}").getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(code, body.length);
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(body);
                }
            }
        });
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** The check URL Consul calls for one instance. */
    String url(String instance) {
        return "http://" + hostSeenByConsul + ":" + port() + "/actuator/health/" + instance;
    }

    void status(String instance, int code) {
        status.put(instance, code);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
