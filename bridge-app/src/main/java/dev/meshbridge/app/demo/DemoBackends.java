package dev.meshbridge.app.demo;

import com.google.protobuf.StringValue;
import com.sun.net.httpserver.HttpServer;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The demo's real backends on 127.0.0.1 and free ports: instances of a Triple (gRPC) service, whose one unary method
 * answers with the instance's name, and instances of an HTTP service, whose every path answers with the instance's
 * name. {@link DemoRegistrations} registers them the way their frameworks do.
 */
public final class DemoBackends implements AutoCloseable {

    /** The Triple service: Triple's path is {@code /<interface>/<method>}, as gRPC's is {@code /<service>/<method>}. */
    public static final String GREETER_INTERFACE = "org.apache.dubbo.samples.GreeterService";

    /** {@code GreeterService/greet}: a name in, a greeting naming the instance that answered out. */
    public static final MethodDescriptor<StringValue, StringValue> GREET =
            MethodDescriptor.<StringValue, StringValue>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(GREETER_INTERFACE, "greet"))
                    .setRequestMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
                    .build();

    /** The text every greeting starts with; the instance's name follows it. */
    public static final String FROM = " from ";

    /** One running instance. */
    public record Instance(String name, int port) {}

    private final List<Server> grpc = new ArrayList<>();
    private final List<HttpServer> http = new ArrayList<>();
    private final List<Instance> greeters = new ArrayList<>();
    private final List<Instance> webs = new ArrayList<>();

    /** Starts {@code greeters} Triple instances and {@code webs} HTTP instances. */
    public static DemoBackends start(List<String> greeterNames, List<String> webNames) throws IOException {
        DemoBackends b = new DemoBackends();
        try {
            for (String n : greeterNames) b.greeters.add(new Instance(n, b.startGreeter(n)));
            for (String n : webNames) b.webs.add(new Instance(n, b.startWeb(n)));
            return b;
        } catch (IOException | RuntimeException e) {
            b.close();
            throw e;
        }
    }

    public List<Instance> greeters() {
        return List.copyOf(greeters);
    }

    public List<Instance> webs() {
        return List.copyOf(webs);
    }

    private int startGreeter(String name) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder(GREETER_INTERFACE)
                .addMethod(GREET, ServerCalls.asyncUnaryCall((request, reply) -> {
                    reply.onNext(StringValue.of("hello " + request.getValue() + FROM + name));
                    reply.onCompleted();
                }))
                .build();
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(service)
                .build()
                .start();
        grpc.add(s);
        return ((InetSocketAddress) s.getListenSockets().get(0)).getPort();
    }

    private int startWeb(String name) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        s.createContext("/", exchange -> {
            byte[] body = ("orders-service instance " + name + "\n").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/plain; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream o = exchange.getResponseBody()) {
                o.write(body);
            }
        });
        s.start();
        http.add(s);
        return s.getAddress().getPort();
    }

    @Override
    public void close() {
        for (Server s : grpc) s.shutdownNow();
        for (Server s : grpc) {
            try {
                s.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        grpc.clear();
        for (HttpServer s : http) s.stop(0);
        http.clear();
    }
}
