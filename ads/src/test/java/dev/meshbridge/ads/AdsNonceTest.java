package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which nonce a client's request answers, as the client sees it: an ACK of any of the last responses sent counts,
 * the newest one makes the stream synced, and a nonce that is not exactly one the server sent (the same number written
 * another way, istiod's first-request timestamp) is no ACK at all. Real gRPC transport, raw ADS streams.
 */
class AdsNonceTest {

    static final ResourceType THING = AdsDrainTest.THING;

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    AdsServer server;
    AdsTestClient client;

    @BeforeEach
    void start() throws Exception {
        server = AdsDrainTest.started("nonce", meters, THING);
        server.markReady("test");
        client = new AdsTestClient(server.port(), Node.newBuilder().setId("n").build());
    }

    @AfterEach
    void stop() {
        if (client != null) client.close();
        server.close();
    }

    private void put(String value) throws Exception {
        server.execute(() -> server.engine().put(THING, new AdsDrainTest.Thing("a", value)));
        server.idle().get(60, TimeUnit.SECONDS);
    }

    private static String version(String value) {
        return Hash64.toHex(new AdsDrainTest.Thing("a", value).versionHash());
    }

    private double acks() {
        return meters.counter("meshbridge.nonce.acks", "type", "thing").count();
    }

    private AdsClientView.TypeStatus status() {
        List<AdsClientView> clients = server.query(() -> server.engine().clients("", ""));
        assertThat(clients).hasSize(1);
        return clients.get(0).types().values().iterator().next();
    }

    /**
     * Sends a Delta request answering {@code nonce}. The server handles a stream's requests in order, so once a later
     * request's effect is seen, this one was handled too: the tests wait on effects, never on the server being idle
     * (a request may still be on the wire when {@link AdsServer#idle()} completes).
     */
    private void answer(String nonce) {
        client.delta(
                DeltaDiscoveryRequest.newBuilder().setTypeUrl(THING.typeUrl()).setResponseNonce(nonce));
    }

    private void awaitAcks(int n) {
        await().atMost(Duration.ofSeconds(60)).until(() -> acks() >= n);
        assertThat(acks()).isEqualTo(n);
    }

    @Test
    void delta_anAckOfARecentResponseCounts_theNewestSyncs_andANonceWrittenAnotherWayIsNoAck() throws Exception {
        put("1");
        client.openDelta().deltaSubscribe(THING.typeUrl(), List.of("a"), Map.of());
        DeltaDiscoveryResponse first = client.nextDelta();
        put("2");
        DeltaDiscoveryResponse second = client.nextDelta();
        put("3");
        DeltaDiscoveryResponse third = client.nextDelta();
        assertThat(third.getResources(0).getVersion()).isEqualTo(version("3"));
        assertThat(List.of(first.getNonce(), second.getNonce(), third.getNonce()))
                .doesNotHaveDuplicates();

        // the second response's nonce with a leading zero, a Go timestamp as istiod's first request carries, the
        // nonce in upper case with a letter more: none is an ACK; then the second's own nonce is, and only it counts
        answer("0" + second.getNonce());
        answer("2024-05-01 10:00:00.123 +0000 UTC m=+0.01");
        answer(second.getNonce().toUpperCase(java.util.Locale.ROOT) + "Z");
        answer(second.getNonce());
        awaitAcks(1);
        assertThat(status().lastAckedVersion()).isEqualTo(second.getSystemVersionInfo());
        assertThat(status().status()).isEqualTo("STALE"); // the third is not acknowledged yet

        answer(third.getNonce());
        awaitAcks(2);
        assertThat(status().status()).isEqualTo("SYNCED");
        assertThat(status().lastAckedVersion()).isEqualTo(third.getSystemVersionInfo());
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(client.pending()).isZero();
    }

    @Test
    void sotw_aRequestAnsweringAnOlderResponse_doesNotChangeTheSubscription_theNewestDoes() throws Exception {
        put("1");
        client.openSotw().sotw(THING.typeUrl(), List.of("a"), "", "");
        DiscoveryResponse first = client.next();
        put("2");
        DiscoveryResponse second = client.next();
        assertThat(second.getResourcesCount()).isEqualTo(1);

        // answers the first response (crossed the second on the wire) and drops "a": an ACK of the first, ignored as a
        // subscription change; had it been taken, the server would answer it with no resource and ignore the next
        // requests, which then answer an older response
        client.sotw(THING.typeUrl(), List.of("b"), first.getVersionInfo(), first.getNonce());
        // the newest nonce written with a leading zero: not the newest response, also ignored, and no ACK
        client.sotw(THING.typeUrl(), List.of("b"), second.getVersionInfo(), "0" + second.getNonce());
        // answering the newest response with a new subscription takes effect: "a" is still there, "b" is added
        client.sotw(THING.typeUrl(), List.of("a", "b"), second.getVersionInfo(), second.getNonce());
        DiscoveryResponse third = client.next();
        assertThat(third.getResourcesCount()).isEqualTo(1);
        assertThat(status().sampleNames()).containsExactlyInAnyOrder("a", "b");
        awaitAcks(2); // the first's and the second's; not the one written with a leading zero
        server.idle().get(60, TimeUnit.SECONDS);
        assertThat(client.pending()).isZero();
    }
}
