package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.core.admin.DebugSource;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Lifecycle, ports, the debug page and what the server reports about resources it leaves out. */
class XdsServerTest {

    @Test
    void portZero_listensOnAFreePort_readableAfterStart() throws Exception {
        try (XdsServer server = new XdsServer(XdsOptions.loopbackEphemeral(), new SimpleMeterRegistry())) {
            assertThat(server.port()).isEqualTo(-1);
            server.start();
            assertThat(server.port()).isPositive();
            server.markCatalogReady();

            try (AdsClient c = new AdsClient(server.port(), "envoy-1")) {
                c.openSotw().subscribe(XdsType.CLUSTER);
                assertThat(c.next().getResourcesCount()).isZero();
            }
        }
    }

    @Test
    void startTwice_isRefused_closeTwice_isHarmless() throws Exception {
        XdsServer server = new XdsServer(XdsOptions.loopbackEphemeral(), new SimpleMeterRegistry());
        server.start();
        assertThatThrownBy(server::start).isInstanceOf(IllegalStateException.class);
        server.close();
        server.close();
        assertThat(server.debugView().clients()).isEmpty();
    }

    @Test
    void portInUse_failsWithAClearMessage() throws Exception {
        try (XdsServer first = new XdsServer(XdsOptions.loopbackEphemeral(), new SimpleMeterRegistry()).start()) {
            XdsServer second = new XdsServer(
                    XdsOptions.loopbackEphemeral().withAddress("127.0.0.1", first.port()), new SimpleMeterRegistry());
            assertThatThrownBy(second::start)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("xDS server cannot listen on 127.0.0.1:" + first.port());
            second.close();
        }
    }

    @Test
    void debugSource_isNamedXds_andRendersTheView() {
        try (XdsTestBed bed = new XdsTestBed()) {
            bed.send(AdsSotwTest.shop("10.0.0.1"));
            AdsClient c = bed.client("envoy-1").openSotw();
            c.subscribe(XdsType.CLUSTER);
            DiscoveryResponse r = c.next();
            DebugSource source = bed.server.debugSource();

            assertThat(source.name()).isEqualTo("xds");
            assertThat(source.description()).isNotBlank();
            XdsDebugView view = (XdsDebugView) source.debug(Map.of("node", "envoy"));
            assertThat(view.catalog().services()).isEqualTo(1);
            assertThat(view.clients()).singleElement().satisfies(client -> {
                assertThat(client.nodeId()).isEqualTo("envoy-1");
                assertThat(client.types().get("cds").lastSentVersion()).isEqualTo(r.getVersionInfo());
            });
            assertThat(((XdsDebugView) source.debug(Map.of("node", "nobody"))).clients())
                    .isEmpty();
        }
    }

    @Test
    void debugView_rendersAsJson_asTheAdminServerDoes() throws Exception {
        try (XdsTestBed bed = new XdsTestBed()) {
            bed.send(AdsSotwTest.shop("10.0.0.1"));
            AdsClient c = bed.client("envoy-1").openSotw();
            c.subscribe(XdsType.CLUSTER);
            DiscoveryResponse r = c.next();
            c.nack(r, "", "bad cluster");
            await().atMost(Duration.ofSeconds(30)).until(() -> bed.counter("meshbridge.xds.nacks", "type", "cds") == 1);

            JsonNode json =
                    new ObjectMapper().valueToTree(bed.server.debugSource().debug(Map.of()));

            JsonNode cds = json.path("clients").path(0).path("types").path("cds");
            assertThat(json.path("clients").path(0).path("nodeId").asText()).isEqualTo("envoy-1");
            assertThat(cds.path("status").asText()).isEqualTo("STALE");
            assertThat(cds.path("lastSentVersion").asText()).isEqualTo(r.getVersionInfo());
            assertThat(cds.path("lastNack").path("error").asText()).isEqualTo("bad cluster");
            // the shop's cluster, and its proxyless gRPC form
            assertThat(json.path("resources").path("cds").asInt()).isEqualTo(2);
        }
    }

    @Test
    void endpointEnvoyWouldRefuse_isNeverSent_butReportedInLogMetricAndDebug() throws Exception {
        try (XdsTestBed bed = new XdsTestBed()) {
            bed.send(Upserts.springCloud(
                    "orders",
                    List.of(
                            Upserts.springInstance("10.0.0.1", 8080).build(),
                            Upserts.springInstance("orders-2.corp", 8080).build())));
            AdsClient c = bed.client("envoy-1").openSotw();
            c.subscribe(XdsType.ENDPOINT, AdsSotwTest.ORDERS_CLUSTER);
            DiscoveryResponse eds = c.next();

            assertThat(EnvoyTranslatorTest.endpoints(AdsSotwTest.cla(eds.getResources(0))))
                    .containsExactly("10.0.0.1:8080");
            assertThat(bed.counter("meshbridge.xds.skipped", "reason", "endpoint-address"))
                    .isEqualTo(1);
            assertThat(bed.gauge("meshbridge.xds.skipped.current")).isEqualTo(1);
            assertThat(bed.server.debugView().skipped()).singleElement().satisfies(s -> {
                assertThat(s.host()).isEqualTo("orders.zookeeper");
                assertThat(s.item()).isEqualTo("orders-2.corp:8080");
                assertThat(s.detail()).contains("not an IP address");
            });

            // fixed in the registry: served, and no longer reported
            bed.send(Upserts.springCloud(
                    "orders",
                    List.of(
                            Upserts.springInstance("10.0.0.1", 8080).build(),
                            Upserts.springInstance("10.0.0.2", 8080).build())));
            assertThat(EnvoyTranslatorTest.endpoints(AdsSotwTest.cla(c.next().getResources(0))))
                    .containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> bed.server.debugView().skipped().isEmpty());
            assertThat(bed.gauge("meshbridge.xds.skipped.current")).isZero();
        }
    }

    @Test
    void lateSubscriber_getsTheWholeCatalog_fromTheCurrentSnapshot() {
        try (XdsTestBed bed = new XdsTestBed()) {
            bed.send(AdsSotwTest.shop("10.0.0.1"), AdsSotwTest.orders("10.0.1.1"));
            try (XdsServer late = new XdsServer(XdsOptions.loopbackEphemeral(), new SimpleMeterRegistry())) {
                late.start();
                bed.catalog.aggregator().subscribe(late).join();
                await().atMost(Duration.ofSeconds(30))
                        .until(() ->
                                late.servedSequence() == bed.catalog.snapshot().sequence());

                assertThat(late.debugView().resources())
                        // each service's cluster and its proxyless gRPC form
                        .containsEntry("cds", 4)
                        .containsEntry("eds", 4)
                        // their two API listeners each, and the sidecars' HTTP and Dubbo outbound listeners
                        .containsEntry("lds", 6)
                        // their route configurations, and the outbound HTTP one
                        .containsEntry("rds", 3)
                        .containsEntry("drds", 1);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }
}
