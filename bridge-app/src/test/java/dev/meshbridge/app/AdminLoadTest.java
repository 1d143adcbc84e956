package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin server under load on a large catalog, in a JVM with a 256 MiB heap (the {@code small-heap} surefire
 * execution): concurrent {@code /debug/catalog} requests never take the bridge down.
 */
@Tag("smallheap")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdminLoadTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    private final HttpClient http = HttpClient.newHttpClient();
    private Bridge bridge;

    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        if (bridge != null) bridge.close();
    }

    @Test
    void twentyConcurrentCatalogRequests_onFiftyThousandEndpoints_theBridgeStaysUp() throws Exception {
        StringBuilder services = new StringBuilder();
        for (int i = 0; i < 500; i++)
            services.append(i == 0 ? "" : ", ").append("svc").append(i);
        Path file = dir.resolve("bridge.yaml");
        Files.writeString(file, """
                admin: {port: 0}
                xds: {port: 0, bindAddress: 127.0.0.1}
                mcp: {port: 0, bindAddress: 127.0.0.1}
                reload: {enabled: false}
                registries:
                  - type: fixed
                    name: big
                    addresses: [x]
                    endpoints: 100
                    services: [%s]
                """.formatted(services));
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> bridge.aggregator().current().endpointCount() == 50_000);
        System.gc();
        long before = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();

        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        AtomicInteger bytes = new AtomicInteger();
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < 20; c++) {
                done.add(clients.submit(() -> {
                    for (int round = 0; round < 3; round++) {
                        // the largest page a client may ask for, read slowly as a browser on a bad link would
                        HttpResponse<InputStream> r = http.send(
                                request("/debug/catalog?limit=100000&endpoints=100000"),
                                HttpResponse.BodyHandlers.ofInputStream());
                        statuses.computeIfAbsent(r.statusCode(), k -> new AtomicInteger())
                                .incrementAndGet();
                        try (InputStream in = r.body()) {
                            bytes.addAndGet((int) in.transferTo(java.io.OutputStream.nullOutputStream()));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) f.get(90, TimeUnit.SECONDS);
        }
        System.out.printf(
                "admin: 60 catalog requests, statuses %s, %d bytes; heap before %d MB%n",
                statuses, bytes.get(), before >> 20);

        assertThat(statuses.keySet()).as("every answer is a page or a 'retry'").isSubsetOf(200, 503);
        assertThat(statuses.get(200)).as("some pages were served").isNotNull();
        HttpResponse<String> page = http.send(request("/debug/catalog"), HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body())
                .contains("\"matched\" : 500")
                .contains("\"shown\" : 100")
                .contains("\"nextOffset\" : 100")
                .contains("\"endpointCount\" : 100");
        assertThat(http.send(request("/ready"), HttpResponse.BodyHandlers.ofString())
                        .statusCode())
                .isEqualTo(200);
        assertThat(bridge.aggregator().current().endpointCount()).isEqualTo(50_000);
    }

    private HttpRequest request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort() + path))
                .build();
    }
}
