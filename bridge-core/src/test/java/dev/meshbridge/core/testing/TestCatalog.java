package dev.meshbridge.core.testing;

import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * A real {@link ServiceAggregator} that publishes after every event, with waiting helpers: registry tests run their
 * watcher against it and assert the catalog a user would see.
 */
public final class TestCatalog implements AutoCloseable {

    public static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final ServiceAggregator aggregator =
            new ServiceAggregator(new ServiceAggregator.Options(Duration.ZERO, Duration.ZERO));

    public ServiceAggregator aggregator() {
        return aggregator;
    }

    /** A watcher context for {@code config} whose events go to this catalog. */
    public WatcherContext context(RegistryConfig config) {
        aggregator.configureRegistry(config.name(), config.emptyService());
        return new WatcherContext(config, aggregator, new RegistryStatus(config.name(), config.type()));
    }

    public void configure(String registry, EmptyServicePolicy policy) {
        aggregator.configureRegistry(registry, policy);
    }

    /** The catalog after every event sent so far has been applied. */
    public MeshSnapshot snapshot() {
        return aggregator.flushNow().join();
    }

    public MeshService service(String host) {
        return snapshot().service(host);
    }

    /** Waits until the service exists and matches; returns it. */
    public MeshService awaitService(String host, Predicate<MeshService> condition) {
        MeshService[] found = new MeshService[1];
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(20)).until(() -> {
            MeshService s = snapshot().service(host);
            found[0] = s;
            return s != null && condition.test(s);
        });
        return found[0];
    }

    public MeshService awaitService(String host) {
        return awaitService(host, s -> true);
    }

    /** Waits until the host is not in the catalog. */
    public void awaitAbsent(String host) {
        await().atMost(TIMEOUT)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> snapshot().service(host) == null);
    }

    /** Waits until the whole catalog matches. */
    public MeshSnapshot awaitSnapshot(Predicate<MeshSnapshot> condition) {
        MeshSnapshot[] found = new MeshSnapshot[1];
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(20)).until(() -> {
            found[0] = snapshot();
            return condition.test(found[0]);
        });
        return found[0];
    }

    @Override
    public void close() {
        aggregator.close();
    }
}
