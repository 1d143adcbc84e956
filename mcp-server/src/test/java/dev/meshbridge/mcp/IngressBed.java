package dev.meshbridge.mcp;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.ingress.IngressController;
import dev.meshbridge.ingress.IngressOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the Ingress tests run against: a real aggregator holding registry services, the real ingress module reading
 * Ingress YAML from a directory (as a docker-compose or bare-metal user writes it) and handing its route table to the
 * aggregator, the MCP server subscribed to the aggregator, and istiod-like clients.
 */
final class IngressBed implements AutoCloseable {

    /** The creation time every resource gets (the server's clock is fixed), so golden files are stable. */
    static final Instant CREATED = Instant.parse("2024-05-01T10:00:00Z");

    final TestCatalog catalog = new TestCatalog();
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final McpServer server;
    private final Path dir;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private IngressController ingress;

    /**
     * @param dir the Ingress directory; null for a bed whose routes the test sets on the aggregator itself
     */
    IngressBed(Path dir, McpOptions options) throws IOException {
        this.dir = dir;
        this.server = new McpServer(
                // pacing is not what these tests look at: every change goes out at once
                options.toBuilder()
                        .bindAddress("127.0.0.1")
                        .port(0)
                        .minPushInterval(java.time.Duration.ZERO)
                        .build(),
                meters,
                Clock.fixed(CREATED, ZoneOffset.UTC));
        closeables.add(server);
        server.start();
        catalog.aggregator().subscribe(server).join();
    }

    IngressBed(Path dir) throws IOException {
        this(dir, McpOptions.defaults());
    }

    /** Registers services as a registry watcher would. */
    IngressBed register(ServiceUpsert... upserts) {
        for (ServiceUpsert u : upserts) catalog.aggregator().accept(u);
        return this;
    }

    /** Starts the ingress module on the directory and lets the MCP server answer. */
    IngressBed start() {
        if (dir != null) {
            IngressOptions options = ingressOptions("""
                    ingress:
                      syncTimeout: 5s
                      directory:
                        path: %s
                        reloadInterval: 100ms
                    """.formatted(dir));
            ingress = new IngressController(options, null, meters, Map.of(), registries -> {}, () -> true);
            ingress.routes().addListener(catalog.aggregator()::setRoutes);
            closeables.add(ingress);
            ingress.start();
        }
        catalog.aggregator().flushNow().thenRun(server::markCatalogReady).join();
        return this;
    }

    /** Writes a file into the Ingress directory in one step, as a ConfigMap update or {@code mv} does. */
    void write(String file, String yaml) {
        try {
            Path tmp = dir.resolve("." + file + ".tmp");
            Files.writeString(tmp, yaml);
            Files.move(tmp, dir.resolve(file), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void delete(String file) throws IOException {
        Files.delete(dir.resolve(file));
    }

    /** Copies a YAML file of {@code src/test/resources/ingress} into the directory. */
    void copy(String resource) {
        write(resource, yaml(resource));
    }

    static String yaml(String resource) {
        try (InputStream in = IngressBed.class.getResourceAsStream("/ingress/" + resource)) {
            if (in == null) throw new IllegalArgumentException("no test resource ingress/" + resource);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True once the MCP server has applied the route table the ingress module published last. */
    boolean routesApplied() {
        if (ingress == null || !ingress.routes().synced()) return false;
        return debug(Map.of()).routesVersion().equals(ingress.routes().current().version());
    }

    IstiodMcpClient istiod(List<String> types) {
        IstiodMcpClient client = new IstiodMcpClient(server.port(), types);
        closeables.add(client);
        return client.start();
    }

    McpServer.DebugView debug(Map<String, String> query) {
        return (McpServer.DebugView) server.debugSource().debug(query);
    }

    /** Responses the server has sent for a kind, as its {@code meshbridge.mcp.pushes} counter says. */
    double pushes(McpKind kind) {
        return meters.find("meshbridge.mcp.pushes").tag("type", kind.kind()).counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count)
                .sum();
    }

    static IngressOptions ingressOptions(String yaml) {
        try {
            ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
            IngressOptions options = IngressOptions.parse(root.section("ingress"));
            root.finish();
            return options;
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable c : closeables.reversed()) c.close();
        catalog.close();
    }
}
