package dev.meshbridge.app;

import com.google.protobuf.Empty;
import com.google.protobuf.StringValue;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real gRPC backend for end-to-end tests: a Netty server on 127.0.0.1 and a free port whose one unary method,
 * {@code meshbridge.e2e.Identity/Name}, answers with the backend's own name and counts the calls it served.
 */
final class IdentityBackend implements AutoCloseable {

    static final MethodDescriptor<Empty, StringValue> NAME = MethodDescriptor.<Empty, StringValue>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("meshbridge.e2e.Identity", "Name"))
            .setRequestMarshaller(ProtoUtils.marshaller(Empty.getDefaultInstance()))
            .setResponseMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
            .build();

    private final String name;
    private final Server server;
    private final AtomicLong served = new AtomicLong();

    IdentityBackend(String name) throws IOException {
        this.name = name;
        ServerServiceDefinition identity = ServerServiceDefinition.builder("meshbridge.e2e.Identity")
                .addMethod(NAME, ServerCalls.asyncUnaryCall((request, reply) -> {
                    served.incrementAndGet();
                    reply.onNext(StringValue.of(name));
                    reply.onCompleted();
                }))
                .build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(identity)
                .build()
                .start();
    }

    String name() {
        return name;
    }

    int port() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    /** RPCs this backend has answered so far. */
    long served() {
        return served.get();
    }

    /** One real RPC over {@code channel}; the name of the backend that answered it. */
    static String ask(Channel channel) {
        return ClientCalls.blockingUnaryCall(
                        channel,
                        NAME,
                        CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                        Empty.getDefaultInstance())
                .getValue();
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
