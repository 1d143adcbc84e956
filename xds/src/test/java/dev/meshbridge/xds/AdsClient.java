package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.Status;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A raw ADS client over a real gRPC connection: sends exactly the requests a test writes (SotW or Delta) and queues
 * what the server answers, as Envoy's and grpc-java's xDS clients see it on the wire.
 */
final class AdsClient implements AutoCloseable {

    static final long TIMEOUT_SECONDS = 30;

    private final ManagedChannel channel;
    private final Node node;
    private final LinkedBlockingQueue<DiscoveryResponse> sotwResponses = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<DeltaDiscoveryResponse> deltaResponses = new LinkedBlockingQueue<>();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private StreamObserver<DiscoveryRequest> sotw;
    private StreamObserver<DeltaDiscoveryRequest> delta;

    AdsClient(int port, String nodeId) {
        this(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build(), nodeId);
    }

    /** A client on a channel of the test's making (TLS); the client closes it. */
    AdsClient(ManagedChannel channel, String nodeId) {
        this.channel = channel;
        this.node = Node.newBuilder()
                .setId(nodeId)
                .setCluster("test-cluster")
                .setUserAgentName("meshbridge-test")
                .setUserAgentVersion("1")
                .build();
    }

    ManagedChannel channel() {
        return channel;
    }

    // ------------------------------------------------------------------ SotW

    AdsClient openSotw() {
        sotw = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(observer(sotwResponses));
        return this;
    }

    /** Sends a SotW request; the node goes on every request, as grpc-java does. */
    void request(XdsType type, String version, String nonce, List<String> names) {
        sotw.onNext(DiscoveryRequest.newBuilder()
                .setNode(node)
                .setTypeUrl(type.typeUrl())
                .setVersionInfo(version)
                .setResponseNonce(nonce)
                .addAllResourceNames(names)
                .build());
    }

    void subscribe(XdsType type, String... names) {
        request(type, "", "", List.of(names));
    }

    /** ACKs a response, keeping the given subscription. */
    void ack(DiscoveryResponse r, String... names) {
        request(XdsType.ofTypeUrl(r.getTypeUrl()), r.getVersionInfo(), r.getNonce(), List.of(names));
    }

    /** NACKs a response: the last accepted version, the rejected nonce, and an error detail. */
    void nack(DiscoveryResponse r, String acceptedVersion, String message, String... names) {
        sotw.onNext(DiscoveryRequest.newBuilder()
                .setNode(node)
                .setTypeUrl(r.getTypeUrl())
                .setVersionInfo(acceptedVersion)
                .setResponseNonce(r.getNonce())
                .addAllResourceNames(List.of(names))
                .setErrorDetail(Status.newBuilder().setCode(3).setMessage(message))
                .build());
    }

    /** The next SotW response; fails when none comes within the timeout. */
    DiscoveryResponse next() {
        DiscoveryResponse r = poll(sotwResponses);
        assertThat(r).as("a SotW response within %s s", TIMEOUT_SECONDS).isNotNull();
        return r;
    }

    // ------------------------------------------------------------------ Delta

    AdsClient openDelta() {
        delta = AggregatedDiscoveryServiceGrpc.newStub(channel).deltaAggregatedResources(observer(deltaResponses));
        return this;
    }

    void delta(XdsType type, List<String> subscribe, List<String> unsubscribe, Map<String, String> initial) {
        delta.onNext(DeltaDiscoveryRequest.newBuilder()
                .setNode(node)
                .setTypeUrl(type.typeUrl())
                .addAllResourceNamesSubscribe(subscribe)
                .addAllResourceNamesUnsubscribe(unsubscribe)
                .putAllInitialResourceVersions(initial)
                .build());
    }

    void deltaAck(DeltaDiscoveryResponse r) {
        delta.onNext(DeltaDiscoveryRequest.newBuilder()
                .setTypeUrl(r.getTypeUrl())
                .setResponseNonce(r.getNonce())
                .build());
    }

    void deltaNack(DeltaDiscoveryResponse r, String message) {
        delta.onNext(DeltaDiscoveryRequest.newBuilder()
                .setTypeUrl(r.getTypeUrl())
                .setResponseNonce(r.getNonce())
                .setErrorDetail(Status.newBuilder().setCode(3).setMessage(message))
                .build());
    }

    DeltaDiscoveryResponse nextDelta() {
        DeltaDiscoveryResponse r = poll(deltaResponses);
        assertThat(r).as("a Delta response within %s s", TIMEOUT_SECONDS).isNotNull();
        return r;
    }

    /** Responses received and not yet taken. */
    int queued() {
        return sotwResponses.size() + deltaResponses.size();
    }

    Throwable error() {
        return error.get();
    }

    private <T> StreamObserver<T> observer(LinkedBlockingQueue<T> queue) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                queue.add(value);
            }

            @Override
            public void onError(Throwable t) {
                error.set(t);
            }

            @Override
            public void onCompleted() {}
        };
    }

    private static <T> T poll(LinkedBlockingQueue<T> queue) {
        try {
            return queue.poll(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Ends the stream as a client going away does. */
    void closeStreams() {
        if (sotw != null) sotw.onCompleted();
        if (delta != null) delta.onCompleted();
        sotw = null;
        delta = null;
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
