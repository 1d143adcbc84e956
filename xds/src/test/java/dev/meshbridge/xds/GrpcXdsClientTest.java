package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.AdsClientView;
import dev.meshbridge.core.model.Endpoint;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * grpc-java's own xDS client (grpc-xds) resolves {@code xds:///<host>} through the bridge and makes real RPCs to real
 * gRPC backends whose instances the catalog got as a ZooKeeper watcher sends them.
 */
class GrpcXdsClientTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final XdsTestBed bed = new XdsTestBed();
    private final Backends backends = new Backends();

    @AfterEach
    void close() {
        backends.close();
        bed.close();
    }

    private static Endpoint app(Backends.Backend b) {
        return Upserts.dubboAppInstance("127.0.0.1", b.port()).build();
    }

    private static Endpoint.Builder appBuilder(Backends.Backend b) {
        return Upserts.dubboAppInstance("127.0.0.1", b.port());
    }

    @Test
    void dubboApplicationService_rpcsReachItsInstances_andAnAddedBackend() {
        Backends.Backend a = backends.start("a");
        Backends.Backend b = backends.start("b");
        bed.send(Upserts.dubboApplication("shop", List.of(app(a), app(b))));
        ManagedChannel channel = backends.xdsChannel("shop.dubbo", bed.server.port(), "grpc-e2e-1");

        awaitAnswering(channel, Set.of("a", "b"));

        Backends.Backend c = backends.start("c");
        bed.send(Upserts.dubboApplication("shop", List.of(app(a), app(b), app(c))));
        awaitAnswering(channel, Set.of("a", "b", "c"));
    }

    /** What happens in the registry to backend a. */
    enum Change {
        REMOVED,
        DISABLED,
        WEIGHT_ZERO
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void backendRemovedDisabledOrWeightZero_getsNoMoreRpcs(Change change) {
        Backends.Backend a = backends.start("a");
        Backends.Backend b = backends.start("b");
        bed.send(Upserts.dubboApplication("shop", List.of(app(a), app(b))));
        ManagedChannel channel = backends.xdsChannel("shop.dubbo", bed.server.port(), "grpc-e2e-" + change);
        awaitAnswering(channel, Set.of("a", "b"));

        List<Endpoint> now = switch (change) {
            case REMOVED -> List.of(app(b));
            case DISABLED -> List.of(appBuilder(a).enabled(false).build(), app(b));
            case WEIGHT_ZERO -> List.of(appBuilder(a).weight(0).build(), app(b));
        };
        bed.send(Upserts.dubboApplication("shop", now));

        assertNoRpcReaches(channel, a, "b");
    }

    @Test
    void springCloudService_resolvesByHostAndByHostPort() {
        Backends.Backend a = backends.start("orders-a");
        Backends.Backend b = backends.start("orders-b");
        bed.send(Upserts.springCloud(
                "orders",
                List.of(
                        Upserts.springInstance("127.0.0.1", a.port()).build(),
                        Upserts.springInstance("127.0.0.1", b.port()).build())));

        ManagedChannel byHost = backends.xdsChannel("orders.zookeeper", bed.server.port(), "grpc-e2e-5");
        ManagedChannel byHostPort = backends.xdsChannel("orders.zookeeper:80", bed.server.port(), "grpc-e2e-6");

        awaitAnswering(byHost, Set.of("orders-a", "orders-b"));
        awaitAnswering(byHostPort, Set.of("orders-a", "orders-b"));
        AdsClientView client = bed.server.debugView().client("grpc-e2e-5");
        assertThat(client.userAgent()).startsWith("gRPC Java");
        assertThat(client.types().keySet()).containsExactly("cds", "eds", "lds", "rds");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(bed.server
                                .debugView()
                                .client("grpc-e2e-5")
                                .types()
                                .values())
                        .allSatisfy(t -> assertThat(t.status()).isEqualTo("SYNCED")));
        assertThat(bed.meters.find("meshbridge.xds.nacks").counters())
                .as("grpc-java accepted every resource")
                .allSatisfy(n -> assertThat(n.count()).isZero());
    }

    @Test
    void bridgeRestart_clientReconnects_andRpcsKeepWorking() throws Exception {
        Backends.Backend a = backends.start("a");
        bed.send(Upserts.dubboApplication("shop", List.of(app(a))));
        ManagedChannel channel = backends.xdsChannel("shop.dubbo", bed.server.port(), "grpc-e2e-7");
        awaitAnswering(channel, Set.of("a"));
        int port = bed.server.port();

        bed.server.close();
        assertThat(Backends.who(channel))
                .as("the client keeps its last good state")
                .isEqualTo("a");
        try (XdsTestBed again = new XdsTestBed(XdsOptions.loopbackEphemeral().withAddress("127.0.0.1", port))) {
            Backends.Backend b = backends.start("b");
            again.send(Upserts.dubboApplication("shop", List.of(app(a), app(b))));
            awaitAnswering(channel, Set.of("a", "b"));
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Waits until RPCs have been answered by exactly these backends (and no others). */
    private static void awaitAnswering(ManagedChannel channel, Set<String> expected) {
        Set<String> seen = new HashSet<>();
        await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .untilAsserted(() -> {
                    String who = Backends.who(channel);
                    if (!expected.contains(who)) seen.clear(); // an old backend: start over
                    seen.add(who);
                    assertThat(seen).isEqualTo(expected);
                });
    }

    /**
     * Waits until 20 RPCs in a row avoid {@code gone}, then makes 40 more: none may reach it (its own call counter is
     * the witness).
     */
    private static void assertNoRpcReaches(ManagedChannel channel, Backends.Backend gone, String remaining) {
        int[] streak = {0};
        await().atMost(WAIT).pollInterval(Duration.ZERO).until(() -> {
            streak[0] = Backends.who(channel).equals(remaining) ? streak[0] + 1 : 0;
            return streak[0] >= 20;
        });
        long before = gone.calls.get();
        for (int i = 0; i < 40; i++) assertThat(Backends.who(channel)).isEqualTo(remaining);
        assertThat(gone.calls.get()).isEqualTo(before);
    }
}
