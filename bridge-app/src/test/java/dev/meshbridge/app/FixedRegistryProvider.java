package dev.meshbridge.app;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A registry type {@code fixed} for the app's tests: it serves the services named in its {@code services} option, each
 * with one endpoint at {@code ip}, and counts how often watchers start and stop, so reconciliation can be observed.
 */
public final class FixedRegistryProvider implements RegistryWatcherProvider {

    static final AtomicInteger STARTS = new AtomicInteger();
    static final AtomicInteger STOPS = new AtomicInteger();

    /** Options of the fixed type. */
    record Options(List<String> services, String ip, boolean sync) {}

    @Override
    public String type() {
        return "fixed";
    }

    @Override
    public int defaultPort() {
        return 1;
    }

    @Override
    public Object parseOptions(ConfigNode entry) {
        return new Options(entry.strings("services"), entry.string("ip", "10.0.0.1"), entry.bool("sync", true));
    }

    @Override
    public RegistryWatcher create(RegistryConfig config, WatcherContext context) {
        Options o = config.options(Options.class);
        return new RegistryWatcher() {
            @Override
            public void start() {
                STARTS.incrementAndGet();
                context.status().connected();
                Set<ServiceKey> keys = new HashSet<>();
                for (String s : o.services()) {
                    ServiceKey key = ServiceKey.of("fixed", config.name(), s);
                    keys.add(key);
                    context.events()
                            .accept(new ServiceUpsert(
                                    key,
                                    s + ".fixed",
                                    List.of(new ServicePort("http", 80, Protocol.HTTP)),
                                    List.of(Endpoint.builder(o.ip())
                                            .port("http", 8080)
                                            .build())));
                }
                if (!o.sync()) return;
                context.events().accept(new RegistrySynced(config.name(), keys));
                context.status().synced();
            }

            @Override
            public void close() {
                STOPS.incrementAndGet();
            }
        };
    }
}
