package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * Real HTTP through a real Envoy ({@code envoyproxy/envoy}) that takes everything from the bridge over ADS, with the
 * bootstrap of the README: an Ingress routes {@code /orders} to a registry service whose instance is a real HTTP
 * server that echoes the request ({@code mendhak/http-https-echo}), with a prefix rewrite, and {@code /pay} to a
 * service not yet in the catalog.
 * Skipped where Docker is absent (as on the build machines, where the same configuration is checked by {@link
 * EnvoyConfigCheck} instead).
 */
@Testcontainers(disabledWithoutDocker = true)
class EnvoyIngressContainerTest {

    private static final String ENVOY_IMAGE = "envoyproxy/envoy:v1.31-latest";
    private static final String ECHO_IMAGE = "mendhak/http-https-echo:31";
    private static final int ECHO_PORT = 8080;

    @TempDir
    Path dir;

    private static String bootstrap(int xdsPort) {
        return """
                node: {id: edge-1, cluster: edge, metadata: {meshbridge.role: gateway}}
                dynamic_resources:
                  ads_config:
                    api_type: DELTA_GRPC
                    transport_api_version: V3
                    set_node_on_first_message_only: true
                    grpc_services: [{envoy_grpc: {cluster_name: meshbridge}}]
                  cds_config: {ads: {}, resource_api_version: V3}
                  lds_config: {ads: {}, resource_api_version: V3}
                static_resources:
                  clusters:
                    - name: meshbridge
                      type: STRICT_DNS
                      connect_timeout: 1s
                      typed_extension_protocol_options:
                        envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
                          "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
                          explicit_http_config: {http2_protocol_options: {}}
                      load_assignment:
                        cluster_name: meshbridge
                        endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: host.testcontainers.internal, port_value: %d}}}}]}]
                admin:
                  address: {socket_address: {address: 0.0.0.0, port_value: 9901}}
                """.formatted(xdsPort);
    }

    private static final String INGRESS = """
            apiVersion: networking.k8s.io/v1
            kind: Ingress
            metadata:
              name: shop
              namespace: shop
              annotations: {meshbridge.dev/rewrite-target: /}
            spec:
              rules:
              - http:
                  paths:
                  - path: /orders
                    pathType: Prefix
                    backend: {resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: orders.zookeeper}}
                  - path: /pay
                    pathType: Prefix
                    backend: {resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: payments.zookeeper}}
            """;

    @Test
    void httpThroughEnvoy_reachesTheRegistryInstance_andA503ForAMissingServiceTurnsIntoItsAnswer() throws Exception {
        try (IngressBed bed = new IngressBed(dir);
                GenericContainer<?> orders = new GenericContainer<>(ECHO_IMAGE).withExposedPorts(ECHO_PORT);
                GenericContainer<?> payments = new GenericContainer<>(ECHO_IMAGE).withExposedPorts(ECHO_PORT)) {
            orders.start();
            payments.start();
            bed.send(Upserts.springCloud(
                    "orders",
                    List.of(Upserts.springInstance(ip(orders), ECHO_PORT).build())));
            bed.write("shop.yaml", INGRESS);
            bed.awaitRoutes(2);
            org.testcontainers.Testcontainers.exposeHostPorts(bed.xds.server.port());
            try (GenericContainer<?> envoy = new GenericContainer<>(ENVOY_IMAGE)
                    .withCopyToContainer(Transferable.of(bootstrap(bed.xds.server.port())), "/etc/envoy/envoy.yaml")
                    .withExposedPorts(8080, 9901)
                    .waitingFor(Wait.forHttp("/ready").forPort(9901))) {
                envoy.start();
                HttpClient http = HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(5))
                        .build();
                String base = "http://" + envoy.getHost() + ":" + envoy.getMappedPort(8080);

                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    HttpResponse<String> r = get(http, base + "/orders/list?page=1");
                    assertThat(r.statusCode()).isEqualTo(200);
                    // the echo server names the path it got (the rewrite took /orders off) and its own host name
                    assertThat(r.body()).containsPattern("\"path\"\\s*:\\s*\"/list\"");
                    assertThat(r.body()).contains(hostname(orders));
                });
                HttpResponse<String> missing = get(http, base + "/pay");
                assertThat(missing.statusCode()).isEqualTo(503);
                assertThat(missing.body()).contains("payments.zookeeper is not in the catalog");

                bed.send(Upserts.springCloud(
                        "payments",
                        List.of(Upserts.springInstance(ip(payments), ECHO_PORT).build())));

                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    HttpResponse<String> r = get(http, base + "/pay");
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(r.body()).contains(hostname(payments));
                });
                assertThat(bed.xds.server.debugView().clients())
                        .allSatisfy(c -> assertThat(c.types().values())
                                .allSatisfy(t -> assertThat(t.nacks()).isZero()));
            }
        }
    }

    private static String ip(GenericContainer<?> c) {
        return c.getContainerInfo().getNetworkSettings().getNetworks().values().stream()
                .map(n -> n.getIpAddress())
                .filter(a -> a != null && !a.isEmpty())
                .findFirst()
                .orElseThrow();
    }

    private static String hostname(GenericContainer<?> c) {
        return c.getContainerInfo().getConfig().getHostName();
    }

    private static HttpResponse<String> get(HttpClient http, String url) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
