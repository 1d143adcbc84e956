package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.ads.AdsClientView;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The state-of-the-world protocol on ADS, driven by a raw client over a real connection. */
class AdsSotwTest {

    static final String SHOP = "shop.dubbo";
    static final String SHOP_CLUSTER = "outbound|50051||shop.dubbo";
    static final String ORDERS = "orders.zookeeper";
    static final String ORDERS_CLUSTER = "outbound|80||orders.zookeeper";

    private final XdsTestBed bed = new XdsTestBed();

    @AfterEach
    void close() {
        bed.close();
    }

    static ServiceUpsert shop(String... ips) {
        List<Endpoint> eps = new ArrayList<>();
        for (String ip : ips) eps.add(Upserts.dubboAppInstance(ip, 50051).build());
        return Upserts.dubboApplication("shop", eps);
    }

    static ServiceUpsert orders(String... ips) {
        List<Endpoint> eps = new ArrayList<>();
        for (String ip : ips) eps.add(Upserts.springInstance(ip, 8080).build());
        return Upserts.springCloud("orders", eps);
    }

    @Test
    void wildcardCds_firstResponse_carriesEveryCluster() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openSotw();

        c.subscribe(XdsType.CLUSTER);
        DiscoveryResponse r = c.next();

        assertThat(r.getTypeUrl()).isEqualTo(XdsType.CLUSTER.typeUrl());
        assertThat(r.getVersionInfo()).hasSize(16);
        assertThat(r.getNonce()).isNotEmpty();
        assertThat(names(r)).containsExactlyInAnyOrder(SHOP_CLUSTER, ORDERS_CLUSTER);
    }

    @Test
    void emptyCatalog_wildcardCdsAndLds_areAnsweredWithNothing() throws Exception {
        AdsClient c = bed.client("envoy-1").openSotw();

        c.subscribe(XdsType.CLUSTER);
        DiscoveryResponse cds = c.next();
        c.subscribe(XdsType.LISTENER);
        DiscoveryResponse lds = c.next();

        assertThat(cds.getResourcesCount()).isZero();
        // a sidecar's wildcard gets its outbound listeners (routing to nothing yet), nothing else
        assertThat(names(lds)).containsExactly("outbound_15001", "outbound_20880");
        assertThat(lds.getTypeUrl()).isEqualTo(XdsType.LISTENER.typeUrl());
    }

    @Test
    void wildcardLds_leavesOutApiListeners_namedLdsGetsThem() throws Exception {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("envoy-1").openSotw();

        c.subscribe(XdsType.LISTENER);
        assertThat(names(c.next())).containsExactly("outbound_15001", "outbound_20880");

        AdsClient grpc = bed.client("grpc-1").openSotw();
        grpc.subscribe(XdsType.LISTENER, SHOP);
        DiscoveryResponse named = grpc.next();
        assertThat(names(named)).containsExactly(SHOP);
        assertThat(Listener.parseFrom(named.getResources(0).getValue()).hasApiListener())
                .isTrue();
    }

    @Test
    void oneEndpointChange_sendsOnlyThatLoadAssignment_andNoCdsLdsRds() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("grpc-1").openSotw();
        subscribeAndAck(c, XdsType.CLUSTER);
        subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER);
        subscribeAndAck(c, XdsType.LISTENER, SHOP, ORDERS);
        subscribeAndAck(c, XdsType.ROUTE, SHOP, ORDERS);
        double cdsPushes = bed.counter("meshbridge.xds.pushes", "type", "cds");

        bed.send(shop("10.0.0.1", "10.0.0.2"));
        DiscoveryResponse eds = c.next();

        assertThat(eds.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(names(eds)).containsExactly(SHOP_CLUSTER);
        assertThat(EnvoyTranslatorTest.endpoints(cla(eds.getResources(0))))
                .containsExactly("10.0.0.1:50051", "10.0.0.2:50051");
        c.ack(eds, SHOP_CLUSTER, ORDERS_CLUSTER);

        // the next change proves nothing else was sent in between
        bed.send(orders("10.0.1.1", "10.0.1.2"));
        DiscoveryResponse fence = c.next();
        assertThat(fence.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(names(fence)).containsExactly(ORDERS_CLUSTER);
        assertThat(bed.counter("meshbridge.xds.pushes", "type", "cds")).isEqualTo(cdsPushes);
    }

    @Test
    void newService_pushesCdsWithEveryCluster_andNewResourcesToNamedSubscribers() throws Exception {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("envoy-1").openSotw();
        subscribeAndAck(c, XdsType.CLUSTER);

        bed.send(orders("10.0.1.1"));
        DiscoveryResponse cds = c.next();

        assertThat(cds.getTypeUrl()).isEqualTo(XdsType.CLUSTER.typeUrl());
        assertThat(names(cds)).containsExactlyInAnyOrder(SHOP_CLUSTER, ORDERS_CLUSTER);
    }

    @Test
    void serviceRemoved_wildcardCdsNoLongerCarriesIt() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openSotw();
        subscribeAndAck(c, XdsType.CLUSTER);

        bed.send(new ServiceRemoval(orders().key()));
        DiscoveryResponse cds = c.next();

        assertThat(names(cds)).containsExactly(SHOP_CLUSTER);
    }

    @Test
    void ack_getsNoFurtherResponse_untilSomethingSubscribedChanges() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("grpc-1").openSotw();
        DiscoveryResponse first = subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER);

        bed.send(orders("10.0.1.1", "10.0.1.2")); // not subscribed: nothing for this client
        bed.send(shop("10.0.0.3"));
        DiscoveryResponse next = c.next();

        assertThat(names(next)).containsExactly(SHOP_CLUSTER);
        assertThat(EnvoyTranslatorTest.endpoints(cla(next.getResources(0)))).containsExactly("10.0.0.3:50051");
        assertThat(next.getVersionInfo()).isNotEqualTo(first.getVersionInfo());
        assertThat(next.getNonce()).isNotEqualTo(first.getNonce());
    }

    @Test
    void subscriptionByName_sendsOnlyThoseResources_andOnlyNewOnesWhenItGrows() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("grpc-1").openSotw();

        DiscoveryResponse one = subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER);
        assertThat(names(one)).containsExactly(SHOP_CLUSTER);

        c.ack(one, SHOP_CLUSTER, ORDERS_CLUSTER);
        DiscoveryResponse grown = c.next();
        assertThat(names(grown)).containsExactly(ORDERS_CLUSTER);
        assertThat(grown.getVersionInfo()).isNotEqualTo(one.getVersionInfo());
    }

    @Test
    void namedListenerThatDoesNotExist_isAnsweredWithoutIt() {
        AdsClient c = bed.client("grpc-1").openSotw();

        c.subscribe(XdsType.LISTENER, "nope.dubbo");
        DiscoveryResponse r = c.next();

        assertThat(r.getResourcesCount()).isZero();
        AdsClientView.TypeStatus lds =
                bed.server.debugView().client("grpc-1").types().get("lds");
        assertThat(lds.names()).isEqualTo(1);
        assertThat(lds.sampleNames()).containsExactly("nope.dubbo");
    }

    @Test
    void nack_isReported_andTheRejectedVersionIsNotSentAgain() throws Exception {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("grpc-1").openSotw();
        DiscoveryResponse accepted = subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER);
        bed.send(shop("10.0.0.1", "10.0.0.2"));
        DiscoveryResponse rejected = c.next();

        c.nack(rejected, accepted.getVersionInfo(), "endpoint 10.0.0.2 refused by a test", SHOP_CLUSTER);

        await().atMost(Duration.ofSeconds(30)).until(() -> bed.counter("meshbridge.xds.nacks", "type", "eds") == 1);
        AdsClientView.TypeStatus eds =
                bed.server.debugView().client("grpc-1").types().get("eds");
        assertThat(eds.status()).isEqualTo("STALE");
        assertThat(eds.lastNack().error()).isEqualTo("endpoint 10.0.0.2 refused by a test");
        assertThat(eds.lastNack().version()).isEqualTo(rejected.getVersionInfo());
        assertThat(eds.lastAckedVersion()).isEqualTo(accepted.getVersionInfo());

        // no resend loop: the next response is the next change, not the rejected version again
        bed.send(shop("10.0.0.1", "10.0.0.3"));
        DiscoveryResponse next = c.next();
        assertThat(next.getVersionInfo()).isNotEqualTo(rejected.getVersionInfo());
        assertThat(EnvoyTranslatorTest.endpoints(cla(next.getResources(0))))
                .containsExactly("10.0.0.1:50051", "10.0.0.3:50051");
    }

    @Test
    void requestWithStaleNonce_isIgnored() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("grpc-1").openSotw();
        DiscoveryResponse first = subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER);
        bed.send(shop("10.0.0.2"));
        DiscoveryResponse second = c.next();

        // answers the first response (stale) while asking for more: ignored
        c.request(XdsType.ENDPOINT, first.getVersionInfo(), first.getNonce(), List.of(SHOP_CLUSTER, ORDERS_CLUSTER));
        c.ack(second, SHOP_CLUSTER);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            AdsClientView.TypeStatus eds =
                    bed.server.debugView().client("grpc-1").types().get("eds");
            assertThat(eds.status()).isEqualTo("SYNCED");
            assertThat(eds.lastAckedVersion()).isEqualTo(second.getVersionInfo());
            assertThat(eds.names()).isEqualTo(1);
        });
        bed.send(shop("10.0.0.3"));

        DiscoveryResponse next = c.next();
        assertThat(names(next)).containsExactly(SHOP_CLUSTER);
        assertThat(EnvoyTranslatorTest.endpoints(cla(next.getResources(0)))).containsExactly("10.0.0.3:50051");
    }

    @Test
    void reconnect_withTheVersionsItHolds_isSentNothingAgain() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openSotw();
        DiscoveryResponse cds = subscribeAndAck(c, XdsType.CLUSTER);
        DiscoveryResponse eds = subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER);
        c.closeStreams();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> bed.server.debugView().clients().isEmpty());

        c.openSotw();
        c.request(XdsType.CLUSTER, cds.getVersionInfo(), "", List.of());
        c.request(XdsType.ENDPOINT, eds.getVersionInfo(), "", List.of(SHOP_CLUSTER, ORDERS_CLUSTER));
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            AdsClientView client = bed.server.debugView().client("envoy-1");
            return client != null && client.types().size() == 2;
        });
        AdsClientView resumed = bed.server.debugView().client("envoy-1");
        assertThat(resumed.types().get("cds").status()).isEqualTo("SYNCED");
        assertThat(resumed.types().get("eds").status()).isEqualTo("SYNCED");

        bed.send(shop("10.0.0.2"));
        DiscoveryResponse first = c.next();
        assertThat(first.getTypeUrl()).isEqualTo(XdsType.ENDPOINT.typeUrl());
        assertThat(names(first)).containsExactly(SHOP_CLUSTER);
    }

    @Test
    void reconnect_withAnOldVersion_getsEverythingItAsksFor() throws Exception {
        bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
        AdsClient c = bed.client("envoy-1").openSotw();
        DiscoveryResponse eds = subscribeAndAck(c, XdsType.ENDPOINT, SHOP_CLUSTER, ORDERS_CLUSTER);
        c.closeStreams();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> bed.server.debugView().clients().isEmpty());
        bed.send(shop("10.0.0.2"));

        c.openSotw();
        c.request(XdsType.ENDPOINT, eds.getVersionInfo(), "", List.of(SHOP_CLUSTER, ORDERS_CLUSTER));
        DiscoveryResponse again = c.next();

        assertThat(names(again)).containsExactlyInAnyOrder(SHOP_CLUSTER, ORDERS_CLUSTER);
        assertThat(again.getVersionInfo()).isNotEqualTo(eds.getVersionInfo());
    }

    @Test
    void sameCatalog_sameVersions_inTwoServers() {
        try (XdsTestBed other = new XdsTestBed()) {
            bed.send(shop("10.0.0.1"), orders("10.0.1.1"));
            other.send(orders("10.0.1.1"), shop("10.0.0.1"));
            AdsClient a = bed.client("envoy-1").openSotw();
            AdsClient b = other.client("envoy-1").openSotw();

            a.subscribe(XdsType.CLUSTER);
            b.subscribe(XdsType.CLUSTER);
            a.subscribe(XdsType.ENDPOINT, SHOP_CLUSTER);
            b.subscribe(XdsType.ENDPOINT, SHOP_CLUSTER);

            assertThat(b.next().getVersionInfo()).isEqualTo(a.next().getVersionInfo());
            assertThat(b.next().getVersionInfo()).isEqualTo(a.next().getVersionInfo());
        }
    }

    @Test
    void debug_showsNodeSubscriptionsAndSyncStatus() {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("grpc-1").openSotw();
        DiscoveryResponse cds = subscribeAndAck(c, XdsType.CLUSTER);
        c.subscribe(XdsType.ENDPOINT, "outbound|1||missing.dubbo");

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            XdsDebugView view = bed.server.debugView();
            AdsClientView client = view.client("grpc-1");
            assertThat(client).isNotNull();
            assertThat(client.cluster()).isEqualTo("test-cluster");
            assertThat(client.userAgent()).isEqualTo("meshbridge-test 1");
            assertThat(client.api()).isEqualTo("ADS");
            assertThat(client.protocol()).isEqualTo("sotw");
            assertThat(client.peer()).startsWith("127.0.0.1:");
            AdsClientView.TypeStatus cdsStatus = client.types().get("cds");
            assertThat(cdsStatus.status()).isEqualTo("SYNCED");
            assertThat(cdsStatus.wildcard()).isTrue();
            assertThat(cdsStatus.lastSentVersion()).isEqualTo(cds.getVersionInfo());
            assertThat(cdsStatus.lastAckedVersion()).isEqualTo(cds.getVersionInfo());
            assertThat(client.types().get("eds").status()).isEqualTo("NOT SENT");
            assertThat(view.resources()).containsEntry("cds", 2).containsEntry("eds", 2);
        });
        assertThat(bed.gauge("meshbridge.xds.clients", "type", "cds", "protocol", "sotw"))
                .isEqualTo(1);
        assertThat(bed.gauge("meshbridge.xds.streams")).isEqualTo(1);
        assertThat(bed.counter("meshbridge.xds.push.bytes", "type", "cds", "protocol", "sotw"))
                .isEqualTo(cds.getSerializedSize());
    }

    @Test
    void perTypeClusterService_servesClusters_andRefusesOtherTypes() throws Exception {
        bed.send(shop("10.0.0.1"));
        AdsClient c = bed.client("envoy-1");
        LinkedBlockingQueue<DiscoveryResponse> responses = new LinkedBlockingQueue<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        StreamObserver<DiscoveryRequest> cds = ClusterDiscoveryServiceGrpc.newStub(c.channel())
                .streamClusters(new StreamObserver<>() {
                    @Override
                    public void onNext(DiscoveryResponse value) {
                        responses.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        error.set(t);
                    }

                    @Override
                    public void onCompleted() {}
                });

        cds.onNext(DiscoveryRequest.newBuilder().build()); // per-type services may leave the type URL out
        DiscoveryResponse r = responses.poll(30, TimeUnit.SECONDS);
        assertThat(r).isNotNull();
        assertThat(names(r)).containsExactly(SHOP_CLUSTER);
        assertThat(Cluster.parseFrom(r.getResources(0).getValue()).getName()).isEqualTo(SHOP_CLUSTER);

        cds.onNext(DiscoveryRequest.newBuilder()
                .setTypeUrl(XdsType.ENDPOINT.typeUrl())
                .build());
        await().atMost(Duration.ofSeconds(30)).until(() -> error.get() != null);
        assertThat(Status.fromThrowable(error.get()).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    }

    // ------------------------------------------------------------------ helpers

    static DiscoveryResponse subscribeAndAck(AdsClient c, XdsType type, String... names) {
        c.subscribe(type, names);
        DiscoveryResponse r = c.next();
        assertThat(r.getTypeUrl()).isEqualTo(type.typeUrl());
        c.ack(r, names);
        return r;
    }

    static List<String> names(DiscoveryResponse r) throws InvalidProtocolBufferException {
        List<String> out = new ArrayList<>();
        for (Any a : r.getResourcesList()) out.add(name(a));
        return out;
    }

    static String name(Any a) throws InvalidProtocolBufferException {
        XdsType t = XdsType.ofTypeUrl(a.getTypeUrl());
        return switch (t) {
            case CLUSTER -> Cluster.parseFrom(a.getValue()).getName();
            case ENDPOINT -> ClusterLoadAssignment.parseFrom(a.getValue()).getClusterName();
            case LISTENER -> Listener.parseFrom(a.getValue()).getName();
            case ROUTE ->
                io.envoyproxy.envoy.config.route.v3.RouteConfiguration.parseFrom(a.getValue())
                        .getName();
            case SECRET ->
                io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret.parseFrom(a.getValue())
                        .getName();
            case DUBBO_ROUTE ->
                io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration.parseFrom(
                                a.getValue())
                        .getName();
        };
    }

    static ClusterLoadAssignment cla(Any a) throws InvalidProtocolBufferException {
        return ClusterLoadAssignment.parseFrom(a.getValue());
    }
}
