package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.meshbridge.ads.AdsClientView;
import dev.meshbridge.ads.AdsTestClient;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Listeners per node role: gateways get the Ingress listeners; sidecars and proxyless clients do not. */
class NodeRolesTest {

    private static final String HTTP_LISTENER = XdsNames.ingressListener("0.0.0.0", 8080);
    private static final String OUTBOUND = EnvoySidecarTranslator.name(SidecarOptions.DEFAULTS.httpPort());
    private static final String OUTBOUND_DUBBO = EnvoySidecarTranslator.name(SidecarOptions.DEFAULTS.dubboPort());

    @TempDir
    Path dir;

    private IngressBed bed;
    private final List<AdsTestClient> clients = new ArrayList<>();

    @BeforeEach
    void setUp() {
        bed = new IngressBed(dir, XdsOptions.loopbackEphemeral(), new NodeRoles("", "edge-.*"));
        bed.send(IngressBed.shopCatalog());
        bed.write("shop.yaml", IngressBed.resource("ingress/shop.yaml"));
        bed.awaitRoutes(6);
    }

    @AfterEach
    void tearDown() {
        clients.forEach(AdsTestClient::close);
        bed.close();
    }

    private AdsTestClient client(Node node) {
        AdsTestClient c = new AdsTestClient(bed.xds.server.port(), node);
        clients.add(c);
        return c;
    }

    private List<String> wildcardListeners(Node node) throws Exception {
        AdsTestClient c = client(node).openSotw();
        c.sotw(XdsType.LISTENER.typeUrl(), List.of(), "", "");
        DiscoveryResponse r = c.next();
        List<String> names = new ArrayList<>();
        for (var a : r.getResourcesList()) names.add(a.unpack(Listener.class).getName());
        return names;
    }

    private static Node.Builder node(String id) {
        return Node.newBuilder().setId(id).setCluster("apps").setUserAgentName("envoy");
    }

    private static Struct role(String role) {
        return Struct.newBuilder()
                .putFields(
                        NodeRoles.METADATA_KEY,
                        Value.newBuilder().setStringValue(role).build())
                .build();
    }

    @Test
    void gatewayByMetadata_getsTheIngressListeners_andNoOutboundListener() throws Exception {
        assertThat(wildcardListeners(node("gw-1").setMetadata(role("gateway")).build()))
                .contains(HTTP_LISTENER)
                .doesNotContain(OUTBOUND, OUTBOUND_DUBBO);
    }

    @Test
    void gatewayByClusterPattern_getsTheIngressListeners_andNoOutboundListener() throws Exception {
        assertThat(wildcardListeners(node("gw-2").setCluster("edge-eu").build()))
                .contains(HTTP_LISTENER)
                .doesNotContain(OUTBOUND, OUTBOUND_DUBBO);
    }

    @Test
    void sidecar_getsTheOutboundListeners_aProxylessClientGetsNone() throws Exception {
        assertThat(wildcardListeners(node("sidecar-1").build())).containsExactlyInAnyOrder(OUTBOUND, OUTBOUND_DUBBO);
        assertThat(wildcardListeners(
                        node("sidecar-2").setMetadata(role("sidecar")).build()))
                .containsExactlyInAnyOrder(OUTBOUND, OUTBOUND_DUBBO);
        assertThat(wildcardListeners(
                        node("grpc-1").setUserAgentName("grpc-java").build()))
                .isEmpty();
        assertThat(wildcardListeners(
                        node("grpc-2").setMetadata(role("proxyless")).build()))
                .isEmpty();

        AdsTestClient delta = client(node("sidecar-3").build()).openDelta();
        delta.deltaSubscribe(XdsType.LISTENER.typeUrl(), List.of(), Map.of());
        assertThat(delta.nextDelta().getResourcesList())
                .extracting(io.envoyproxy.envoy.service.discovery.v3.Resource::getName)
                .containsExactlyInAnyOrder(OUTBOUND, OUTBOUND_DUBBO);
        AdsTestClient grpcDelta =
                client(node("grpc-3").setUserAgentName("grpc-go").build()).openDelta();
        grpcDelta.deltaSubscribe(XdsType.LISTENER.typeUrl(), List.of(), Map.of());
        assertThat(grpcDelta.nextDelta().getResourcesList()).isEmpty();
    }

    @Test
    void sidecar_andProxylessClient_getNoIngressListener_overSotwAndDelta() throws Exception {
        assertThat(wildcardListeners(node("sidecar-1").build())).doesNotContain(HTTP_LISTENER);
        assertThat(wildcardListeners(
                        node("grpc-1").setUserAgentName("grpc-java").build()))
                .doesNotContain(HTTP_LISTENER);
        // metadata wins over the cluster pattern
        assertThat(wildcardListeners(node("sidecar-2")
                        .setCluster("edge-eu")
                        .setMetadata(role("sidecar"))
                        .build()))
                .doesNotContain(HTTP_LISTENER);

        AdsTestClient delta = client(node("sidecar-3").build()).openDelta();
        delta.deltaSubscribe(XdsType.LISTENER.typeUrl(), List.of(), Map.of());
        DeltaDiscoveryResponse r = delta.nextDelta();
        assertThat(r.getResourcesList()).noneMatch(res -> res.getName().equals(HTTP_LISTENER));

        AdsClientView gw = null;
        for (AdsClientView v : bed.xds.server.debugView().clients()) {
            if (v.nodeId().equals("grpc-1")) assertThat(v.role()).isEqualTo("proxyless");
            if (v.nodeId().equals("sidecar-1")) assertThat(v.role()).isEqualTo("sidecar");
            if (v.nodeId().equals("sidecar-2")) gw = v;
        }
        assertThat(gw).isNotNull();
        assertThat(gw.role()).isEqualTo("sidecar");
    }
}
