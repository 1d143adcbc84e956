package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both socket layers an {@link AdsServer} can run on (Netty's native epoll where it loads, the JDK's NIO when asked or
 * elsewhere), seen from clients: a connection past {@code maxConnections} is closed as it is accepted and counted, the
 * others keep being served, a freed slot takes a new client, and the configured number of I/O threads serves them.
 */
class ServerTransportTest {

    static final int MAX_CONNECTIONS = 3;
    static final int IO_THREADS = 2;

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final List<AutoCloseable> open = new ArrayList<>();
    AdsServer server;

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : open) c.close();
        if (server != null) server.close();
        System.clearProperty(ServerTransport.PROPERTY);
    }

    private void start(String transport) throws Exception {
        if (transport.equals("nio")) System.setProperty(ServerTransport.PROPERTY, "nio");
        else
            assumeThat(Epoll.isAvailable())
                    .as("the native epoll transport loads here")
                    .isTrue();
        AdsLimits limits = AdsLimits.DEFAULTS.withMaxConnections(MAX_CONNECTIONS);
        server = new AdsServer(
                        new AdsOptions(
                                "transport-" + transport,
                                "127.0.0.1",
                                0,
                                Duration.ZERO,
                                Duration.ZERO,
                                limits,
                                Duration.ZERO,
                                Duration.ZERO,
                                IO_THREADS),
                        ResourceTypes.of(List.of(AdsDrainTest.THING)),
                        meters)
                .start();
        server.markReady("test");
        change("1");
        assertThat(server.transportKind()).isEqualTo(transport);
    }

    private void change(String value) {
        server.execute(() -> server.engine()
                .applyChange(0, () -> server.engine().put(AdsDrainTest.THING, new AdsDrainTest.Thing("a", value))));
        server.idle().join();
    }

    /** The client receives the change to {@code value} and ACKs it. */
    private static void receives(AdsTestClient c, String value) throws Exception {
        DiscoveryResponse r = c.next();
        assertThat(r.getResources(0)
                        .unpack(com.google.protobuf.StringValue.class)
                        .getValue())
                .isEqualTo("a=" + value);
        c.ack(r, List.of());
    }

    private AdsTestClient client(String id) {
        AdsTestClient c =
                new AdsTestClient(server.port(), Node.newBuilder().setId(id).build()).openSotw();
        open.add(c);
        return c;
    }

    /** Subscribes and reads the one resource: the client is served end to end. */
    private static void served(AdsTestClient c) {
        c.sotw(AdsDrainTest.THING.typeUrl(), List.of(), "", "");
        DiscoveryResponse r = c.next();
        assertThat(r.getResourcesCount()).isEqualTo(1);
        c.ack(r, List.of());
    }

    private double refused() {
        var counter = meters.find("meshbridge." + server.options().server() + ".limits")
                .tag("limit", "maxConnections")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private long ioThreads() {
        String prefix = "meshbridge-" + server.options().server() + "-io-";
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(prefix))
                .count();
    }

    @ParameterizedTest
    @ValueSource(strings = {"epoll", "nio"})
    void pastMaxConnections_closedAtAccept_othersServed_freedSlotTakesANewClient(String transport) throws Exception {
        start(transport);
        List<AdsTestClient> clients = new ArrayList<>();
        for (int i = 0; i < MAX_CONNECTIONS; i++) {
            AdsTestClient c = client("c" + i);
            served(c);
            clients.add(c);
        }
        // the next connection is closed by the server before any HTTP/2 exchange: its first read sees the end
        try (Socket extra = new Socket()) {
            extra.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
            extra.setSoTimeout(10_000);
            InputStream in = extra.getInputStream();
            assertThat(in.read())
                    .as("a connection past maxConnections is closed")
                    .isEqualTo(-1);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> refused() == 1.0);
        change("2");
        for (AdsTestClient c : clients) receives(c, "2"); // the admitted ones are still served
        assertThat(ioThreads())
                .as("I/O threads serving %d connections", MAX_CONNECTIONS)
                .isEqualTo(IO_THREADS);

        clients.get(0).close();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            AdsTestClient again = client("again-" + System.nanoTime());
            served(again);
        });
        assertThat(refused()).isEqualTo(1.0);
    }
}
