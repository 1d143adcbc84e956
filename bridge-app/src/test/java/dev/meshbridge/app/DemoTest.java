package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.app.demo.Demo;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code --demo}, end to end: the embedded ZooKeeper's samples, read by the real ZooKeeper watcher, in the catalog. */
class DemoTest {

    @Test
    void demo_fillsTheCatalogWithEverySample() throws Exception {
        var providers = RegistriesConfig.loadProviders();
        try (Demo demo = Demo.start();
                Bridge bridge =
                        Bridge.start(BridgeConfig.parse("demo", demo.config(0, 0, 0), providers), null, providers)) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> bridge.ready() && bridge.aggregator().current().serviceCount() == 5);
            MeshSnapshot catalog = bridge.aggregator().current();
            assertThat(catalog.services().keySet())
                    .containsExactly(
                            "orders-service.services.zookeeper",
                            "org.apache.dubbo.samples.cartservice.dubbo",
                            "org.apache.dubbo.samples.greeterservice.v-1-0-0.dubbo",
                            "org.apache.dubbo.samples.greeterservice.v-2-0-0.dubbo",
                            "shop-provider.dubbo");

            MeshService greeter = catalog.service("org.apache.dubbo.samples.greeterservice.v-1-0-0.dubbo");
            assertThat(greeter.endpoints())
                    .extracting(e -> e.port("dubbo"), Endpoint::weight, Endpoint::routable)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple(20880, 100, true),
                            org.assertj.core.groups.Tuple.tuple(20881, 50, true),
                            org.assertj.core.groups.Tuple.tuple(20882, 100, false));
            MeshService shop = catalog.service("shop-provider.dubbo");
            assertThat(shop.endpoints())
                    .singleElement()
                    .satisfies(e ->
                            assertThat(e.ports()).containsEntry("dubbo", 20890).containsEntry("tri", 50062));
            MeshService orders = catalog.service("orders-service.services.zookeeper");
            assertThat(orders.endpoints())
                    .extracting(e -> e.labels().get("zone"))
                    .containsExactlyInAnyOrder("zone-a", "zone-b");
            // the Spring Cloud instances are real HTTP servers: each answers with its name
            for (var e : orders.endpoints()) {
                HttpResponse<String> r = HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + e.port("http") + "/orders"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                assertThat(r.body()).startsWith("orders-service instance web-");
            }
            MeshService triple = catalog.service("org.apache.dubbo.samples.greeterservice.v-2-0-0.dubbo");
            assertThat(triple.endpoints())
                    .extracting(Endpoint::weight, Endpoint::routable)
                    .containsExactlyInAnyOrder(
                            org.assertj.core.groups.Tuple.tuple(100, true),
                            org.assertj.core.groups.Tuple.tuple(50, true),
                            org.assertj.core.groups.Tuple.tuple(100, false));

            HttpResponse<String> page = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort()
                                            + "/debug/catalog?service=greeter"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(page.body()).contains("\"shown\" : 2").contains("greeterservice.v-2-0-0.dubbo");
        }
    }
}
