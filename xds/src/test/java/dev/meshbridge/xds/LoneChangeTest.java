package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A lone change reaches a client without waiting for the aggregator's quiet period (it is published on the leading
 * edge), and the changes right after it are still coalesced. The quiet period and maximum delay are an hour, so a
 * response within the client's 30 s timeout can only come from the leading edge (or an explicit flush).
 */
class LoneChangeTest {

    @Test
    void aLoneChange_reachesAClientAtOnce_theNextWithinTheQuietPeriodIsHeld() throws Exception {
        try (ServiceAggregator aggregator =
                        new ServiceAggregator(new ServiceAggregator.Options(Duration.ofHours(1), Duration.ofHours(1)));
                XdsServer server = new XdsServer(XdsOptions.loopbackEphemeral(), new SimpleMeterRegistry()).start();
                AdsClient client = new AdsClient(server.port(), "lone-change")) {
            aggregator.subscribe(server).join();
            server.markCatalogReady();
            client.openSotw();
            client.subscribe(XdsType.ENDPOINT, AdsSotwTest.ORDERS_CLUSTER);

            aggregator.accept(Upserts.springCloud(
                    "orders", List.of(Upserts.springInstance("10.0.0.1", 8080).build())));
            DiscoveryResponse first = client.next();
            while (first.getResourcesCount() == 0) { // an answer while the cluster did not exist yet
                client.ack(first, AdsSotwTest.ORDERS_CLUSTER);
                first = client.next();
            }
            assertThat(EnvoyTranslatorTest.endpoints(AdsSotwTest.cla(first.getResources(0))))
                    .containsExactly("10.0.0.1:8080");
            client.ack(first, AdsSotwTest.ORDERS_CLUSTER);

            // within the quiet period of the first: held until the period ends (here: until flushed)
            aggregator.accept(Upserts.springCloud(
                    "orders",
                    List.of(
                            Upserts.springInstance("10.0.0.1", 8080).build(),
                            Upserts.springInstance("10.0.0.2", 8080).build())));
            aggregator.unsubscribe(s -> {}).join(); // the aggregator thread has applied it
            assertThat(aggregator.current().service("orders.zookeeper").endpoints())
                    .hasSize(1);
            aggregator.flushNow().join();
            assertThat(EnvoyTranslatorTest.endpoints(
                            AdsSotwTest.cla(client.next().getResources(0))))
                    .containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
        }
    }
}
