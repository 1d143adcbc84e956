package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusRuntimeException;
import io.grpc.internal.GrpcUtil;
import io.grpc.xds.XdsNameResolverProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * grpc-java's own xDS client ({@code io.grpc:grpc-xds}, SotW over ADS) as a {@link ProxylessClient}: a channel per
 * host, resolved by an xDS name resolver with a bootstrap of its own under a scheme of its own (grpc-xds reads the
 * global bootstrap once per JVM), so each test talks to its own bridge.
 */
final class GrpcJavaClient implements ProxylessClient {

    private static final AtomicInteger SCHEMES = new AtomicInteger();

    private final String scheme = "meshbridge-grpc-java-" + SCHEMES.incrementAndGet();
    private final XdsNameResolverProvider resolver;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private Traffic traffic;

    GrpcJavaClient(int xdsPort) {
        Map<String, ?> xdsServer = Map.of(
                "server_uri", "127.0.0.1:" + xdsPort,
                "channel_creds", List.of(Map.of("type", "insecure")),
                "server_features", List.of("xds_v3"));
        Map<String, ?> bootstrap =
                Map.of("xds_servers", List.of(xdsServer), "node", Map.of("id", scheme, "cluster", "zk-e2e"));
        resolver = XdsNameResolverProvider.createForTest(scheme, bootstrap);
        NameResolverRegistry.getDefaultRegistry().register(resolver);
    }

    /** The node id this client's xDS client sends (as the bridges' debug pages show it). */
    String nodeId() {
        return scheme;
    }

    @Override
    public String implementation() {
        return "grpc-java " + GrpcUtil.IMPLEMENTATION_VERSION;
    }

    /** The channel to {@code xds:///<host>}. */
    ManagedChannel channel(String host) {
        return channels.computeIfAbsent(
                host,
                h -> Grpc.newChannelBuilder(scheme + ":///" + h, InsecureChannelCredentials.create())
                        .build());
    }

    @Override
    public Calls call(String host, int n) {
        Map<String, Long> answered = new HashMap<>();
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            try {
                answered.merge(IdentityBackend.ask(channel(host)), 1L, Long::sum);
            } catch (StatusRuntimeException e) {
                failures.add(host + ": " + e.getStatus());
            }
        }
        return new Calls(answered, failures);
    }

    @Override
    public void startTraffic(List<String> hosts) {
        assertThat(traffic).as("traffic already running").isNull();
        traffic = new Traffic(hosts.stream().map(this::channel).toList(), hosts);
    }

    @Override
    public Calls traffic() {
        return traffic.calls();
    }

    @Override
    public Calls stopTraffic() {
        Calls calls = traffic.stop();
        traffic = null;
        return calls;
    }

    @Override
    public void close() {
        if (traffic != null) stopTraffic();
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
            try {
                c.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        NameResolverRegistry.getDefaultRegistry().deregister(resolver);
    }

    /** Real calls in a loop on a thread of its own, over each channel in turn. */
    private static final class Traffic {

        private final Map<String, LongAdder> byBackend = new ConcurrentHashMap<>();
        private final List<String> failures = new CopyOnWriteArrayList<>();
        private final Thread thread;
        private volatile boolean running = true;

        Traffic(List<ManagedChannel> channels, List<String> hosts) {
            thread = Thread.ofPlatform().name("grpc-java-traffic").daemon().start(() -> {
                while (running) {
                    for (int i = 0; i < channels.size() && running; i++) {
                        try {
                            byBackend
                                    .computeIfAbsent(IdentityBackend.ask(channels.get(i)), k -> new LongAdder())
                                    .increment();
                        } catch (StatusRuntimeException e) {
                            failures.add(hosts.get(i) + ": " + e.getStatus());
                        }
                    }
                }
            });
        }

        Calls calls() {
            Map<String, Long> answered = new HashMap<>();
            byBackend.forEach((k, v) -> answered.put(k, v.sum()));
            return new Calls(answered, failures);
        }

        Calls stop() {
            running = false;
            try {
                assertThat(thread.join(Duration.ofSeconds(30)))
                        .as("traffic stopped")
                        .isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            return calls();
        }
    }
}
