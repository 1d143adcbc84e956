package dev.meshbridge.xds;

import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.ServiceUpsert;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bridge's Ingress path, wired as {@code Bridge} wires it: the real directory source reads Ingress YAML files
 * into route tables, a real aggregator merges them into its snapshots with the registry services, and a real xDS
 * server serves them on 127.0.0.1.
 */
final class IngressBed implements AutoCloseable {

    final XdsTestBed xds;
    final IngressController controller;
    private final Path dir;

    IngressBed(Path dir) {
        this(dir, XdsOptions.loopbackEphemeral());
    }

    /** The role of the nodes these tests name {@code envoy-*}: gateways, which get the Ingress listeners. */
    static final NodeRoles GATEWAYS = new NodeRoles("envoy-.*", "");

    IngressBed(Path dir, XdsOptions options) {
        this(dir, options, GATEWAYS);
    }

    IngressBed(Path dir, XdsOptions options, NodeRoles roles) {
        this.dir = dir;
        this.xds = new XdsTestBed(options.withNodeRoles(roles));
        this.controller = new IngressController(
                ingressOptions(dir), null, new SimpleMeterRegistry(), Map.of(), registries -> {}, () -> true);
        controller.routes().addListener(xds.catalog.aggregator()::setRoutes);
        controller.start();
    }

    static IngressOptions ingressOptions(Path dir) {
        try {
            ConfigNode root = ConfigNode.parse("bridge.yaml", """
                    ingress:
                      syncTimeout: 5s
                      directory:
                        path: %s
                        reloadInterval: 100ms
                    """.formatted(dir));
            IngressOptions options = IngressOptions.parse(root.section("ingress"));
            root.finish();
            return options;
        } catch (ConfigException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes a file of the directory in one step, as a mounted ConfigMap changes. */
    void write(String file, String yaml) {
        try {
            Path tmp = dir.resolve("." + file + ".tmp");
            Files.writeString(tmp, yaml);
            Files.move(tmp, dir.resolve(file), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void delete(String file) {
        try {
            Files.delete(dir.resolve(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A test resource's text. */
    static String resource(String name) {
        try (InputStream in = IngressBed.class.getResourceAsStream("/" + name)) {
            if (in == null) throw new IllegalArgumentException("no test resource " + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Waits until the route table is synced and holds this many routes (default backend included), and the xDS server
     * serves it: the table reaches the server through the aggregator's next snapshot and the serving thread, after the
     * controller has it, so a client that connects as soon as the controller has it may be answered without it.
     */
    void awaitRoutes(int routes) {
        await().atMost(Duration.ofSeconds(60))
                .until(() -> controller.routes().synced()
                        && controller.routes().current().servedRoutes().size() == routes);
        String version = controller.routes().current().version();
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            var snapshot = xds.catalog.snapshot();
            return snapshot.routes().version().equals(version) && xds.server.servedSequence() >= snapshot.sequence();
        });
    }

    void send(ServiceUpsert... upserts) {
        xds.send(upserts);
    }

    /** A Dubbo application serving Triple, one instance per address, labelled {@code version=<version>}. */
    static ServiceUpsert dubboApp(String app, String version, String... ips) {
        List<Endpoint> eps = new ArrayList<>();
        for (String ip : ips)
            eps.add(Upserts.dubboAppInstance(ip, 50051)
                    .label("version", version)
                    .build());
        return Upserts.dubboApplication(app, eps);
    }

    /** The shop's catalog: orders (two versions), greeter and greeter-next. */
    static ServiceUpsert[] shopCatalog() {
        List<Endpoint> orders = new ArrayList<>();
        orders.add(Upserts.dubboAppInstance("10.1.0.1", 50051)
                .label("version", "v1")
                .build());
        orders.add(Upserts.dubboAppInstance("10.1.0.2", 50051)
                .label("version", "v1")
                .build());
        orders.add(Upserts.dubboAppInstance("10.1.0.3", 50051)
                .label("version", "v2")
                .build());
        return new ServiceUpsert[] {
            Upserts.dubboApplication("orders", orders),
            dubboApp("greeter", "v1", "10.2.0.1"),
            dubboApp("greeter-next", "v1", "10.3.0.1")
        };
    }

    @Override
    public void close() {
        controller.close();
        xds.close();
    }
}
