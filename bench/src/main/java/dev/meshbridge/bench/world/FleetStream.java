package dev.meshbridge.bench.world;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.bench.load.ChangeIds;
import dev.meshbridge.xds.XdsType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One ADS client of the fleet on its own connection, as a proxyless gRPC client or an Envoy with a scoped
 * subscription: it subscribes by name to the listeners, routes, clusters and load assignments of the services it
 * calls, parses every response, ACKs it, and records when each change id first reached it.
 *
 * <p>All state is guarded by {@code this}; callbacks run on the channel's transport thread.
 */
final class FleetStream {

    static final XdsType[] TYPES = {XdsType.CLUSTER, XdsType.ENDPOINT, XdsType.LISTENER, XdsType.ROUTE};

    /** When a load assignment first showed a change id at or above one seen before. */
    static final class ClusterLog {
        int maxId;
        int size;
        int[] ids = new int[4];
        long[] at = new long[4];

        void add(int id, long nanos) {
            if (size == ids.length) {
                ids = java.util.Arrays.copyOf(ids, size * 2);
                at = java.util.Arrays.copyOf(at, size * 2);
            }
            ids[size] = id;
            at[size] = nanos;
            size++;
        }

        /** When a state at or after change {@code id} first arrived, or -1. */
        long firstAtOrAfter(int id) {
            for (int k = 0; k < size; k++) {
                if (ids[k] >= id) return at[k];
            }
            return -1;
        }
    }

    /** Counters of one measurement window. */
    static final class Counters {
        final long[] bytes = new long[4];
        final long[] responses = new long[4];
        long wasteBytes;
        long wasteResponses;
        long edsEndpoints;
        long edsAssignments;
        long edsWithinBudget;
        long edsBudgetBytes;
    }

    final int index;
    final boolean delta;
    final List<Integer> services;
    final Map<XdsType, List<String>> names;
    private final Node node;
    private final Map<String, ClusterLog> logs = new HashMap<>();
    private final FleetListener listener;
    private ManagedChannel channel;
    private StreamObserver<DiscoveryRequest> sotw;
    private StreamObserver<DeltaDiscoveryRequest> deltaRequests;
    private int generation;
    private boolean opened;
    private int unanswered;
    private boolean synced;
    private boolean armed;
    private Counters counters = new Counters();
    private Throwable error;

    /** Told when a stream has had (and ACKed) a first response of every type it subscribes to. */
    interface FleetListener {
        void synced(FleetStream stream, long nanos);
    }

    FleetStream(int index, boolean delta, List<Integer> services, Map<XdsType, List<String>> names, FleetListener l) {
        this.index = index;
        this.delta = delta;
        this.services = List.copyOf(services);
        this.names = new EnumMap<>(names);
        this.listener = l;
        this.node = Node.newBuilder()
                .setId("bench-" + (delta ? "delta-" : "sotw-") + index)
                .setCluster("bench-fleet")
                .setUserAgentName("meshbridge-bench")
                .build();
        for (String c : names.getOrDefault(XdsType.ENDPOINT, List.of())) logs.put(c, new ClusterLog());
    }

    /** Opens a new connection and stream and sends the initial subscriptions (without any version held). */
    synchronized void open(int port) {
        opened = true;
        channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .directExecutor()
                .maxInboundMessageSize(256 * 1024 * 1024)
                .build();
        var stub = AggregatedDiscoveryServiceGrpc.newStub(channel);
        int g = ++generation;
        synced = false;
        error = null;
        unanswered = 0;
        for (XdsType t : TYPES) {
            if (!names.getOrDefault(t, List.of()).isEmpty()) unanswered |= 1 << t.ordinal();
        }
        boolean first = true;
        if (delta) {
            deltaRequests = stub.deltaAggregatedResources(new DeltaReceiver(g));
            for (XdsType t : TYPES) {
                List<String> n = names.getOrDefault(t, List.of());
                if (n.isEmpty()) continue;
                DeltaDiscoveryRequest.Builder r = DeltaDiscoveryRequest.newBuilder()
                        .setTypeUrl(t.typeUrl())
                        .addAllResourceNamesSubscribe(n);
                if (first) r.setNode(node);
                first = false;
                deltaRequests.onNext(r.build());
            }
        } else {
            sotw = stub.streamAggregatedResources(new SotwReceiver(g));
            for (XdsType t : TYPES) {
                List<String> n = names.getOrDefault(t, List.of());
                if (n.isEmpty()) continue;
                DiscoveryRequest.Builder r =
                        DiscoveryRequest.newBuilder().setTypeUrl(t.typeUrl()).addAllResourceNames(n);
                if (first) r.setNode(node);
                first = false;
                sotw.onNext(r.build());
            }
        }
    }

    /** Drops the connection at once, as a client that goes away does. */
    synchronized ManagedChannel drop() {
        generation++;
        ManagedChannel c = channel;
        channel = null;
        sotw = null;
        deltaRequests = null;
        if (c != null) c.shutdownNow();
        return c;
    }

    void close() {
        ManagedChannel c = drop();
        if (c != null) {
            try {
                c.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether this client was ever started (a fleet that ran out of time leaves some closed). */
    synchronized boolean opened() {
        return opened;
    }

    synchronized boolean synced() {
        return synced;
    }

    synchronized Throwable error() {
        return error;
    }

    /** Starts a measurement window: counters and change logs restart. */
    synchronized void arm() {
        armed = true;
        counters = new Counters();
        for (ClusterLog l : logs.values()) {
            l.size = 0;
        }
    }

    synchronized Counters counters() {
        return counters;
    }

    synchronized String debugLog(String cluster) {
        ClusterLog l = logs.get(cluster);
        if (l == null) return "none";
        StringBuilder b = new StringBuilder("max=" + l.maxId + " [");
        for (int k = 0; k < l.size; k++) b.append(l.ids[k]).append(' ');
        return b.append(']').toString();
    }

    synchronized long firstAtOrAfter(String cluster, int id) {
        ClusterLog l = logs.get(cluster);
        return l == null ? -1 : l.firstAtOrAfter(id);
    }

    // ------------------------------------------------------------------ receiving

    private void onEndpoints(List<ClusterLoadAssignment> assignments, int bytes, long now) {
        boolean fresh = false;
        int endpoints = 0;
        for (ClusterLoadAssignment cla : assignments) {
            int max = 0;
            for (LocalityLbEndpoints l : cla.getEndpointsList()) {
                for (LbEndpoint e : l.getLbEndpointsList()) {
                    endpoints++;
                    int id = ChangeIds.id(
                            e.getEndpoint().getAddress().getSocketAddress().getPortValue());
                    if (id > max) max = id;
                }
            }
            ClusterLog log = logs.get(cla.getClusterName());
            if (log != null && max > log.maxId) {
                log.maxId = max;
                if (armed) log.add(max, now);
                fresh = true;
            }
        }
        if (!armed) return;
        Counters c = counters;
        if (!fresh) {
            c.wasteBytes += bytes;
            c.wasteResponses++;
        }
        if (delta) {
            c.edsEndpoints += endpoints;
            c.edsAssignments += assignments.size();
            long budget = 350L * assignments.size() + 31L * endpoints;
            c.edsBudgetBytes += budget;
            if (bytes <= budget) c.edsWithinBudget++;
        }
    }

    private void count(XdsType type, int bytes) {
        if (!armed) return;
        counters.bytes[type.ordinal()] += bytes;
        counters.responses[type.ordinal()]++;
    }

    private void answered(XdsType type, long now) {
        if (synced) return;
        unanswered &= ~(1 << type.ordinal());
        if (unanswered == 0) {
            synced = true;
            listener.synced(this, now);
        }
    }

    private static ClusterLoadAssignment parse(Any any) {
        try {
            return ClusterLoadAssignment.parseFrom(any.getValue());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("a load assignment that does not parse", e);
        }
    }

    /**
     * Takes one response on the transport thread: parses the load assignments it carries, then, if it is for this
     * stream's current connection, counts it, records the change ids, ACKs it and notes the type as answered.
     */
    private void receive(int generation, XdsType type, int bytes, List<Any> assignments, Runnable ack) {
        long now = System.nanoTime();
        if (type == null) return;
        List<ClusterLoadAssignment> cla = new ArrayList<>();
        if (type == XdsType.ENDPOINT) {
            for (Any a : assignments) cla.add(parse(a));
        }
        synchronized (this) {
            if (this.generation != generation) return;
            count(type, bytes);
            if (type == XdsType.ENDPOINT) onEndpoints(cla, bytes, now);
            ack.run();
            answered(type, now);
        }
    }

    private synchronized void failed(int generation, Throwable t) {
        if (this.generation == generation) error = t;
    }

    private final class SotwReceiver implements StreamObserver<DiscoveryResponse> {
        private final int generation;

        SotwReceiver(int generation) {
            this.generation = generation;
        }

        @Override
        public void onNext(DiscoveryResponse r) {
            XdsType type = XdsType.ofTypeUrl(r.getTypeUrl());
            receive(
                    generation,
                    type,
                    r.getSerializedSize(),
                    r.getResourcesList(),
                    () -> sotw.onNext(DiscoveryRequest.newBuilder()
                            .setTypeUrl(r.getTypeUrl())
                            .setVersionInfo(r.getVersionInfo())
                            .setResponseNonce(r.getNonce())
                            .addAllResourceNames(names.getOrDefault(type, List.of()))
                            .build()));
        }

        @Override
        public void onError(Throwable t) {
            failed(generation, t);
        }

        @Override
        public void onCompleted() {}
    }

    private final class DeltaReceiver implements StreamObserver<DeltaDiscoveryResponse> {
        private final int generation;

        DeltaReceiver(int generation) {
            this.generation = generation;
        }

        @Override
        public void onNext(DeltaDiscoveryResponse r) {
            List<Any> assignments = new ArrayList<>(r.getResourcesCount());
            for (Resource res : r.getResourcesList()) assignments.add(res.getResource());
            receive(
                    generation,
                    XdsType.ofTypeUrl(r.getTypeUrl()),
                    r.getSerializedSize(),
                    assignments,
                    () -> deltaRequests.onNext(DeltaDiscoveryRequest.newBuilder()
                            .setTypeUrl(r.getTypeUrl())
                            .setResponseNonce(r.getNonce())
                            .build()));
        }

        @Override
        public void onError(Throwable t) {
            failed(generation, t);
        }

        @Override
        public void onCompleted() {}
    }
}
