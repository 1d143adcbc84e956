package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The protocol behaviour both servers promise (the ads module's README), checked through a server's public gRPC
 * service with a raw ADS client. The xds and mcp-server modules run it against their servers by implementing {@link
 * #start}: the xDS server with clusters (CDS), the MCP server with ServiceEntries under both type-URL generations
 * istiod uses.
 */
public abstract class AdsConformanceSuite {

    /** A running server whose catalog the suite changes, serving one full-state type. */
    protected interface Subject extends AutoCloseable {

        int port();

        /** Every type URL the type is asked for by (the MCP server: v1alpha3 and v1). */
        List<String> typeUrls();

        /**
         * Adds a catalog service, or changes it: each variant (0, 1, 2...) gives the service's resource another
         * content under the same name. Returns the resource name.
         */
        String put(String service, int variant);

        void remove(String service);

        /** The name of a resource in a SotW response. */
        String nameOf(Any resource);

        /** Lets the server answer (the registries have synced). */
        void markReady();

        /** Completes once the server has applied everything given to it and pushed what that changed. */
        void idle();

        /** NACKs the server counted. */
        double nacks();

        /** The node the clients identify as. */
        Node node();

        @Override
        void close();
    }

    /**
     * Starts a server.
     *
     * @param hold true to hold first answers until {@link Subject#markReady()}, false to answer at once
     */
    protected abstract Subject start(boolean hold) throws Exception;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) open.get(i).close();
        open.clear();
    }

    private Subject subject(boolean hold) throws Exception {
        Subject s = start(hold);
        open.add(s);
        return s;
    }

    private AdsTestClient client(Subject s) {
        AdsTestClient c = new AdsTestClient(s.port(), s.node());
        open.add(c);
        return c;
    }

    private List<String> names(Subject s, DiscoveryResponse r) {
        List<String> out = new ArrayList<>();
        for (Any a : r.getResourcesList()) out.add(s.nameOf(a));
        return out;
    }

    private static List<String> names(DeltaDiscoveryResponse r) {
        return r.getResourcesList().stream().map(Resource::getName).toList();
    }

    @Test
    void sotw_wildcard_getsEverything_underEachTypeUrl_andEachChangeAsTheWholeSet() throws Exception {
        Subject s = subject(false);
        String a = s.put("alpha", 0);
        String b = s.put("beta", 0);
        s.idle();
        for (String url : s.typeUrls()) {
            AdsTestClient c = client(s).openSotw();
            c.sotw(url, List.of(), "", "");
            DiscoveryResponse first = c.next();
            assertThat(first.getTypeUrl()).isEqualTo(url);
            assertThat(names(s, first)).containsExactlyInAnyOrder(a, b);
            c.ack(first, List.of());

            s.remove("beta");
            DiscoveryResponse second = c.next();
            assertThat(names(s, second)).containsExactly(a);
            assertThat(second.getVersionInfo()).isNotEqualTo(first.getVersionInfo());
            c.ack(second, List.of());
            s.put("beta", 0);
            assertThat(names(s, c.next())).containsExactlyInAnyOrder(a, b);
        }
    }

    @Test
    void sotw_named_getsOnlyThoseThatExist() throws Exception {
        Subject s = subject(false);
        String a = s.put("alpha", 0);
        s.put("beta", 0);
        s.idle();
        AdsTestClient c = client(s).openSotw();
        String url = s.typeUrls().get(0);
        c.sotw(url, List.of(a, "absent"), "", "");
        assertThat(names(s, c.next())).containsExactly(a);
    }

    @Test
    void delta_wildcard_getsEverything_thenChangesAndRemovals() throws Exception {
        Subject s = subject(false);
        String a = s.put("alpha", 0);
        String b = s.put("beta", 0);
        s.idle();
        int round = 0;
        for (String url : s.typeUrls()) {
            round++;
            AdsTestClient c = client(s).openDelta();
            c.deltaSubscribe(url, List.of(), Map.of());
            DeltaDiscoveryResponse first = c.nextDelta();
            assertThat(first.getTypeUrl()).isEqualTo(url);
            assertThat(names(first)).containsExactlyInAnyOrder(a, b);
            c.deltaAck(first);

            s.put("alpha", round);
            DeltaDiscoveryResponse change = c.nextDelta();
            assertThat(names(change)).containsExactly(a);
            assertThat(change.getRemovedResourcesList()).isEmpty();
            c.deltaAck(change);

            s.remove("beta");
            DeltaDiscoveryResponse removal = c.nextDelta();
            assertThat(removal.getResourcesList()).isEmpty();
            assertThat(removal.getRemovedResourcesList()).containsExactly(b);
            c.deltaAck(removal);
            s.put("beta", 0);
        }
    }

    @Test
    void delta_namedSubscriptionToAnAbsentResource_isAnsweredAsRemoved() throws Exception {
        Subject s = subject(false);
        String a = s.put("alpha", 0);
        s.idle();
        AdsTestClient c = client(s).openDelta();
        String url = s.typeUrls().get(0);
        c.deltaSubscribe(url, List.of(a, "absent"), Map.of());
        List<String> got = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        while (got.isEmpty() || removed.isEmpty()) {
            DeltaDiscoveryResponse r = c.nextDelta();
            got.addAll(names(r));
            removed.addAll(r.getRemovedResourcesList());
            c.deltaAck(r);
        }
        assertThat(got).containsExactly(a);
        assertThat(removed).containsExactly("absent");

        // it appears later: sent as an addition (once served: a subscription that reaches the serving thread before
        // the change is answered as absent, then sent the addition, as the protocol allows; the serving thread runs
        // up to AdsServer.CLIENT_TURN client requests ahead of a queued change)
        String late = s.put("absent-later", 1);
        s.idle();
        c.delta(DeltaDiscoveryRequest.newBuilder().setTypeUrl(url).addResourceNamesSubscribe(late));
        DeltaDiscoveryResponse r = c.nextDelta();
        assertThat(names(r)).containsExactly(late);
    }

    @Test
    void delta_reconnectWithInitialVersions_getsOnlyWhatDiffers() throws Exception {
        Subject s = subject(false);
        String a = s.put("alpha", 0);
        String b = s.put("beta", 0);
        s.idle();
        String url = s.typeUrls().get(0);
        AdsTestClient first = client(s).openDelta();
        first.deltaSubscribe(url, List.of(), Map.of());
        DeltaDiscoveryResponse all = first.nextDelta();
        Map<String, String> held = new TreeMap<>();
        for (Resource r : all.getResourcesList()) held.put(r.getName(), r.getVersion());
        first.close();

        s.put("beta", 1);
        held.put("gone", "0123456789abcdef");
        s.idle();
        AdsTestClient second = client(s).openDelta();
        second.deltaSubscribe(url, List.of(), held);
        DeltaDiscoveryResponse diff = second.nextDelta();
        assertThat(names(diff)).containsExactly(b);
        assertThat(diff.getRemovedResourcesList()).containsExactly("gone");
        assertThat(held).containsKey(a);
    }

    @Test
    void sotw_reconnectWithTheVersionItHolds_isSentNothing() throws Exception {
        Subject s = subject(false);
        s.put("alpha", 0);
        s.idle();
        String url = s.typeUrls().get(0);
        AdsTestClient first = client(s).openSotw();
        first.sotw(url, List.of(), "", "");
        DiscoveryResponse held = first.next();
        first.close();

        AdsTestClient second = client(s).openSotw();
        second.sotw(url, List.of(), held.getVersionInfo(), "");
        s.idle();
        assertThat(second.pending()).isZero();
        // what changes after is pushed as usual
        String b = s.put("beta", 0);
        assertThat(names(s, second.next())).contains(b);
    }

    @Test
    void nack_keepsTheLastAcceptedState_isCounted_andNotResent() throws Exception {
        Subject s = subject(false);
        String a = s.put("alpha", 0);
        s.idle();
        String url = s.typeUrls().get(0);
        AdsTestClient c = client(s).openSotw();
        c.sotw(url, List.of(), "", "");
        DiscoveryResponse first = c.next();
        c.ack(first, List.of());
        String b = s.put("beta", 0);
        DiscoveryResponse rejected = c.next();
        c.nack(rejected, List.of(), first.getVersionInfo());
        s.idle();
        org.awaitility.Awaitility.await().until(() -> s.nacks() == 1.0);
        s.idle();
        assertThat(c.pending()).as("the rejected version is not sent again").isZero();

        String g = s.put("gamma", 0);
        assertThat(names(s, c.next())).containsExactlyInAnyOrder(a, b, g);
    }

    @Test
    void unknownTypeUrl_isAnsweredWithNoResources_sotwAndDelta() throws Exception {
        Subject s = subject(false);
        s.put("alpha", 0);
        s.idle();
        String unknown = "type.googleapis.com/meshbridge.conformance.NotServed";
        AdsTestClient c = client(s).openSotw();
        c.sotw(unknown, List.of(), "", "");
        DiscoveryResponse r = c.next();
        assertThat(r.getTypeUrl()).isEqualTo(unknown);
        assertThat(r.getResourcesList()).isEmpty();

        AdsTestClient d = client(s).openDelta();
        d.deltaSubscribe(unknown, List.of(), Map.of());
        DeltaDiscoveryResponse dr = d.nextDelta();
        assertThat(dr.getTypeUrl()).isEqualTo(unknown);
        assertThat(dr.getResourcesList()).isEmpty();
        assertThat(dr.getRemovedResourcesList()).isEmpty();
    }

    @Test
    void firstAnswers_areHeldUntilReady_thenCarryTheWholeCatalog() throws Exception {
        Subject s = subject(true);
        String a = s.put("alpha", 0);
        s.idle();
        AdsTestClient sotw = client(s).openSotw();
        AdsTestClient delta = client(s).openDelta();
        String url = s.typeUrls().get(0);
        sotw.sotw(url, List.of(), "", "");
        delta.deltaSubscribe(url, List.of(), Map.of());
        String b = s.put("beta", 0);
        s.idle();
        assertThat(sotw.pending()).as("nothing before the catalog is ready").isZero();
        assertThat(delta.pending()).isZero();

        s.markReady();
        assertThat(names(s, sotw.next())).containsExactlyInAnyOrder(a, b);
        assertThat(names(delta.nextDelta())).containsExactlyInAnyOrder(a, b);
    }
}
