package dev.meshbridge.xds;

import static dev.meshbridge.xds.AdsSotwTest.ORDERS;
import static dev.meshbridge.xds.AdsSotwTest.ORDERS_CLUSTER;
import static dev.meshbridge.xds.AdsSotwTest.SHOP;
import static dev.meshbridge.xds.AdsSotwTest.SHOP_CLUSTER;
import static dev.meshbridge.xds.AdsSotwTest.orders;
import static dev.meshbridge.xds.AdsSotwTest.shop;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.AdsClientView;
import dev.meshbridge.core.spi.ServiceRemoval;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The incremental (Delta) protocol on ADS, driven by a raw client over a real connection. */
class AdsDeltaTest {

    private final XdsTestBed bed = new XdsTestBed();

    @AfterEach
    void close() {
        bed.close();
    }

    @Test
    void wildcardCds_firstResponse_carriesEveryClusterWithItsVersion() {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openDelta();

        c.delta(XdsType.CLUSTER, List.of(), List.of(), Map.of());
        DeltaDiscoveryResponse r = c.nextDelta();

        assertThat(r.getTypeUrl()).isEqualTo(XdsType.CLUSTER.typeUrl());
        assertThat(r.getNonce()).isNotEmpty();
        assertThat(r.getResourcesList())
                .extracting(Resource::getName)
                .containsExactlyInAnyOrder(SHOP_CLUSTER, ORDERS_CLUSTER);
        assertThat(r.getResourcesList())
                .allSatisfy(res -> assertThat(res.getVersion()).hasSize(16));
        assertThat(r.getRemovedResourcesList()).isEmpty();
    }

    @Test
    void emptyCatalog_wildcard_isAnsweredWithAnEmptyResponse() {
        AdsClient c = bed.client("envoy-1").openDelta();

        c.delta(XdsType.CLUSTER, List.of("*"), List.of(), Map.of());
        DeltaDiscoveryResponse r = c.nextDelta();

        assertThat(r.getResourcesCount()).isZero();
        assertThat(r.getRemovedResourcesCount()).isZero();
    }

    @Test
    void oneEndpointChange_sendsOnlyThatResource_toSubscribedStreams_andNoCdsLdsRds() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient subscribed = bed.client("envoy-1").openDelta();
        subscribeAndAck(subscribed, XdsType.CLUSTER);
        subscribeAndAck(subscribed, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER);
        subscribeAndAck(subscribed, XdsType.LISTENER, SHOP, ORDERS);
        subscribeAndAck(subscribed, XdsType.ROUTE, SHOP, ORDERS);
        AdsClient other = bed.client("grpc-orders").openDelta();
        subscribeAndAck(other, XdsType.ENDPOINT, ORDERS_CLUSTER);
        double otherBytes = bed.counter("meshbridge.xds.push.bytes", "type", "eds", "protocol", "delta");

        bed.send(shop("10.0.0.1", "10.0.0.2"));
        DeltaDiscoveryResponse eds = subscribed.nextDelta();

        assertThat(eds.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(eds.getResourcesList()).extracting(Resource::getName).containsExactly(SHOP_CLUSTER);
        assertThat(eds.getRemovedResourcesList()).isEmpty();
        ClusterLoadAssignment cla = ClusterLoadAssignment.parseFrom(
                eds.getResources(0).getResource().getValue());
        assertThat(EnvoyTranslatorTest.endpoints(cla)).containsExactly("10.0.0.1:50051", "10.0.0.2:50051");
        // only this stream got bytes: the orders-only stream got nothing
        assertThat(bed.counter("meshbridge.xds.push.bytes", "type", "eds", "protocol", "delta") - otherBytes)
                .isEqualTo(eds.getSerializedSize());
        subscribed.deltaAck(eds);

        bed.send(orders("10.0.1.1", "10.0.1.2"));
        DeltaDiscoveryResponse fence = subscribed.nextDelta();
        assertThat(fence.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(fence.getResourcesList()).extracting(Resource::getName).containsExactly(ORDERS_CLUSTER);
        DeltaDiscoveryResponse othersFirst = other.nextDelta();
        assertThat(othersFirst.getResourcesList()).extracting(Resource::getName).containsExactly(ORDERS_CLUSTER);
    }

    @Test
    void serviceRemoved_isSentAsRemovedResources_forWildcardAndNamedSubscriptions() {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openDelta();
        subscribeAndAck(c, XdsType.CLUSTER);
        subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER);

        bed.send(new ServiceRemoval(orders().key()));
        DeltaDiscoveryResponse cds = c.nextDelta();
        DeltaDiscoveryResponse eds = c.nextDelta();

        assertThat(cds.getTypeUrl()).isEqualTo(XdsType.CLUSTER.typeUrl());
        assertThat(cds.getResourcesList()).isEmpty();
        assertThat(cds.getRemovedResourcesList()).containsExactly(ORDERS_CLUSTER);
        assertThat(eds.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(eds.getRemovedResourcesList()).containsExactly(ORDERS_CLUSTER);
    }

    @Test
    void removedThenBack_namedSubscriptionGetsItAgain() {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("grpc-1").openDelta();
        subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER);

        bed.send(new ServiceRemoval(shop().key()));
        assertThat(c.nextDelta().getRemovedResourcesList()).containsExactly(SHOP_CLUSTER);
        bed.send(shop("10.0.0.9"));
        DeltaDiscoveryResponse back = c.nextDelta();

        assertThat(back.getResourcesList()).extracting(Resource::getName).containsExactly(SHOP_CLUSTER);
    }

    @Test
    void subscribingToAResourceThatDoesNotExist_isAnsweredAsRemoved() {
        AdsClient c = bed.client("grpc-1").openDelta();

        c.delta(XdsType.LISTENER, List.of("nope.dubbo"), List.of(), Map.of());
        DeltaDiscoveryResponse r = c.nextDelta();

        assertThat(r.getResourcesList()).isEmpty();
        assertThat(r.getRemovedResourcesList()).containsExactly("nope.dubbo");
    }

    @Test
    void unsubscribe_stopsUpdatesForThatResource() {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("grpc-1").openDelta();
        subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER);

        c.delta(XdsType.ENDPOINT, List.of(), List.of(SHOP_CLUSTER), Map.of());
        await().atMost(Duration.ofSeconds(30))
                .until(() -> bed.server
                                .debugView()
                                .client("grpc-1")
                                .types()
                                .get("eds")
                                .names()
                        == 1);
        bed.send(shop("10.0.0.2"));
        bed.send(orders("10.0.1.2"));
        DeltaDiscoveryResponse next = c.nextDelta();

        assertThat(next.getResourcesList()).extracting(Resource::getName).containsExactly(ORDERS_CLUSTER);
    }

    @Test
    void nack_isReported_andTheRejectedResourceIsNotSentAgain() {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("grpc-1").openDelta();
        subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER);
        bed.send(shop("10.0.0.1", "10.0.0.2"));
        DeltaDiscoveryResponse rejected = c.nextDelta();

        c.deltaNack(rejected, "unsupported field in a test");

        await().atMost(Duration.ofSeconds(30)).until(() -> bed.counter("meshbridge.xds.nacks", "type", "eds") == 1);
        AdsClientView.TypeStatus eds =
                bed.server.debugView().client("grpc-1").types().get("eds");
        assertThat(eds.status()).isEqualTo("STALE");
        assertThat(eds.lastNack().error()).isEqualTo("unsupported field in a test");
        assertThat(eds.lastNack().nonce()).isEqualTo(rejected.getNonce());
        assertThat(eds.lastNack().version()).isEqualTo(rejected.getSystemVersionInfo());

        bed.send(orders("10.0.1.2"));
        DeltaDiscoveryResponse next = c.nextDelta();
        assertThat(next.getResourcesList()).extracting(Resource::getName).containsExactly(ORDERS_CLUSTER);
    }

    @Test
    void ack_marksTheTypeSynced() {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("grpc-1").openDelta();
        DeltaDiscoveryResponse r = subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            AdsClientView client = bed.server.debugView().client("grpc-1");
            assertThat(client.protocol()).isEqualTo("delta");
            AdsClientView.TypeStatus eds = client.types().get("eds");
            assertThat(eds.status()).isEqualTo("SYNCED");
            assertThat(eds.lastAckedVersion()).isEqualTo(r.getSystemVersionInfo());
        });
    }

    @Test
    void reconnect_withInitialVersions_getsOnlyWhatChanged() {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openDelta();
        Map<String, String> clusters = versions(subscribeAndAck(c, XdsType.CLUSTER));
        Map<String, String> endpoints = versions(subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER));
        c.closeStreams();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> bed.server.debugView().clients().isEmpty());
        bed.send(shop("10.0.0.2")); // changes while the client is away

        c.openDelta();
        c.delta(XdsType.CLUSTER, List.of(), List.of(), clusters);
        c.delta(XdsType.ENDPOINT, List.of(SHOP_CLUSTER, ORDERS_CLUSTER), List.of(), endpoints);
        DeltaDiscoveryResponse first = c.nextDelta();

        assertThat(first.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(first.getResourcesList()).extracting(Resource::getName).containsExactly(SHOP_CLUSTER);
        c.deltaAck(first);
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(bed.server
                                .debugView()
                                .client("envoy-1")
                                .types()
                                .get("cds")
                                .status())
                        .isEqualTo("SYNCED"));

        bed.send(orders("10.0.1.2"));
        DeltaDiscoveryResponse fence = c.nextDelta();
        assertThat(fence.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(fence.getResourcesList()).extracting(Resource::getName).containsExactly(ORDERS_CLUSTER);
    }

    @Test
    void reconnect_holdingAResourceThatIsGone_getsItsRemoval() {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openDelta();
        Map<String, String> clusters = versions(subscribeAndAck(c, XdsType.CLUSTER));
        c.closeStreams();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> bed.server.debugView().clients().isEmpty());
        bed.send(new ServiceRemoval(orders().key()));

        c.openDelta();
        c.delta(XdsType.CLUSTER, List.of(), List.of(), clusters);
        DeltaDiscoveryResponse first = c.nextDelta();

        assertThat(first.getResourcesList()).isEmpty();
        assertThat(first.getRemovedResourcesList()).containsExactly(ORDERS_CLUSTER);
    }

    @Test
    void wildcardLds_leavesOutApiListeners_unlessNamed() {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("envoy-1").openDelta();

        c.delta(XdsType.LISTENER, List.of("*"), List.of(), Map.of());
        // the sidecar's outbound listeners only
        assertThat(c.nextDelta().getResourcesList())
                .extracting(Resource::getName)
                .containsExactlyInAnyOrder("outbound_15001", "outbound_20880");
        c.delta(XdsType.LISTENER, List.of(SHOP), List.of(), Map.of());
        DeltaDiscoveryResponse named = c.nextDelta();

        assertThat(named.getResourcesList()).extracting(Resource::getName).containsExactly(SHOP);
    }

    // ------------------------------------------------------------------ helpers

    static DeltaDiscoveryResponse subscribeAndAck(AdsClient c, XdsType type, String... names) {
        c.delta(type, List.of(names), List.of(), Map.of());
        DeltaDiscoveryResponse r = c.nextDelta();
        assertThat(r.getTypeUrl()).isEqualTo(type.typeUrl());
        c.deltaAck(r);
        return r;
    }

    static Map<String, String> versions(DeltaDiscoveryResponse r) {
        Map<String, String> out = new HashMap<>();
        for (Resource res : r.getResourcesList()) out.put(res.getName(), res.getVersion());
        return out;
    }
}
