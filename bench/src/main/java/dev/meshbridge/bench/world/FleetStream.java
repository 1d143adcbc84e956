package dev.meshbridge.bench.world;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
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
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One ADS client of the fleet on its own connection, as a proxyless gRPC client or an Envoy with a scoped
 * subscription: it subscribes by name to the listeners, routes, clusters and load assignments of the services it
 * calls, takes every response (parsed by gRPC), reads the ports of the load assignments it carries, ACKs it, and
 * records when each change id first reached it.
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

    private void onEndpoints(List<Assignment> assignments, int bytes, long now) {
        boolean fresh = false;
        int endpoints = 0;
        for (Assignment cla : assignments) {
            endpoints += cla.endpoints();
            int max = cla.maxId();
            ClusterLog log = logs.get(cla.cluster());
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

    /** What a client of the fleet reads of a load assignment: its cluster, its endpoints, the largest change id. */
    record Assignment(String cluster, int endpoints, int maxId) {}

    /**
     * Reads a load assignment's cluster name, endpoint count and the largest change id among its endpoints' ports by
     * walking its wire form, without building the message. The fleet's clients share the bridge's cores, and building
     * every {@link ClusterLoadAssignment} (builders, strings, metadata) was a third of their JVM's CPU, which a real
     * Envoy spends on its own machine; the response itself is still parsed by gRPC and ACKed as before. A malformed
     * assignment fails as a full parse would.
     */
    static Assignment scan(ByteString bytes) {
        try {
            CodedInputStream in = bytes.newCodedInput();
            String cluster = "";
            int[] found = new int[2]; // endpoints, largest change id
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                int field = WireFormat.getTagFieldNumber(tag);
                if (field == ClusterLoadAssignment.CLUSTER_NAME_FIELD_NUMBER && delimited(tag)) {
                    cluster = in.readStringRequireUtf8();
                } else if (field == ClusterLoadAssignment.ENDPOINTS_FIELD_NUMBER && delimited(tag)) {
                    int limit = in.pushLimit(in.readRawVarint32());
                    scanLocality(in, found);
                    end(in, limit);
                } else {
                    in.skipField(tag);
                }
            }
            return new Assignment(cluster, found[0], found[1]);
        } catch (IOException e) {
            throw new IllegalStateException("a load assignment that does not parse", e);
        }
    }

    /** Leaves a nested message, which must have been read to its end (a truncated one ends early, as protobuf checks). */
    private static void end(CodedInputStream in, int limit) throws IOException {
        if (in.getBytesUntilLimit() != 0) {
            throw new com.google.protobuf.InvalidProtocolBufferException("a nested message ends before its length");
        }
        in.popLimit(limit);
    }

    private static boolean delimited(int tag) {
        return WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED;
    }

    /** A {@code LocalityLbEndpoints}: counts its {@code lb_endpoints} and reads their ports. */
    private static void scanLocality(CodedInputStream in, int[] found) throws IOException {
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            if (WireFormat.getTagFieldNumber(tag) == LocalityLbEndpoints.LB_ENDPOINTS_FIELD_NUMBER && delimited(tag)) {
                found[0]++;
                int limit = in.pushLimit(in.readRawVarint32());
                // LbEndpoint.endpoint -> Endpoint.address -> Address.socket_address -> SocketAddress.port_value
                int port = scanPort(in, 0);
                found[1] = Math.max(found[1], ChangeIds.id(port));
                end(in, limit);
            } else {
                in.skipField(tag);
            }
        }
    }

    /** The message fields leading from an {@code LbEndpoint} to its socket address. */
    private static final int[] PATH = {
        LbEndpoint.ENDPOINT_FIELD_NUMBER,
        io.envoyproxy.envoy.config.endpoint.v3.Endpoint.ADDRESS_FIELD_NUMBER,
        io.envoyproxy.envoy.config.core.v3.Address.SOCKET_ADDRESS_FIELD_NUMBER
    };

    /** Follows {@link #PATH} from {@code depth} to the socket address's {@code port_value}; 0 when absent. */
    private static int scanPort(CodedInputStream in, int depth) throws IOException {
        int port = 0;
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            int field = WireFormat.getTagFieldNumber(tag);
            if (depth < PATH.length && field == PATH[depth] && delimited(tag)) {
                int limit = in.pushLimit(in.readRawVarint32());
                port = scanPort(in, depth + 1);
                end(in, limit);
            } else if (depth == PATH.length
                    && field == io.envoyproxy.envoy.config.core.v3.SocketAddress.PORT_VALUE_FIELD_NUMBER
                    && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_VARINT) {
                port = in.readUInt32();
            } else {
                in.skipField(tag);
            }
        }
        return port;
    }

    /**
     * Takes one response on the transport thread: reads the load assignments it carries ({@link #scan}), then, if it is for this
     * stream's current connection, counts it, records the change ids, ACKs it and notes the type as answered.
     */
    private void receive(int generation, XdsType type, int bytes, List<Any> assignments, Runnable ack) {
        long now = System.nanoTime();
        if (type == null) return;
        List<Assignment> cla = new ArrayList<>();
        if (type == XdsType.ENDPOINT) {
            for (Any a : assignments) cla.add(scan(a.getValue()));
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
