package dev.meshbridge.xds;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.xds.XdsNameResolverProvider;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Real gRPC backends on 127.0.0.1 (each answers with its own name and counts its calls), and gRPC channels that
 * resolve {@code xds:///<host>} through the bridge with grpc-java's own xDS client.
 */
final class Backends implements AutoCloseable {

    private static final AtomicInteger SCHEMES = new AtomicInteger();

    static final MethodDescriptor<String, String> WHO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("meshbridge.test.Backend/Who")
            .setRequestMarshaller(new Utf8())
            .setResponseMarshaller(new Utf8())
            .build();

    /** One backend: a real gRPC server. */
    static final class Backend {
        final String name;
        final Server server;
        final AtomicLong calls = new AtomicLong();

        Backend(String name) {
            this.name = name;
            ServerServiceDefinition service = ServerServiceDefinition.builder("meshbridge.test.Backend")
                    .addMethod(WHO, ServerCalls.asyncUnaryCall((request, response) -> {
                        calls.incrementAndGet();
                        response.onNext(name);
                        response.onCompleted();
                    }))
                    .build();
            try {
                server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                        .addService(service)
                        .build()
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        int port() {
            return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
        }
    }

    private final List<Backend> backends = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    Backend start(String name) {
        Backend b = new Backend(name);
        backends.add(b);
        return b;
    }

    /**
     * A channel to {@code xds:///<target>} whose xDS client (grpc-xds, SotW over ADS) talks to the bridge at {@code
     * xdsPort}, with its own bootstrap so several tests in one JVM do not share one.
     */
    ManagedChannel xdsChannel(String target, int xdsPort, String nodeId) {
        return xdsChannel(target, "127.0.0.1:" + xdsPort, List.of(Map.of("type", "insecure")), nodeId);
    }

    /** The same, with the bootstrap's {@code server_uri} and {@code channel_creds} (TLS) of the test's choosing. */
    ManagedChannel xdsChannel(String target, String serverUri, List<Map<String, ?>> channelCreds, String nodeId) {
        Map<String, ?> bootstrap = Map.of(
                "xds_servers",
                List.of(Map.of(
                        "server_uri", serverUri, "channel_creds", channelCreds, "server_features", List.of("xds_v3"))),
                "node",
                Map.of("id", nodeId, "cluster", "e2e"));
        String scheme = "xds-e2e-" + SCHEMES.incrementAndGet();
        ManagedChannel channel = NettyChannelBuilder.forTarget(scheme + ":///" + target)
                .nameResolverFactory(XdsNameResolverProvider.createForTest(scheme, bootstrap))
                .usePlaintext()
                .build();
        channels.add(channel);
        return channel;
    }

    /** One real RPC; returns the name of the backend that answered. */
    static String who(ManagedChannel channel) {
        return ClientCalls.blockingUnaryCall(
                channel, WHO, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), "who");
    }

    @Override
    public void close() {
        for (ManagedChannel c : channels) c.shutdownNow();
        for (Backend b : backends) b.server.shutdownNow();
        try {
            for (ManagedChannel c : channels) c.awaitTermination(5, TimeUnit.SECONDS);
            for (Backend b : backends) b.server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Utf8 implements MethodDescriptor.Marshaller<String> {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
