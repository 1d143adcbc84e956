package dev.meshbridge.mcp;

import static org.awaitility.Awaitility.await;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Metadata;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * An MCP client that behaves as istiod's {@code configSources} client ({@code pkg/adsc}, Istio 1.22 to 1.27) does:
 *
 * <ol>
 *   <li>one ADS stream; all initial requests, for {@code core/v1alpha1/MeshConfig} and every Pilot config type, are
 *       sent before any response is read;
 *   <li>every request it sends carries Go's {@code time.Now().String()} as nonce, the first one included; the node
 *       (id {@code sidecar~<ip>~<pod>.<ns>~<ns>.svc.cluster.local}, metadata {@code ISTIO_VERSION=65536.65536.65536})
 *       goes on the first request and on every ACK;
 *   <li>each response replaces the whole set of its type, as istiod's store does; a resource must be an Any of
 *       {@code istio.mcp.v1alpha1.Resource} named {@code namespace/name} with a body it can unpack, or it is dropped
 *       (counted in {@link #decodeErrors()});
 *   <li>every response is ACKed with its nonce and version; types listed in {@link #nackNext} are NACKed once.
 * </ol>
 */
final class IstiodMcpClient implements AutoCloseable {

    static final String MESH_CONFIG = "core/v1alpha1/MeshConfig";
    static final String NODE_ID =
            "sidecar~10.244.0.7~istiod-7d4b9c8f6-x2x9k.istio-system~istio-system.svc.cluster.local";

    /** The config types istiod 1.24 and later subscribes to. */
    static final List<String> PILOT_TYPES_1_24 = List.of(
            "security.istio.io/v1/AuthorizationPolicy",
            "networking.istio.io/v1/DestinationRule",
            "networking.istio.io/v1alpha3/EnvoyFilter",
            "networking.istio.io/v1/Gateway",
            "security.istio.io/v1/PeerAuthentication",
            "networking.istio.io/v1beta1/ProxyConfig",
            "security.istio.io/v1/RequestAuthentication",
            "networking.istio.io/v1/ServiceEntry",
            "networking.istio.io/v1/Sidecar",
            "telemetry.istio.io/v1/Telemetry",
            "networking.istio.io/v1/VirtualService",
            "extensions.istio.io/v1alpha1/WasmPlugin",
            "networking.istio.io/v1/WorkloadEntry",
            "networking.istio.io/v1/WorkloadGroup");

    /** The config types istiod up to 1.23 subscribes to. */
    static final List<String> PILOT_TYPES_1_23 = List.of(
            "security.istio.io/v1beta1/AuthorizationPolicy",
            "networking.istio.io/v1alpha3/DestinationRule",
            "networking.istio.io/v1alpha3/EnvoyFilter",
            "networking.istio.io/v1alpha3/Gateway",
            "security.istio.io/v1beta1/PeerAuthentication",
            "networking.istio.io/v1beta1/ProxyConfig",
            "security.istio.io/v1beta1/RequestAuthentication",
            "networking.istio.io/v1alpha3/ServiceEntry",
            "networking.istio.io/v1alpha3/Sidecar",
            "telemetry.istio.io/v1alpha1/Telemetry",
            "networking.istio.io/v1alpha3/VirtualService",
            "extensions.istio.io/v1alpha1/WasmPlugin",
            "networking.istio.io/v1alpha3/WorkloadEntry",
            "networking.istio.io/v1alpha3/WorkloadGroup");

    private static final DateTimeFormatter GO_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    /** A resource as istiod's store keeps it. */
    record Config(Metadata metadata, Message spec) {
        String name() {
            return metadata.getName();
        }
    }

    private final ManagedChannel channel;
    private final List<String> types;
    private final Node node;
    private final long startNanos = System.nanoTime();
    private StreamObserver<DiscoveryRequest> requests;

    // guarded by this
    private final Map<String, Map<String, Config>> store = new HashMap<>();
    private final Map<String, List<DiscoveryResponse>> responses = new HashMap<>();
    private final Set<String> nackNext = new HashSet<>();
    private final List<DiscoveryRequest> sent = new ArrayList<>();
    private int decodeErrors;
    private Throwable error;
    private boolean completed;

    IstiodMcpClient(int port, List<String> pilotTypes) {
        this(
                NettyChannelBuilder.forAddress("127.0.0.1", port)
                        .usePlaintext()
                        .maxInboundMessageSize(Integer.MAX_VALUE)
                        .build(),
                pilotTypes);
    }

    /** A client on a channel of the test's making (TLS, as istiod's {@code tlsSettings}); the client closes it. */
    IstiodMcpClient(ManagedChannel channel, List<String> pilotTypes) {
        this.channel = channel;
        List<String> all = new ArrayList<>();
        all.add(MESH_CONFIG);
        all.addAll(pilotTypes);
        this.types = List.copyOf(all);
        this.node = Node.newBuilder()
                .setId(NODE_ID)
                .setMetadata(Struct.newBuilder()
                        .putFields(
                                "ISTIO_VERSION",
                                Value.newBuilder()
                                        .setStringValue("65536.65536.65536")
                                        .build()))
                .build();
    }

    /** Opens the stream and sends every initial request at once, as istiod does. */
    IstiodMcpClient start() {
        requests = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(new Receiver());
        boolean first = true;
        for (String type : types) {
            DiscoveryRequest.Builder r =
                    DiscoveryRequest.newBuilder().setTypeUrl(type).setResponseNonce(goNow());
            if (first) r.setNode(node);
            first = false;
            send(r.build());
        }
        return this;
    }

    /** NACKs the next response of this type once. */
    synchronized void nackNext(String typeUrl) {
        nackNext.add(typeUrl);
    }

    List<String> types() {
        return types;
    }

    /** Waits until every subscribed type had a response: istiod's HasSynced. */
    void awaitSynced() {
        await().atMost(Duration.ofSeconds(20)).until(this::synced);
    }

    synchronized boolean synced() {
        return types.stream().allMatch(t -> responses.containsKey(t));
    }

    /** The resources of a type as istiod's store holds them now, by {@code namespace/name}. */
    synchronized Map<String, Config> configs(String typeUrl) {
        return new TreeMap<>(store.getOrDefault(typeUrl, Map.of()));
    }

    /** Waits until the store of a type matches and returns it. */
    Map<String, Config> awaitConfigs(String typeUrl, Predicate<Map<String, Config>> condition) {
        Object[] found = new Object[1];
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> {
                    Map<String, Config> c = configs(typeUrl);
                    found[0] = c;
                    return condition.test(c);
                });
        @SuppressWarnings("unchecked")
        Map<String, Config> result = (Map<String, Config>) found[0];
        return result;
    }

    synchronized List<DiscoveryResponse> responses(String typeUrl) {
        return List.copyOf(responses.getOrDefault(typeUrl, List.of()));
    }

    synchronized List<DiscoveryRequest> sent() {
        return List.copyOf(sent);
    }

    synchronized int decodeErrors() {
        return decodeErrors;
    }

    synchronized Throwable error() {
        return error;
    }

    synchronized boolean completed() {
        return completed;
    }

    static ServiceEntry serviceEntry(Config c) {
        return (ServiceEntry) c.spec();
    }

    static WorkloadEntry workloadEntry(Config c) {
        return (WorkloadEntry) c.spec();
    }

    static Gateway gateway(Config c) {
        return (Gateway) c.spec();
    }

    static VirtualService virtualService(Config c) {
        return (VirtualService) c.spec();
    }

    static DestinationRule destinationRule(Config c) {
        return (DestinationRule) c.spec();
    }

    /** istiod decodes a body with the schema of the collection it came in: the kind in the type URL must match. */
    private static boolean bodyFits(String typeUrl, Message spec) {
        String kind = typeUrl.substring(typeUrl.lastIndexOf('/') + 1);
        return spec.getDescriptorForType().getName().equals(kind);
    }

    private synchronized void send(DiscoveryRequest r) {
        sent.add(r);
        requests.onNext(r);
    }

    /** Go's {@code time.Now().String()}, e.g. {@code 2025-05-01 10:00:00.123456789 +0000 UTC m=+0.011000001}. */
    private String goNow() {
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        String nanos = String.format("%09d", now.getNano()).replaceAll("0+$", "");
        double monotonic = (System.nanoTime() - startNanos) / 1e9;
        return GO_TIME.format(now) + (nanos.isEmpty() ? "" : "." + nanos) + " +0000 UTC m=+"
                + String.format("%.9f", monotonic);
    }

    private final class Receiver implements StreamObserver<DiscoveryResponse> {
        @Override
        public void onNext(DiscoveryResponse response) {
            boolean nack;
            synchronized (IstiodMcpClient.this) {
                responses
                        .computeIfAbsent(response.getTypeUrl(), t -> new ArrayList<>())
                        .add(response);
                Map<String, Config> received = new LinkedHashMap<>();
                for (Any any : response.getResourcesList()) {
                    Config c = decode(response.getTypeUrl(), any);
                    if (c == null) decodeErrors++;
                    else received.put(c.name(), c);
                }
                store.put(response.getTypeUrl(), received);
                nack = nackNext.remove(response.getTypeUrl());
            }
            DiscoveryRequest.Builder answer = DiscoveryRequest.newBuilder()
                    .setTypeUrl(response.getTypeUrl())
                    .setResponseNonce(response.getNonce())
                    .setVersionInfo(response.getVersionInfo())
                    .setNode(node);
            if (nack) {
                answer.setErrorDetail(com.google.rpc.Status.newBuilder()
                        .setCode(3)
                        .setMessage("test rejects " + response.getTypeUrl()));
            }
            send(answer.build());
        }

        @Override
        public void onError(Throwable t) {
            synchronized (IstiodMcpClient.this) {
                error = t;
            }
        }

        @Override
        public void onCompleted() {
            synchronized (IstiodMcpClient.this) {
                completed = true;
            }
        }
    }

    /** What istiod's {@code mcpToPilot} accepts, or null. */
    private static Config decode(String typeUrl, Any any) {
        try {
            if (!any.is(Resource.class)) return null;
            Resource r = any.unpack(Resource.class);
            if (!r.hasMetadata() || r.getMetadata().getName().split("/", -1).length != 2) return null;
            Any body = r.getBody();
            Message spec;
            if (body.is(ServiceEntry.class)) spec = body.unpack(ServiceEntry.class);
            else if (body.is(WorkloadEntry.class)) spec = body.unpack(WorkloadEntry.class);
            else if (body.is(Gateway.class)) spec = body.unpack(Gateway.class);
            else if (body.is(VirtualService.class)) spec = body.unpack(VirtualService.class);
            else if (body.is(DestinationRule.class)) spec = body.unpack(DestinationRule.class);
            else return null;
            if (!bodyFits(typeUrl, spec)) return null;
            return new Config(r.getMetadata(), spec);
        } catch (InvalidProtocolBufferException e) {
            return null;
        }
    }

    @Override
    public void close() throws InterruptedException {
        synchronized (this) {
            if (requests != null && !completed && error == null) {
                try {
                    requests.onCompleted();
                } catch (RuntimeException ignored) {
                    // the stream is already gone
                }
            }
        }
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
