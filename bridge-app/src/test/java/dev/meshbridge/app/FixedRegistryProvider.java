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
    record Options(List<String> services, String ip, boolean sync, int endpoints) {}

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
        return new Options(
                entry.strings("services"),
                entry.string("ip", "10.0.0.1"),
                entry.bool("sync", true),
                entry.integer("endpoints", 1, 1, 65_536));
    }

    /** One endpoint at {@code ip}, or {@code endpoints} of them at 10.(i/65536).(i/256%256).(i%256). */
    private static List<Endpoint> endpoints(Options o) {
        if (o.endpoints() == 1)
            return List.of(Endpoint.builder(o.ip()).port("http", 8080).build());
        List<Endpoint> out = new java.util.ArrayList<>();
        for (int i = 1; i <= o.endpoints(); i++) {
            out.add(Endpoint.builder("10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255))
                    .port("http", 8080)
                    .label("version", "v" + (i % 3))
                    .label("zone", "zone-" + (i % 5))
                    .build());
        }
        return out;
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
                                    endpoints(o)));
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
