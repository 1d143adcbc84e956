package dev.meshbridge.bench.world;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An MCP client that behaves as istiod's {@code configSources} client does (Istio 1.24+): one ADS stream, every
 * initial request (MeshConfig and the 14 Pilot config types) sent before any response is read, Go's {@code
 * time.Now().String()} as the nonce of each, the node on the first request and on every ACK, each SotW response
 * replacing the whole set of its type, every resource an {@code istio.mcp.v1alpha1.Resource} whose body must unpack.
 * It counts, per ServiceEntry response, how many resources changed version against the set it held.
 */
final class IstiodClient implements AutoCloseable {

    static final String SERVICE_ENTRY = "networking.istio.io/v1/ServiceEntry";
    static final List<String> TYPES = List.of(
            "core/v1alpha1/MeshConfig",
            "security.istio.io/v1/AuthorizationPolicy",
            "networking.istio.io/v1/DestinationRule",
            "networking.istio.io/v1alpha3/EnvoyFilter",
            "networking.istio.io/v1/Gateway",
            "security.istio.io/v1/PeerAuthentication",
            "networking.istio.io/v1beta1/ProxyConfig",
            "security.istio.io/v1/RequestAuthentication",
            SERVICE_ENTRY,
            "networking.istio.io/v1/Sidecar",
            "telemetry.istio.io/v1/Telemetry",
            "networking.istio.io/v1/VirtualService",
            "extensions.istio.io/v1alpha1/WasmPlugin",
            "networking.istio.io/v1/WorkloadEntry",
            "networking.istio.io/v1/WorkloadGroup");
    /** The type URL suffixes {@code Any.unpack} (and Go's {@code UnmarshalTo}) accept. */
    private static final String RESOURCE_URL = "/" + Resource.getDescriptor().getFullName();

    private static final String SERVICE_ENTRY_URL =
            "/" + ServiceEntry.getDescriptor().getFullName();
    private static final DateTimeFormatter GO_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    /**
     * One ServiceEntry response as istiod would see it: {@code nanos} when it had arrived whole (gRPC had parsed the
     * discovery response), {@code decodedNanos} when this client had unpacked every resource and the body of every
     * changed one (the client's own work, which istiod does in Go).
     */
    record Seen(
            long nanos,
            long decodedNanos,
            int resources,
            int changed,
            int bytes,
            int decodeErrors,
            long firstByteNanos,
            long arrivedNanos) {}

    /**
     * When each inbound message began and ended arriving, by its sequence number on the stream (gRPC's stream tracer:
     * its header was read; its last byte was read, before gRPC parsed it). Timing only: the client behaves the same.
     */
    private final java.util.concurrent.ConcurrentHashMap<Integer, long[]> arrivals =
            new java.util.concurrent.ConcurrentHashMap<>();

    private final io.grpc.ClientStreamTracer.Factory tracer = new io.grpc.ClientStreamTracer.Factory() {
        @Override
        public io.grpc.ClientStreamTracer newClientStreamTracer(
                io.grpc.ClientStreamTracer.StreamInfo info, io.grpc.Metadata headers) {
            return new io.grpc.ClientStreamTracer() {
                @Override
                public void inboundMessage(int seqNo) {
                    arrivals.put(seqNo, new long[] {System.nanoTime(), 0});
                }

                @Override
                public void inboundMessageRead(int seqNo, long wireSize, long uncompressedSize) {
                    long[] a = arrivals.get(seqNo);
                    if (a != null) a[1] = System.nanoTime();
                }
            };
        }
    };

    private final ManagedChannel channel;
    private final Node node;
    private final long started = System.nanoTime();
    private StreamObserver<DiscoveryRequest> requests;

    // guarded by this
    private final Map<String, String> versions = new HashMap<>();
    private final List<Seen> seen = new ArrayList<>();
    private final java.util.Set<String> answeredTypes = new java.util.HashSet<>();
    private Throwable error;

    IstiodClient(int port) {
        this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .maxInboundMessageSize(Integer.MAX_VALUE)
                .build();
        this.node = Node.newBuilder()
                .setId("sidecar~10.244.0.7~istiod-5f9c8d7b6-bench.istio-system~istio-system.svc.cluster.local")
                .setMetadata(Struct.newBuilder()
                        .putFields(
                                "ISTIO_VERSION",
                                Value.newBuilder()
                                        .setStringValue("65536.65536.65536")
                                        .build()))
                .build();
    }

    IstiodClient start() {
        requests = AggregatedDiscoveryServiceGrpc.newStub(channel)
                .withInterceptors(new io.grpc.ClientInterceptor() {
                    @Override
                    public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(
                            io.grpc.MethodDescriptor<Q, R> method, io.grpc.CallOptions options, io.grpc.Channel next) {
                        return next.newCall(method, options.withStreamTracerFactory(tracer));
                    }
                })
                .streamAggregatedResources(new Receiver());
        boolean first = true;
        for (String type : TYPES) {
            DiscoveryRequest.Builder r =
                    DiscoveryRequest.newBuilder().setTypeUrl(type).setResponseNonce(goNow());
            if (first) r.setNode(node);
            first = false;
            send(r.build());
        }
        return this;
    }

    synchronized boolean synced() {
        return answeredTypes.containsAll(TYPES);
    }

    synchronized List<Seen> seen() {
        return List.copyOf(seen);
    }

    /** The first ServiceEntry response that carried at least {@code resources} (the whole-set push), or null. */
    synchronized Seen firstWithAtLeast(int resources) {
        for (Seen s : seen) {
            if (s.resources() >= resources) return s;
        }
        return null;
    }

    synchronized int held() {
        return versions.size();
    }

    synchronized Throwable error() {
        return error;
    }

    private synchronized void send(DiscoveryRequest r) {
        requests.onNext(r);
    }

    private String goNow() {
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        String nanos = String.format(Locale.ROOT, "%09d", now.getNano()).replaceAll("0+$", "");
        return GO_TIME.format(now) + (nanos.isEmpty() ? "" : "." + nanos) + " +0000 UTC m=+"
                + String.format(Locale.ROOT, "%.9f", (System.nanoTime() - started) / 1e9);
    }

    private final class Receiver implements StreamObserver<DiscoveryResponse> {
        /** The sequence number of the next response (gRPC delivers them in order). */
        private int sequence;

        @Override
        public void onNext(DiscoveryResponse response) {
            long now = System.nanoTime();
            long[] arrival = arrivals.remove(sequence++);
            if (response.getTypeUrl().equals(SERVICE_ENTRY)) {
                // every resource is unpacked once; a changed one must still be a ServiceEntry istiod can read.
                // versions is written only here (gRPC calls onNext one at a time), so this thread reads it unlocked
                Map<String, String> held = versions;
                Map<String, String> next = new HashMap<>();
                int errors = 0;
                int changed = 0;
                for (Any any : response.getResourcesList()) {
                    try {
                        // parsed, not Any.unpack: unpack keeps what it parsed inside the Any, and the response
                        // would then hold every decoded ServiceEntry (GBs at a million endpoints) while it is read
                        if (!any.getTypeUrl().endsWith(RESOURCE_URL)) {
                            errors++;
                            continue;
                        }
                        Resource r = Resource.parseFrom(any.getValue());
                        String name = r.getMetadata().getName();
                        if (name.split("/", -1).length != 2) {
                            errors++;
                            continue;
                        }
                        String version = r.getMetadata().getVersion();
                        next.put(name, version);
                        if (!version.equals(held.get(name))) {
                            changed++;
                            if (!r.getBody().getTypeUrl().endsWith(SERVICE_ENTRY_URL)) errors++;
                            else ServiceEntry.parseFrom(r.getBody().getValue());
                        }
                    } catch (InvalidProtocolBufferException e) {
                        errors++;
                    }
                }
                for (String old : held.keySet()) if (!next.containsKey(old)) changed++;
                long decoded = System.nanoTime();
                synchronized (IstiodClient.this) {
                    versions.clear();
                    versions.putAll(next);
                    seen.add(new Seen(
                            now,
                            decoded,
                            next.size(),
                            changed,
                            response.getSerializedSize(),
                            errors,
                            arrival == null ? 0 : arrival[0],
                            arrival == null ? 0 : arrival[1]));
                }
            }
            synchronized (IstiodClient.this) {
                answeredTypes.add(response.getTypeUrl());
            }
            send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(response.getTypeUrl())
                    .setResponseNonce(response.getNonce())
                    .setVersionInfo(response.getVersionInfo())
                    .setNode(node)
                    .build());
        }

        @Override
        public void onError(Throwable t) {
            synchronized (IstiodClient.this) {
                error = t;
            }
        }

        @Override
        public void onCompleted() {}
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
