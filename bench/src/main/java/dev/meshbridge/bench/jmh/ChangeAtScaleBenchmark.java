package dev.meshbridge.bench.jmh;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.mcp.McpOptions;
import dev.meshbridge.mcp.ServiceEntryTranslator;
import dev.meshbridge.xds.EnvoyTranslator;
import dev.meshbridge.xds.ServiceResources;
import dev.meshbridge.xds.XdsResource;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One single-instance change with the whole catalog loaded ({@code services x instances}, the reference load by
 * default): the aggregator merging it and publishing a snapshot; that plus the translation of the changed service
 * into Envoy resources and a ServiceEntry (the pure part of what the bridge's servers do per change); and the
 * baseline's work for the same change: the translation plus a whole java-control-plane {@link Snapshot} set into a
 * {@link SimpleCache} (every resource of the catalog, one replaced).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ChangeAtScaleBenchmark {

    private static final int ROTATION = 512;

    @Param("10000")
    public int services;

    @Param("10")
    public int instances;

    private ServiceAggregator aggregator;
    private final List<ServiceUpsert[]> changes = new ArrayList<>();
    private final List<String> hosts = new ArrayList<>();
    private int next;
    private final EnvoyTranslator envoy = new EnvoyTranslator();
    private final ServiceEntryTranslator serviceEntries = new ServiceEntryTranslator(McpOptions.defaults());
    private final Map<String, ServiceResources> translated = new HashMap<>();

    // the baseline's messages: every resource of the catalog, by host
    private final Map<String, List<Cluster>> clusters = new HashMap<>();
    private final Map<String, List<ClusterLoadAssignment>> endpoints = new HashMap<>();
    private final Map<String, List<Listener>> listeners = new HashMap<>();
    private final Map<String, List<RouteConfiguration>> routes = new HashMap<>();
    private final SimpleCache<String> cache = new SimpleCache<>(node -> "all");
    private long version;

    @Setup(Level.Trial)
    public void load() throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(services, instances);
        aggregator =
                new ServiceAggregator(new ServiceAggregator.Options(Duration.ofSeconds(10), Duration.ofSeconds(10)));
        for (int i = 0; i < services; i++) aggregator.accept(catalog.upsert(i));
        MeshSnapshot all = aggregator.flushNow().get();
        for (MeshService s : all.services().values()) {
            ServiceResources r = envoy.translate(s);
            translated.put(s.host(), r);
            keep(s.host(), r);
        }
        Random random = new Random(5);
        for (int k = 0; k < ROTATION; k++) {
            int service = random.nextInt(services);
            int[] a = new int[instances];
            int[] b = new int[instances];
            a[k % instances] = 1 + k;
            b[k % instances] = 1 + ROTATION + k;
            changes.add(new ServiceUpsert[] {catalog.upsert(service, a), catalog.upsert(service, b)});
            hosts.add(catalog.host(service));
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        aggregator.close();
    }

    private void keep(String host, ServiceResources r) throws InvalidProtocolBufferException {
        List<Cluster> c = new ArrayList<>();
        List<ClusterLoadAssignment> e = new ArrayList<>();
        List<Listener> l = new ArrayList<>();
        List<RouteConfiguration> rt = new ArrayList<>();
        for (XdsResource x : r.resources()) {
            switch (x.type()) {
                case CLUSTER -> c.add(Cluster.parseFrom(x.any().getValue()));
                case ENDPOINT -> e.add(ClusterLoadAssignment.parseFrom(x.any().getValue()));
                case LISTENER -> l.add(Listener.parseFrom(x.any().getValue()));
                case ROUTE -> rt.add(RouteConfiguration.parseFrom(x.any().getValue()));
            }
        }
        clusters.put(host, c);
        endpoints.put(host, e);
        listeners.put(host, l);
        routes.put(host, rt);
    }

    /** The next change: a service at random, flipping between two states so that every call changes something. */
    private int advance() {
        return next++;
    }

    private MeshService applyOne() throws Exception {
        int k = advance();
        ServiceUpsert u = changes.get(k % ROTATION)[(k / ROTATION) % 2];
        aggregator.accept(u);
        MeshSnapshot s = aggregator.flushNow().get();
        return s.service(u.host());
    }

    /** The aggregator: merge one service's full endpoint list, publish the next snapshot. */
    @Benchmark
    public MeshService aggregatorChange() throws Exception {
        return applyOne();
    }

    /** The bridge's pure work for one change: aggregate, translate the changed service for xDS and for istiod. */
    @Benchmark
    public Object bridgeChange() throws Exception {
        MeshService s = applyOne();
        ServiceResources r = envoy.translate(s, translated.get(s.host()));
        translated.put(s.host(), r);
        return serviceEntries.translate(s);
    }

    /** The baseline's work for one change: aggregate, translate the changed service, a whole new snapshot set. */
    @Benchmark
    public Snapshot baselineChange() throws Exception {
        MeshService s = applyOne();
        keep(s.host(), envoy.translate(s));
        List<Cluster> c = new ArrayList<>();
        List<ClusterLoadAssignment> e = new ArrayList<>();
        List<Listener> l = new ArrayList<>();
        List<RouteConfiguration> r = new ArrayList<>();
        for (String host : clusters.keySet()) {
            c.addAll(clusters.get(host));
            e.addAll(endpoints.get(host));
            l.addAll(listeners.get(host));
            r.addAll(routes.get(host));
        }
        Snapshot snapshot = Snapshot.create(c, e, l, r, List.of(), "v" + (++version));
        cache.setSnapshot("all", snapshot);
        return snapshot;
    }
}
