package dev.meshbridge.xds;

import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.testing.TestCatalog;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real aggregator feeding a real {@link XdsServer} on 127.0.0.1 and a free port, as the bridge wires them; tests
 * send registry events and watch what clients receive.
 */
final class XdsTestBed implements AutoCloseable {

    final TestCatalog catalog = new TestCatalog();
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final XdsServer server;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    XdsTestBed() {
        this(XdsOptions.loopbackEphemeral());
    }

    XdsTestBed(XdsOptions options) {
        this(options, true);
    }

    /** @param ready false to hold first answers until {@code server.markCatalogReady()} */
    XdsTestBed(XdsOptions options, boolean ready) {
        server = new XdsServer(options, meters);
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        catalog.aggregator().subscribe(server).join();
        // the test catalog has no registry to wait for: answer at once, as the bridge does once its registries synced
        if (ready) server.markCatalogReady();
    }

    /** Sends events to the catalog and waits until the server has applied the resulting snapshot. */
    void send(RegistryEvent... events) {
        send(Duration.ofSeconds(30), events);
    }

    /** {@link #send(RegistryEvent...)} for a large change, waiting up to {@code atMost}. */
    void send(Duration atMost, RegistryEvent... events) {
        for (RegistryEvent e : events) catalog.aggregator().accept(e);
        long sequence = catalog.snapshot().sequence();
        await().atMost(atMost)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> server.servedSequence() >= sequence);
    }

    AdsClient client(String nodeId) {
        AdsClient c = new AdsClient(server.port(), nodeId);
        closeables.add(c);
        return c;
    }

    /** A counter once the serving thread is idle: a push is counted after it is written, so a client reads it first. */
    double counter(String name, String... tags) {
        server.idle().join();
        var c = meters.find(name).tags(tags).counter();
        return c == null ? 0 : c.count();
    }

    double gauge(String name, String... tags) {
        var g = meters.find(name).tags(tags).gauge();
        return g == null ? 0 : g.value();
    }

    @Override
    public void close() {
        for (AutoCloseable c : closeables) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        server.close();
        catalog.close();
    }
}
