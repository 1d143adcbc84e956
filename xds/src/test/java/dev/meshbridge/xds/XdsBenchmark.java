package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import dev.meshbridge.ads.AdsEngine;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The figures of issue 3, printed (never asserted as timings). Run with {@code ./mvnw -q -pl xds -am verify
 * -Dgroups=benchmark -DexcludedGroups=none -Dsurefire.failIfNoSpecifiedTests=false}; the figures land in {@code
 * xds/target/surefire-reports/dev.meshbridge.xds.XdsBenchmark-output.txt}.
 *
 * <p>Load: 10,000 Dubbo application services of 10 endpoints each (100,000 endpoints), each endpoint with two labels;
 * a change moves one instance of one service to another address.
 */
@Tag("benchmark")
class XdsBenchmark {

    static final int SERVICES = 10_000;
    static final int ENDPOINTS = 10;
    static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** Service {@code i}; its last instance's address depends on {@code variant}, so flipping it is one change. */
    static ServiceUpsert service(int i, int variant) {
        List<Endpoint> eps = new ArrayList<>(ENDPOINTS);
        String prefix = "10." + (i / 250) + "." + (i % 250) + ".";
        for (int j = 0; j < ENDPOINTS; j++) {
            int last = j == ENDPOINTS - 1 ? j + 1 + 100 * variant : j + 1;
            eps.add(Upserts.dubboAppInstance(prefix + last, 50051)
                    .label("version", "v" + (j % 3))
                    .build());
        }
        return Upserts.dubboApplication(name(i), eps);
    }

    static String name(int i) {
        return "svc-" + String.format("%05d", i);
    }

    static String cluster(int i) {
        return XdsNames.cluster(name(i) + ".dubbo", 50051);
    }

    static void load(TestCatalog catalog) {
        for (int i = 0; i < SERVICES; i++) catalog.aggregator().accept(service(i, 0));
        catalog.snapshot();
    }

    // ------------------------------------------------------------------ CPU and allocation of one change

    @Test
    void cpuAndAllocation_ofOneInstanceChange_at100kEndpoints_againstSimpleCache() throws Exception {
        int warm = 3000;
        int measured = 2000;
        List<MeshSnapshot> changes = new ArrayList<>();
        MeshSnapshot full;
        long[] aggregatorCost;
        try (TestCatalog catalog = new TestCatalog()) {
            load(catalog);
            LinkedBlockingQueue<MeshSnapshot> published = new LinkedBlockingQueue<>();
            catalog.aggregator().subscribe(published::add).join();
            full = published.take();
            Thread aggregator = thread("meshbridge-aggregator");
            int[] variant = new int[SERVICES];
            Random random = new Random(7);
            long cpu0 = THREADS.getThreadCpuTime(aggregator.threadId());
            long alloc0 = THREADS.getThreadAllocatedBytes(aggregator.threadId());
            for (int k = 0; k < warm + measured; k++) {
                int i = random.nextInt(SERVICES);
                variant[i] ^= 1;
                catalog.aggregator().accept(service(i, variant[i]));
            }
            catalog.snapshot();
            aggregatorCost = new long[] {
                (THREADS.getThreadCpuTime(aggregator.threadId()) - cpu0) / (warm + measured),
                (THREADS.getThreadAllocatedBytes(aggregator.threadId()) - alloc0) / (warm + measured)
            };
            published.drainTo(changes);
        }
        assertThat(changes).hasSize(warm + measured);

        XdsCore core = new XdsCore(
                new EnvoyTranslator(),
                new XdsMetrics(new SimpleMeterRegistry()),
                AdsEngine.detached(XdsType.TYPES, new SimpleMeterRegistry()));
        long t0 = System.nanoTime();
        core.applySnapshot(full);
        long fullBuild = System.nanoTime() - t0;
        long tid = Thread.currentThread().threadId();
        XdsCore again = new XdsCore(
                new EnvoyTranslator(),
                new XdsMetrics(new SimpleMeterRegistry()),
                AdsEngine.detached(XdsType.TYPES, new SimpleMeterRegistry()));
        long c1 = THREADS.getCurrentThreadCpuTime();
        long a1 = THREADS.getThreadAllocatedBytes(tid);
        again.applySnapshot(full);
        long warmBuildCpu = THREADS.getCurrentThreadCpuTime() - c1;
        long warmBuildAlloc = THREADS.getThreadAllocatedBytes(tid) - a1;
        again = null;
        long[] cpu = new long[measured];
        long[] alloc = new long[measured];
        for (int k = 0; k < warm + measured; k++) {
            long c = THREADS.getCurrentThreadCpuTime();
            long a = THREADS.getThreadAllocatedBytes(tid);
            core.applySnapshot(changes.get(k));
            if (k >= warm) {
                cpu[k - warm] = THREADS.getCurrentThreadCpuTime() - c;
                alloc[k - warm] = THREADS.getThreadAllocatedBytes(tid) - a;
            }
        }

        // the java-control-plane way: a whole Snapshot into SimpleCache per change. Every resource is already built
        // (only the changed ClusterLoadAssignment is a new instance), so this is its floor.
        ResourceIndex index = core.index();
        List<Cluster> clusters = messages(index, XdsType.CLUSTER, Cluster::parseFrom);
        List<ClusterLoadAssignment> endpoints = messages(index, XdsType.ENDPOINT, ClusterLoadAssignment::parseFrom);
        List<Listener> listeners = messages(index, XdsType.LISTENER, Listener::parseFrom);
        List<RouteConfiguration> routes = messages(index, XdsType.ROUTE, RouteConfiguration::parseFrom);
        SimpleCache<String> cache = new SimpleCache<>(node -> "all");
        int rounds = 40;
        long[] scCpu = new long[rounds];
        long[] scAlloc = new long[rounds];
        Random random = new Random(11);
        for (int k = 0; k < rounds + 10; k++) {
            int slot = random.nextInt(endpoints.size());
            endpoints.set(slot, endpoints.get(slot).toBuilder().build());
            long c = THREADS.getCurrentThreadCpuTime();
            long a = THREADS.getThreadAllocatedBytes(tid);
            Snapshot s = Snapshot.create(clusters, endpoints, listeners, routes, List.of(), "v" + k);
            cache.setSnapshot("all", s);
            if (k >= 10) {
                scCpu[k - 10] = THREADS.getCurrentThreadCpuTime() - c;
                scAlloc[k - 10] = THREADS.getThreadAllocatedBytes(tid) - a;
            }
        }

        // and the naive way: translate the whole catalog again, then a Snapshot
        EnvoyTranslator translator = new EnvoyTranslator();
        MeshSnapshot last = changes.get(changes.size() - 1);
        int naiveRounds = 3;
        long[] naiveCpu = new long[naiveRounds];
        long[] naiveAlloc = new long[naiveRounds];
        for (int k = 0; k < naiveRounds; k++) {
            long c = THREADS.getCurrentThreadCpuTime();
            long a = THREADS.getThreadAllocatedBytes(tid);
            List<Cluster> cs = new ArrayList<>();
            List<ClusterLoadAssignment> es = new ArrayList<>();
            List<Listener> ls = new ArrayList<>();
            List<RouteConfiguration> rs = new ArrayList<>();
            for (MeshService s : last.services().values()) {
                for (XdsResource r : translator.translate(s).resources()) {
                    switch (r.type()) {
                        case CLUSTER -> cs.add(Cluster.parseFrom(r.any().getValue()));
                        case ENDPOINT ->
                            es.add(ClusterLoadAssignment.parseFrom(r.any().getValue()));
                        case LISTENER -> ls.add(Listener.parseFrom(r.any().getValue()));
                        case ROUTE ->
                            rs.add(RouteConfiguration.parseFrom(r.any().getValue()));
                    }
                }
            }
            cache.setSnapshot("all", Snapshot.create(cs, es, ls, rs, List.of(), "n" + k));
            naiveCpu[k] = THREADS.getCurrentThreadCpuTime() - c;
            naiveAlloc[k] = THREADS.getThreadAllocatedBytes(tid) - a;
        }

        System.out.printf(
                "%n== one single-instance change, %,d services x %d endpoints (%,d endpoints), %,d resources ==%n",
                SERVICES, ENDPOINTS, full.endpointCount(), resourceCount(index));
        System.out.printf(
                "full build of the xDS index: first (cold JIT) %,d ms; second: CPU %,d ms, allocated %s%n",
                fullBuild / 1_000_000, warmBuildCpu / 1_000_000, kb(warmBuildAlloc));
        System.out.printf(
                "bridge xDS (translate the changed service + index diff), %d changes: CPU p50 %s p99 %s mean %s;"
                        + " allocated p50 %s p99 %s mean %s%n",
                measured,
                micros(percentile(cpu, 50)),
                micros(percentile(cpu, 99)),
                micros(mean(cpu)),
                kb(percentile(alloc, 50)),
                kb(percentile(alloc, 99)),
                kb(mean(alloc)));
        System.out.printf(
                "aggregator (merge the upsert, publish the snapshot), mean per change: CPU %s, allocated %s%n",
                micros(aggregatorCost[0]), kb(aggregatorCost[1]));
        System.out.printf(
                "java-control-plane SimpleCache floor (Snapshot.create + setSnapshot, resources prebuilt), %d"
                        + " changes: CPU p50 %s p99 %s; allocated p50 %s%n",
                rounds, micros(percentile(scCpu, 50)), micros(percentile(scCpu, 99)), kb(percentile(scAlloc, 50)));
        System.out.printf(
                "naive full rebuild (translate all + Snapshot), %d rounds: CPU mean %s; allocated mean %s%n",
                naiveRounds, micros(mean(naiveCpu)), kb(mean(naiveAlloc)));
        System.out.printf(
                "ratio SimpleCache floor / bridge (p50 CPU): %.0fx; allocation: %.0fx%n",
                (double) percentile(scCpu, 50) / Math.max(1, percentile(cpu, 50)),
                (double) percentile(scAlloc, 50) / Math.max(1, percentile(alloc, 50)));
    }

    // ------------------------------------------------------------------ registry change to response

    @Test
    void changeToResponse_latency_andBytes_1and1000Clients_sotwAndDelta() throws Exception {
        try (TestCatalog catalog = new TestCatalog()) {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            load(catalog);
            try (XdsServer server = new XdsServer(XdsOptions.loopbackEphemeral(), meters).start()) {
                catalog.aggregator().subscribe(server).join();
                long seq = catalog.snapshot().sequence();
                while (server.servedSequence() < seq) Thread.onSpinWait();
                System.out.printf(
                        "%n== registry change to response: %,d services, %,d endpoints; each client subscribes EDS"
                                + " to the changing service and 9 others ==%n",
                        SERVICES, (long) SERVICES * ENDPOINTS);
                int[] variant = {0};
                for (int clients : new int[] {1, 1000}) {
                    for (boolean delta : new boolean[] {true, false}) {
                        run(catalog, server, meters, clients, delta, variant);
                    }
                }
            }
        }
    }

    private void run(
            TestCatalog catalog, XdsServer server, SimpleMeterRegistry meters, int n, boolean delta, int[] variant)
            throws Exception {
        int changes = 40;
        int hot = 4242;
        List<Client> clients = new ArrayList<>();
        Random random = new Random(n);
        for (int c = 0; c < n; c++) {
            List<String> names = new ArrayList<>();
            names.add(cluster(hot));
            for (int k = 0; k < 9; k++) names.add(cluster(random.nextInt(SERVICES)));
            clients.add(new Client(server.port(), delta, names, cluster(hot)));
        }
        for (Client c : clients) c.initial.await(60, TimeUnit.SECONDS);
        Thread xds = thread("meshbridge-xds");
        String protocol = delta ? "delta" : "sotw";
        long[] latencies = new long[n * changes];
        int filled = 0;
        long xdsCpu = 0;
        long xdsAlloc = 0;
        double bytes0 = meters.find("meshbridge.xds.push.bytes")
                .tags("type", "eds", "protocol", protocol)
                .counter()
                .count();
        double[] otherTypes0 = otherTypeBytes(meters);
        for (int k = 0; k < changes; k++) {
            CountDownLatch all = new CountDownLatch(n);
            for (Client c : clients) c.arm(all);
            variant[0] ^= 1;
            long c0 = THREADS.getThreadCpuTime(xds.threadId());
            long a0 = THREADS.getThreadAllocatedBytes(xds.threadId());
            long t0 = System.nanoTime();
            for (Client c : clients) c.sentAt = t0;
            catalog.aggregator().accept(service(hot, variant[0]));
            if (!all.await(60, TimeUnit.SECONDS)) throw new AssertionError("not every client got change " + k);
            xdsCpu += THREADS.getThreadCpuTime(xds.threadId()) - c0;
            xdsAlloc += THREADS.getThreadAllocatedBytes(xds.threadId()) - a0;
            for (Client c : clients) latencies[filled++] = c.latency;
        }
        double bytes = meters.find("meshbridge.xds.push.bytes")
                        .tags("type", "eds", "protocol", protocol)
                        .counter()
                        .count()
                - bytes0;
        double[] otherTypes = otherTypeBytes(meters);
        double other = 0;
        for (int t = 0; t < otherTypes.length; t++) other += otherTypes[t] - otherTypes0[t];
        System.out.printf(
                "%-5s %4d clients: change -> response p50 %s p99 %s max %s; xDS thread per change: CPU %s,"
                        + " allocated %s; EDS bytes per change per stream %,.0f; CDS+LDS+RDS bytes %,.0f%n",
                protocol,
                n,
                millis(percentile(latencies, 50)),
                millis(percentile(latencies, 99)),
                millis(percentile(latencies, 100)),
                micros(xdsCpu / changes),
                kb(xdsAlloc / changes),
                bytes / changes / n,
                other);
        for (Client c : clients) c.close();
    }

    private static double[] otherTypeBytes(SimpleMeterRegistry meters) {
        List<Double> out = new ArrayList<>();
        for (String t : new String[] {"cds", "lds", "rds"}) {
            for (String p : new String[] {"sotw", "delta"}) {
                out.add(meters.find("meshbridge.xds.push.bytes")
                        .tags("type", t, "protocol", p)
                        .counter()
                        .count());
            }
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    @Test
    void bytesPerSingleInstanceChange_perEndpoint_andWholeEds() {
        EnvoyTranslator labelled = new EnvoyTranslator();
        EnvoyTranslator bare =
                new EnvoyTranslator(new EnvoyTranslator.Options(Duration.ofSeconds(5), true, java.util.Set.of()));
        try (TestCatalog catalog = new TestCatalog()) {
            System.out.printf("%n== bytes of one Delta EDS response (one ClusterLoadAssignment) ==%n");
            for (EnvoyTranslator t : List.of(labelled, bare)) {
                int[] sizes = new int[3];
                int[] counts = {1, 10, 100};
                for (int k = 0; k < counts.length; k++) {
                    List<Endpoint> eps = new ArrayList<>();
                    for (int j = 0; j < counts[k]; j++) {
                        eps.add(Upserts.dubboAppInstance("10.12." + (j / 250) + "." + (j % 250 + 1), 50051)
                                .label("version", "v" + (j % 3))
                                .build());
                    }
                    catalog.aggregator().accept(Upserts.dubboApplication("svc-04242", eps));
                    MeshService s = catalog.awaitService(
                            "svc-04242.dubbo", x -> x.endpoints().size() == eps.size());
                    XdsResource cla = t.translate(s).find(XdsType.ENDPOINT, cluster(4242));
                    sizes[k] = DeltaDiscoveryResponse.newBuilder()
                            .setTypeUrl(XdsType.ENDPOINT.typeUrl())
                            .setSystemVersionInfo("0123456789abcdef")
                            .setNonce("2s")
                            .addResources(cla.delta())
                            .build()
                            .getSerializedSize();
                }
                double perEndpoint = (sizes[2] - sizes[1]) / 90.0;
                System.out.printf(
                        "%s: response with 1 / 10 / 100 endpoints: %d / %d / %d B; per endpoint %.1f B; fixed %.0f B%n",
                        t == labelled ? "labels in envoy.lb (revision, version)" : "no labels (lbMetadataLabels: [])",
                        sizes[0],
                        sizes[1],
                        sizes[2],
                        perEndpoint,
                        sizes[1] - 10 * perEndpoint);
            }
            // a SotW server resending every requested resource (SimpleCache) to an Envoy subscribed to all
            load(catalog);
            long all = 0;
            for (MeshService s : catalog.snapshot().services().values()) {
                XdsResource cla = labelled.translate(s).find(XdsType.ENDPOINT, XdsNames.cluster(s.host(), 50051));
                if (cla != null) all += cla.any().getSerializedSize() + 3;
            }
            System.out.printf(
                    "SotW EDS resending every requested ClusterLoadAssignment (%,d services): %,d B per change per"
                            + " Envoy%n",
                    SERVICES, all);
        }
    }

    // ------------------------------------------------------------------ helpers

    /** A loopback ADS client subscribed to some ClusterLoadAssignments, timing when a change reaches it. */
    static final class Client implements AutoCloseable {
        final ManagedChannel channel;
        final CountDownLatch initial = new CountDownLatch(1);
        final String watched;
        final List<String> names;
        final boolean delta;
        volatile long sentAt;
        volatile long latency;
        volatile CountDownLatch armed;
        StreamObserver<DiscoveryRequest> sotw;
        StreamObserver<DeltaDiscoveryRequest> deltaStream;

        Client(int port, boolean delta, List<String> names, String watched) {
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                    .usePlaintext()
                    .build();
            this.delta = delta;
            this.names = names;
            this.watched = watched;
            var stub = AggregatedDiscoveryServiceGrpc.newStub(channel);
            if (delta) {
                deltaStream = stub.deltaAggregatedResources(observer(r -> {
                    boolean hit = false;
                    for (Resource res : r.getResourcesList())
                        hit |= res.getName().equals(watched);
                    onResponse(hit);
                    deltaStream.onNext(DeltaDiscoveryRequest.newBuilder()
                            .setTypeUrl(r.getTypeUrl())
                            .setResponseNonce(r.getNonce())
                            .build());
                }));
                deltaStream.onNext(DeltaDiscoveryRequest.newBuilder()
                        .setTypeUrl(XdsType.ENDPOINT.typeUrl())
                        .addAllResourceNamesSubscribe(names)
                        .build());
            } else {
                sotw = stub.streamAggregatedResources(observer(r -> {
                    onResponse(true);
                    sotw.onNext(DiscoveryRequest.newBuilder()
                            .setTypeUrl(r.getTypeUrl())
                            .setVersionInfo(r.getVersionInfo())
                            .setResponseNonce(r.getNonce())
                            .addAllResourceNames(names)
                            .build());
                }));
                sotw.onNext(DiscoveryRequest.newBuilder()
                        .setTypeUrl(XdsType.ENDPOINT.typeUrl())
                        .addAllResourceNames(names)
                        .build());
            }
        }

        void arm(CountDownLatch latch) {
            armed = latch;
        }

        private void onResponse(boolean watchedChanged) {
            long now = System.nanoTime();
            if (initial.getCount() > 0) {
                initial.countDown();
                return;
            }
            CountDownLatch l = armed;
            if (watchedChanged && l != null) {
                latency = now - sentAt;
                armed = null;
                l.countDown();
            }
        }

        private static <T> StreamObserver<T> observer(java.util.function.Consumer<T> onNext) {
            return new StreamObserver<>() {
                @Override
                public void onNext(T value) {
                    onNext.accept(value);
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            };
        }

        @Override
        public void close() {
            channel.shutdownNow();
        }
    }

    interface Parser<T> {
        T parse(com.google.protobuf.ByteString bytes) throws com.google.protobuf.InvalidProtocolBufferException;
    }

    static <T extends Message> List<T> messages(ResourceIndex index, XdsType type, Parser<T> parser) throws Exception {
        List<T> out = new ArrayList<>();
        List<com.google.protobuf.ByteString> bodies = new ArrayList<>();
        index.engine().forEach(type.resourceType(), r -> bodies.add(r.any().getValue()));
        for (com.google.protobuf.ByteString b : bodies) out.add(parser.parse(b));
        return out;
    }

    static int resourceCount(ResourceIndex index) {
        int n = 0;
        for (XdsType t : XdsType.all()) n += index.size(t);
        return n;
    }

    static Thread thread(String name) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name)) return t;
        }
        throw new AssertionError("no thread " + name);
    }

    static long percentile(long[] values, int p) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    static long mean(long[] values) {
        long sum = 0;
        for (long v : values) sum += v;
        return sum / values.length;
    }

    static String micros(long nanos) {
        return String.format("%.1f us", nanos / 1000.0);
    }

    static String millis(long nanos) {
        return String.format("%.2f ms", nanos / 1_000_000.0);
    }

    static String kb(long bytes) {
        return String.format("%.1f KB", bytes / 1024.0);
    }
}
