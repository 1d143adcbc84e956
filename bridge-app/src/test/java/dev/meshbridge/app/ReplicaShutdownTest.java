package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.ads.AdsTestClient;
import dev.meshbridge.registry.zookeeper.ZkServer;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.Status;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two replicas behind one Service ({@link ServiceBalancer}: new connections go to ready replicas), a real ZooKeeper,
 * real gRPC backends and grpc-java's own xDS client making calls throughout:
 *
 * <ul>
 *   <li>the replica holding the client's xDS stream shuts down as on SIGTERM ({@code /ready} 503, the drain period,
 *       GOAWAY and the end of every stream): no call fails, the client is on the other replica, ACKing there the very
 *       versions it held, and follows the registry from there;
 *   <li>{@code maxConnectionAge} spreads long-lived streams over a replica added later, and applies to the MCP server
 *       too.
 * </ul>
 */
class ReplicaShutdownTest {

    private static final Logger log = LoggerFactory.getLogger(ReplicaShutdownTest.class);
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String ORDERS = "orders.services.zookeeper";
    private static final String GREETER = "org.demo.greeter.dubbo";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private ZkServer zk;
    private ZookeeperApps apps;
    private final Map<String, IdentityBackend> backends = new HashMap<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        zk = new ZkServer();
        apps = new ZookeeperApps(zk);
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) closeables.get(i).close();
        for (IdentityBackend b : backends.values()) b.close();
        apps.close();
        zk.close();
    }

    private String config(String more) {
        return ReplicasAgreeTest.replicaConfig("""
                        - type: zookeeper
                          name: zk
                          addresses: ["%s"]
                        """.formatted(zk.address())) + more;
    }

    private Bridge replica(String name, String config) throws Exception {
        Bridge b = ReplicasAgreeTest.startReplica(name, config);
        closeables.add(b);
        return b;
    }

    private static ServiceBalancer.Replica xdsOf(String name, Bridge b) {
        return new ServiceBalancer.Replica(name, b.xdsPort(), b.adminPort());
    }

    private IdentityBackend backend(String name) throws Exception {
        IdentityBackend b = new IdentityBackend(name);
        backends.put(name, b);
        return b;
    }

    @Test
    void oneOfTwoReplicasShutsDown_noRpcFails_theClientMovesAndIsSentNothingNew() throws Exception {
        apps.registerDubboInterface(
                "org.demo.Greeter", "greeter", backend("greeter-1").port(), Map.of());
        apps.registerDubboInterface(
                "org.demo.Greeter", "greeter", backend("greeter-2").port(), Map.of());
        apps.registerSpring("orders", backend("orders-1").port());
        apps.registerSpring("orders", backend("orders-2").port());
        Bridge a = replica("replica-a", config(""));
        Bridge b = replica("replica-b", config(""));
        ServiceBalancer service = new ServiceBalancer(List.of(xdsOf("a", a), xdsOf("b", b)));
        closeables.add(service);
        await().atMost(WAIT).until(() -> service.readyNames().size() == 2);
        GrpcJavaClient client = new GrpcJavaClient(service.port());
        closeables.add(client);
        client.awaitAnsweredBy(ORDERS, "orders-1", "orders-2");
        client.awaitAnsweredBy(GREETER, "greeter-1", "greeter-2");

        // grpc-java keeps one xDS client, hence one stream, per channel target: the Service may put them on either
        String node = client.nodeId();
        await().atMost(WAIT)
                .until(() -> streamsOf(a, node).size() + streamsOf(b, node).size() == 2
                        && allSynced(streamsOf(a, node), streamsOf(b, node)));
        Bridge holder = streamsOf(a, node).isEmpty() ? b : a;
        Bridge other = holder == a ? b : a;
        List<String> heldVersions = ackedVersions(streamsOf(a, node), streamsOf(b, node));
        Set<Long> alreadyOnOther = streamIds(streamsOf(other, node));
        assertThat(heldVersions).hasSize(2).allSatisfy(v -> assertThat(v).contains("cds=", "eds=", "lds=", "rds="));

        client.startTraffic(List.of(ORDERS, GREETER));
        ProxylessClient.Calls atShutdown;
        ProxylessClient.Calls all;
        long shutdownMillis;
        try {
            client.awaitTraffic(20);
            atShutdown = client.traffic();
            long t0 = System.nanoTime();
            Thread stopping = Thread.ofPlatform().name("sigterm").start(holder::shutdownGracefully);
            // /ready answers 503 at once, while the replica still serves
            await().atMost(WAIT).until(() -> status(holder, "/ready") == 503);
            assertThat(status(holder, "/healthz")).isEqualTo(200);
            // the client is on the other replica, holding and ACKing there what it held
            await().atMost(WAIT).until(() -> streamsOf(other, node).size() == 2 && allSynced(streamsOf(other, node)));
            assertThat(stopping.join(WAIT)).as("the replica stopped").isTrue();
            shutdownMillis = (System.nanoTime() - t0) / 1_000_000;
            List<JsonNode> after = streamsOf(other, node);
            assertThat(ackedVersions(after))
                    .as("versions the client's xDS streams ACK on the replica they moved to")
                    .isEqualTo(heldVersions);
            List<JsonNode> moved = after.stream()
                    .filter(st -> !alreadyOnOther.contains(st.path("stream").asLong()))
                    .toList();
            assertThat(moved).isNotEmpty();
            Map<String, Long> responses = responses(moved);
            log.info(
                    "{} xDS stream(s) moved from the stopping replica: responses the other replica sent them per type"
                            + " {} (versions held {})",
                    moved.size(),
                    responses,
                    heldVersions);
            assertThat(responses.values())
                    .as("responses to the moved streams: they presented the versions they held, nothing new was due")
                    .allSatisfy(n -> assertThat(n).isZero());

            // the client follows the registry through the remaining replica
            apps.registerSpring("orders", backend("orders-3").port());
            await().atMost(WAIT).until(() -> client.traffic().answeredBy("orders-3") > 0);
            client.awaitTraffic(20);
            io.micrometer.core.instrument.Timer eventToAck =
                    other.meters().get("meshbridge.xds.event.to.ack").timer();
            await().atMost(WAIT).until(() -> eventToAck.count() > 0);
            log.info(
                    "registry event to the last subscribed client's ACK on the remaining replica: {} changes, max {}"
                            + " ms",
                    eventToAck.count(),
                    eventToAck.max(java.util.concurrent.TimeUnit.MILLISECONDS));
        } finally {
            all = client.stopTraffic();
        }
        log.info(
                "RPCs while one of two replicas shut down (drain 1s): answered={} failed={} (answered before the"
                        + " shutdown began={}), shutdown took {} ms",
                all.answered(),
                all.failures().size(),
                atShutdown.answered(),
                shutdownMillis);
        assertThat(all.failures())
                .as("RPCs that failed while a replica shut down")
                .isEmpty();
        assertThat(all.answeredBy()).containsKeys("orders-1", "orders-2", "orders-3", "greeter-1", "greeter-2");
    }

    @Test
    void maxConnectionAge_spreadsStreamsOverAReplicaAddedLater_andAppliesToTheMcpServer() throws Exception {
        apps.registerSpring("orders", backend("orders-1").port());
        String config = config("")
                .replace("port: 0}\nmcp", "port: 0, maxConnectionAge: 2s}\nmcp")
                .replace("minPushInterval: 0s}", "minPushInterval: 0s, maxConnectionAge: 2s}");
        assertThat(config).contains("port: 0, maxConnectionAge: 2s}", "minPushInterval: 0s, maxConnectionAge: 2s}");
        Bridge a = replica("replica-a", config);
        ServiceBalancer service = new ServiceBalancer(List.of(xdsOf("a", a)));
        closeables.add(service);
        List<GrpcJavaClient> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            GrpcJavaClient c = new GrpcJavaClient(service.port());
            closeables.add(c);
            clients.add(c);
            c.awaitAnsweredBy(ORDERS, "orders-1");
        }
        // scale-up: a second replica joins the Service; only connections made from now on can reach it
        Bridge b = replica("replica-b", config);
        service.add(xdsOf("b", b));
        await().atMost(WAIT).until(() -> service.readyNames().size() == 2);
        // every connection reaches its maximum age (2 s), gets GOAWAY, and its stream ends a grace later (1 s); each
        // client reconnects through the Service, which now balances over both replicas
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            int onA = 0;
            int onB = 0;
            for (GrpcJavaClient c : clients) {
                if (!streamsOf(a, c.nodeId()).isEmpty()) onA++;
                if (!streamsOf(b, c.nodeId()).isEmpty()) onB++;
            }
            return onA >= 1 && onB >= 1;
        });
        for (GrpcJavaClient c : clients) {
            assertThat(c.call(ORDERS, 4).failures()).isEmpty();
        }

        // the MCP server ends a connection at its maximum age too: an istiod stream is closed and must reconnect
        try (AdsTestClient istiod =
                new AdsTestClient(a.mcpPort(), Node.newBuilder().setId("istiod").build()).openSotw()) {
            istiod.sotw("networking.istio.io/v1/ServiceEntry", List.of(), "", "");
            assertThat(istiod.next().getResourcesCount()).isEqualTo(1);
            Status ended = Status.fromThrowable(istiod.failure());
            assertThat(ended.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        }
    }

    // ------------------------------------------------------------------ what the replicas' admin pages show

    private static int status(Bridge b, String path) throws Exception {
        return HTTP.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + b.adminPort() + path))
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    /** The client's streams on a replica, from its {@code /debug/xds} page; empty once it is stopped. */
    private static List<JsonNode> streamsOf(Bridge b, String nodeId) throws Exception {
        HttpResponse<String> r;
        try {
            r = HTTP.send(
                    HttpRequest.newBuilder(
                                    URI.create("http://127.0.0.1:" + b.adminPort() + "/debug/xds?node=" + nodeId))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            return List.of();
        }
        List<JsonNode> out = new ArrayList<>();
        JSON.readTree(r.body()).path("clients").forEach(out::add);
        return out;
    }

    @SafeVarargs
    private static boolean allSynced(List<JsonNode>... replicas) {
        boolean any = false;
        for (List<JsonNode> streams : replicas) {
            for (JsonNode s : streams) {
                any = true;
                for (JsonNode t : s.path("types")) {
                    if (!t.path("status").asText().equals("SYNCED")) return false;
                }
            }
        }
        return any;
    }

    /** Per stream, the version it last ACKed of each type ({@code cds=..., eds=...}), sorted. */
    @SafeVarargs
    private static List<String> ackedVersions(List<JsonNode>... replicas) {
        List<String> out = new ArrayList<>();
        for (List<JsonNode> streams : replicas) {
            for (JsonNode s : streams) {
                Map<String, String> byType = new TreeMap<>();
                s.path("types")
                        .fields()
                        .forEachRemaining(e -> byType.put(
                                e.getKey(),
                                e.getValue().path("lastAckedVersion").asText()));
                out.add(byType.toString());
            }
        }
        out.sort(null);
        return out;
    }

    private static Set<Long> streamIds(List<JsonNode> streams) {
        Set<Long> ids = new java.util.HashSet<>();
        streams.forEach(s -> ids.add(s.path("stream").asLong()));
        return ids;
    }

    private static Map<String, Long> responses(List<JsonNode> streams) {
        Map<String, Long> out = new TreeMap<>();
        for (JsonNode s : streams) {
            s.path("types")
                    .fields()
                    .forEachRemaining(e ->
                            out.merge(e.getKey(), e.getValue().path("responses").asLong(), Long::sum));
        }
        return out;
    }
}
