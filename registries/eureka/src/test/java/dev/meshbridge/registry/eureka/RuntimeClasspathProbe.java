package dev.meshbridge.registry.eureka;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs in a JVM of its own on the module's runtime class path only (see {@link RuntimeClasspathTest}): watches the
 * Eureka server at {@code args[0]} and prints one line per service update until one has {@code args[1]} endpoints.
 */
public final class RuntimeClasspathProbe {

    private RuntimeClasspathProbe() {}

    public static void main(String[] args) throws InterruptedException {
        String url = args[0];
        int wanted = Integer.parseInt(args[1]);
        BlockingQueue<RegistryEvent> events = new LinkedBlockingQueue<>();
        RegistryConfig config = RegistryConfig.of(
                "eureka",
                "probe",
                List.of(url),
                EurekaOptions.builder().fetchInterval(Duration.ofMillis(100)).build());
        RegistryStatus status = new RegistryStatus("probe", "eureka");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (EurekaWatcher watcher = new EurekaWatcher(new WatcherContext(config, events::add, status))) {
            watcher.start();
            while (System.nanoTime() < deadline) {
                RegistryEvent e = events.poll(100, TimeUnit.MILLISECONDS);
                if (!(e instanceof ServiceUpsert u)) continue;
                StringBuilder line = new StringBuilder("host=").append(u.host());
                for (Endpoint endpoint : u.endpoints()) {
                    line.append(' ')
                            .append(endpoint.address())
                            .append(endpoint.ports())
                            .append('/')
                            .append(endpoint.health())
                            .append('/')
                            .append(endpoint.locality());
                }
                System.out.println(line);
                if (u.endpoints().size() >= wanted) {
                    System.out.println("stats " + watcher.stats());
                    return;
                }
            }
        }
        System.out.println("TIMEOUT last error: " + status.lastError());
        System.exit(2);
    }
}
