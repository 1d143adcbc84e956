package dev.meshbridge.bench.world;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.Value;
import dev.meshbridge.bench.load.ChangeIds;
import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.xds.EnvoyTranslator;
import dev.meshbridge.xds.XdsResource;
import dev.meshbridge.xds.XdsType;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link FleetStream#scan}, the fleet's reading of a load assignment without building the message, against
 * protobuf's own full parse: the bridge's real load assignments, and hand-made ones with what the bridge does not
 * send (several localities, fields in another order, unknown fields, an endpoint with no socket address).
 */
class FleetStreamScanTest {

    @Test
    void theBridgesOwnLoadAssignments_readAsAFullParseReadsThem() throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(6, 4);
        EnvoyTranslator translator = new EnvoyTranslator();
        try (ServiceAggregator aggregator = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS)) {
            int[] ids = {17, 0, 3, 0}; // change ids per instance slot, as SpiDriver sends them
            for (int i = 0; i < catalog.services(); i++) aggregator.accept(catalog.upsert(i, ids));
            MeshSnapshot s = aggregator.flushNow().get(60, TimeUnit.SECONDS);
            int checked = 0;
            for (int i = 0; i < catalog.services(); i++) {
                int max = 0;
                for (XdsResource r :
                        translator.translate(s.service(catalog.host(i))).ofType(XdsType.ENDPOINT)) {
                    FleetStream.Assignment a = FleetStream.scan(r.value());
                    assertThat(a).isEqualTo(fullParse(r.value()));
                    assertThat(a.endpoints()).isEqualTo(4);
                    max = Math.max(max, a.maxId());
                    checked++;
                }
                // the changed instance came back on new ports: the largest id any of its clusters shows is 17
                assertThat(max).as("service %d", i).isEqualTo(17);
            }
            assertThat(checked).isGreaterThanOrEqualTo(catalog.services());
        }
    }

    @Test
    void handMadeAssignments_withWhatTheBridgeDoesNotSend_readAsAFullParseReadsThem() throws Exception {
        LbEndpoint changed = endpoint(ChangeIds.port(42))
                .setHealthStatus(HealthStatus.HEALTHY)
                .setLoadBalancingWeight(UInt32Value.of(3))
                .setMetadata(Metadata.newBuilder()
                        .putFilterMetadata(
                                "envoy.lb",
                                Struct.newBuilder()
                                        .putFields(
                                                "port",
                                                Value.newBuilder()
                                                        .setNumberValue(51_099)
                                                        .build())
                                        .build()))
                .build();
        LbEndpoint noAddress = LbEndpoint.newBuilder()
                .setEndpoint(Endpoint.newBuilder().setHostname("h"))
                .build();
        ClusterLoadAssignment cla = ClusterLoadAssignment.newBuilder()
                .addEndpoints(LocalityLbEndpoints.newBuilder()
                        .setLocality(Locality.newBuilder().setZone("a"))
                        .addLbEndpoints(endpoint(8080).build())
                        .addLbEndpoints(changed)
                        .setLoadBalancingWeight(UInt32Value.of(1)))
                .addEndpoints(LocalityLbEndpoints.newBuilder()
                        .setPriority(1)
                        .addLbEndpoints(endpoint(ChangeIds.port(7)).build())
                        .addLbEndpoints(noAddress))
                .setClusterName("outbound|80||svc.bench") // written after the endpoints
                .setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(
                                99,
                                UnknownFieldSet.Field.newBuilder().addVarint(5).build())
                        .build())
                .build();
        ByteString bytes = cla.toByteString();
        assertThat(FleetStream.scan(bytes))
                .isEqualTo(fullParse(bytes))
                .isEqualTo(new FleetStream.Assignment("outbound|80||svc.bench", 4, 42));
        ByteString empty =
                ClusterLoadAssignment.newBuilder().setClusterName("c").build().toByteString();
        assertThat(FleetStream.scan(empty)).isEqualTo(new FleetStream.Assignment("c", 0, 0));
    }

    @Test
    void aTruncatedAssignment_failsAsAFullParseFails() {
        ByteString bytes = ClusterLoadAssignment.newBuilder()
                .setClusterName("c")
                .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(endpoint(ChangeIds.port(1))))
                .build()
                .toByteString();
        ByteString truncated = bytes.substring(0, bytes.size() - 3);
        assertThatThrownBy(() -> ClusterLoadAssignment.parseFrom(truncated)).isNotNull();
        assertThatThrownBy(() -> FleetStream.scan(truncated))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("does not parse");
    }

    private static LbEndpoint.Builder endpoint(int port) {
        return LbEndpoint.newBuilder()
                .setEndpoint(Endpoint.newBuilder()
                        .setAddress(Address.newBuilder()
                                .setSocketAddress(SocketAddress.newBuilder()
                                        .setAddress("10.0.0.1")
                                        .setPortValue(port))));
    }

    /** What the fleet read before: the whole message built, then walked. */
    private static FleetStream.Assignment fullParse(ByteString bytes) throws Exception {
        ClusterLoadAssignment cla = ClusterLoadAssignment.parseFrom(bytes);
        int endpoints = 0;
        int max = 0;
        for (LocalityLbEndpoints l : cla.getEndpointsList()) {
            List<LbEndpoint> lbs = l.getLbEndpointsList();
            for (LbEndpoint e : lbs) {
                endpoints++;
                max = Math.max(
                        max,
                        ChangeIds.id(
                                e.getEndpoint().getAddress().getSocketAddress().getPortValue()));
            }
        }
        return new FleetStream.Assignment(cla.getClusterName(), endpoints, max);
    }
}
