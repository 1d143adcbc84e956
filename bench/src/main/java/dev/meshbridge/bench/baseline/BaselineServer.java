package dev.meshbridge.bench.baseline;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.core.aggregate.SnapshotListener;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.xds.EnvoyTranslator;
import dev.meshbridge.xds.ServiceResources;
import dev.meshbridge.xds.XdsResource;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.controlplane.server.V3DiscoveryServer;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The baseline: the same catalog served the way most java-control-plane users serve it. On every catalog change a
 * whole new {@link Snapshot} (every cluster, load assignment, listener and route) is set into a {@link SimpleCache}
 * behind java-control-plane's {@link V3DiscoveryServer} (ADS, SotW and Delta), with one version string for the
 * snapshot.
 *
 * <p>To make the comparison about the serving strategy, the translation is the bridge's own {@link EnvoyTranslator},
 * and only services whose version changed are translated again (each service's messages are kept, as the cache holds
 * them anyway); what differs is
 * that every change builds and sets a whole snapshot. Snapshots are built on one producer thread, always from the
 * latest catalog: changes that arrive while one is being built are folded into the next.
 */
public final class BaselineServer implements SnapshotListener, AutoCloseable {

    /** One service's resources as java-control-plane messages. */
    private record Messages(
            String version,
            List<Cluster> clusters,
            List<ClusterLoadAssignment> endpoints,
            List<Listener> listeners,
            List<RouteConfiguration> routes) {}

    private final EnvoyTranslator translator;
    private final SimpleCache<String> cache = new SimpleCache<>(node -> "all");
    private final Server server;
    private final Thread producer;
    private final AtomicReference<MeshSnapshot> latest = new AtomicReference<>();
    private final AtomicLong served = new AtomicLong(-1);
    private volatile boolean closed;

    // producer thread only
    private final Map<String, Messages> byHost = new HashMap<>();

    public BaselineServer(EnvoyTranslator translator) throws IOException {
        this.translator = translator;
        V3DiscoveryServer discovery = new V3DiscoveryServer(cache);
        this.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(discovery.getAggregatedDiscoveryServiceImpl())
                .maxInboundMessageSize(64 * 1024 * 1024)
                .build()
                .start();
        this.producer = new Thread(this::produce, "bench-baseline-producer");
        this.producer.setDaemon(true);
        this.producer.start();
    }

    public int port() {
        return server.getPort();
    }

    /** The sequence of the last catalog snapshot set into the cache; -1 before the first. */
    public long servedSequence() {
        return served.get();
    }

    @Override
    public void onSnapshot(MeshSnapshot snapshot) {
        latest.set(snapshot);
        LockSupport.unpark(producer);
    }

    private void produce() {
        long version = 0;
        while (!closed) {
            MeshSnapshot next = latest.getAndSet(null);
            if (next == null) {
                LockSupport.park(this);
                continue;
            }
            update(next);
            List<Cluster> clusters = new ArrayList<>();
            List<ClusterLoadAssignment> endpoints = new ArrayList<>();
            List<Listener> listeners = new ArrayList<>();
            List<RouteConfiguration> routes = new ArrayList<>();
            for (Messages m : byHost.values()) {
                clusters.addAll(m.clusters());
                endpoints.addAll(m.endpoints());
                listeners.addAll(m.listeners());
                routes.addAll(m.routes());
            }
            cache.setSnapshot(
                    "all", Snapshot.create(clusters, endpoints, listeners, routes, List.of(), "v" + (++version)));
            served.set(next.sequence());
        }
    }

    /** Translates the services whose version changed since the messages held (the same work the bridge does). */
    private void update(MeshSnapshot next) {
        Set<String> gone = new HashSet<>(byHost.keySet());
        for (MeshService s : next.services().values()) {
            gone.remove(s.host());
            Messages held = byHost.get(s.host());
            if (held != null && held.version().equals(s.version())) continue;
            byHost.put(s.host(), messages(s.version(), translator.translate(s)));
        }
        for (String host : gone) byHost.remove(host);
    }

    private static Messages messages(String version, ServiceResources r) {
        List<Cluster> clusters = new ArrayList<>();
        List<ClusterLoadAssignment> endpoints = new ArrayList<>();
        List<Listener> listeners = new ArrayList<>();
        List<RouteConfiguration> routes = new ArrayList<>();
        try {
            for (XdsResource x : r.resources()) {
                switch (x.type()) {
                    case CLUSTER -> clusters.add(Cluster.parseFrom(x.any().getValue()));
                    case ENDPOINT ->
                        endpoints.add(ClusterLoadAssignment.parseFrom(x.any().getValue()));
                    case LISTENER -> listeners.add(Listener.parseFrom(x.any().getValue()));
                    case ROUTE ->
                        routes.add(RouteConfiguration.parseFrom(x.any().getValue()));
                }
            }
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("the bridge's translation does not parse", e);
        }
        return new Messages(version, clusters, endpoints, listeners, routes);
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(producer);
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
            producer.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
