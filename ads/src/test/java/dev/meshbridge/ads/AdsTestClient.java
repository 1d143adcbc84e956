package dev.meshbridge.ads;

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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A raw ADS client for the conformance suite: it speaks the protocol as the spec words it (no client library's
 * caching in between), so a test sees exactly what the server sent.
 */
public final class AdsTestClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final Node node;
    private final BlockingQueue<Object> received = new LinkedBlockingQueue<>();
    private StreamObserver<DiscoveryRequest> sotw;
    private StreamObserver<DeltaDiscoveryRequest> delta;

    public AdsTestClient(int port, Node node) {
        this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .maxInboundMessageSize(64 * 1024 * 1024)
                .build();
        this.node = node;
    }

    public AdsTestClient openSotw() {
        sotw = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(observer());
        return this;
    }

    public AdsTestClient openDelta() {
        delta = AggregatedDiscoveryServiceGrpc.newStub(channel).deltaAggregatedResources(observer());
        return this;
    }

    private <T> StreamObserver<T> observer() {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                received.add(value);
            }

            @Override
            public void onError(Throwable t) {
                received.add(t);
            }

            @Override
            public void onCompleted() {}
        };
    }

    /** A SotW request; {@code names} empty subscribes to everything. */
    public void sotw(String typeUrl, List<String> names, String version, String nonce) {
        sotw.onNext(DiscoveryRequest.newBuilder()
                .setNode(node)
                .setTypeUrl(typeUrl)
                .addAllResourceNames(names)
                .setVersionInfo(version)
                .setResponseNonce(nonce)
                .build());
    }

    /** ACKs a SotW response, naming the same resources as before. */
    public void ack(DiscoveryResponse r, List<String> names) {
        sotw(r.getTypeUrl(), names, r.getVersionInfo(), r.getNonce());
    }

    /** NACKs a SotW response, keeping the version the client had. */
    public void nack(DiscoveryResponse r, List<String> names, String keptVersion) {
        sotw.onNext(DiscoveryRequest.newBuilder()
                .setNode(node)
                .setTypeUrl(r.getTypeUrl())
                .addAllResourceNames(names)
                .setVersionInfo(keptVersion)
                .setResponseNonce(r.getNonce())
                .setErrorDetail(Status.newBuilder().setCode(3).setMessage("conformance rejects it"))
                .build());
    }

    public void delta(DeltaDiscoveryRequest.Builder request) {
        delta.onNext(request.setNode(node).build());
    }

    public void deltaSubscribe(String typeUrl, List<String> names, Map<String, String> initialVersions) {
        delta(DeltaDiscoveryRequest.newBuilder()
                .setTypeUrl(typeUrl)
                .addAllResourceNamesSubscribe(names)
                .putAllInitialResourceVersions(initialVersions));
    }

    public void deltaAck(DeltaDiscoveryResponse r) {
        delta(DeltaDiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setResponseNonce(r.getNonce()));
    }

    /**
     * How long a test waits for the server's next message. Generous on purpose: the first response of a run carries
     * the JVM's warm-up (class loading, the first connection), and on a 2-core machine at a load average of 15 that
     * took more than 10 s. A response that never comes still fails the test, only later.
     */
    public static final int WAIT_SECONDS = 60;

    /** The next message, waiting up to {@link #WAIT_SECONDS}. */
    public DiscoveryResponse next() {
        return (DiscoveryResponse) take(WAIT_SECONDS);
    }

    public DeltaDiscoveryResponse nextDelta() {
        return (DeltaDiscoveryResponse) take(WAIT_SECONDS);
    }

    /** The error that ended the stream, waiting up to {@link #WAIT_SECONDS}; fails on a response or a normal end. */
    public Throwable failure() {
        try {
            Object o = received.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            if (o instanceof Throwable t) return t;
            throw new AssertionError("expected the stream to fail, got " + o);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** What has arrived and not been taken (tests check it after the server is idle). */
    public int pending() {
        return received.size();
    }

    private Object take(int seconds) {
        try {
            Object o = received.poll(seconds, TimeUnit.SECONDS);
            if (o == null) throw new AssertionError("no response within " + seconds + " s");
            if (o instanceof Throwable t) throw new AssertionError("stream failed: " + t, t);
            return o;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private boolean closed;

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        if (sotw != null) sotw.onCompleted();
        if (delta != null) delta.onCompleted();
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
