package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.net.HostAndPort;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.ConsulException;
import org.kiwiproject.consul.model.ConsulResponse;
import org.kiwiproject.consul.model.agent.ImmutableRegistration;
import org.kiwiproject.consul.model.agent.Registration;
import org.kiwiproject.consul.model.health.ServiceHealth;
import org.kiwiproject.consul.option.ImmutableQueryOptions;
import org.kiwiproject.consul.option.QueryOptions;

/** The test server keeps Consul's contract, as the real kiwiproject client sees it. */
class ConsulTestServerTest {

    private ConsulTestServer server;
    private Consul consul;

    @BeforeEach
    void start() throws Exception {
        server = ConsulTestServer.builder()
                .acl("root")
                .token("reader", ConsulTestServer.Policy.readOnly("web"))
                .start();
        consul = client("root");
    }

    @AfterEach
    void stop() {
        consul.destroy();
        server.close();
    }

    private Consul client(String token) {
        return Consul.builder()
                .withHostAndPort(HostAndPort.fromString(server.address()))
                .withTokenAuth(token)
                .withReadTimeoutMillis(30_000)
                .build();
    }

    private void register(String id, String name, int port) {
        consul.agentClient()
                .register(ImmutableRegistration.builder()
                        .id(id)
                        .name(name)
                        .address("10.0.0.1")
                        .port(port)
                        .check(Registration.RegCheck.ttl(30))
                        .build());
    }

    private static QueryOptions blockingQuery(BigInteger index, String wait) {
        return ImmutableQueryOptions.builder().index(index).wait(wait).build();
    }

    @Test
    void everyRead_carriesAnIndexAboveZero() {
        ConsulResponse<Map<String, List<String>>> services =
                consul.catalogClient().getServices();
        ConsulResponse<List<ServiceHealth>> unknown = consul.healthClient().getAllServiceInstances("nothing-here");

        assertThat(services.getIndex()).isPositive();
        assertThat(services.getResponse()).containsOnlyKeys("consul");
        assertThat(unknown.getIndex()).isPositive();
        assertThat(unknown.getResponse()).isEmpty();
    }

    @Test
    void blockingQuery_withoutChange_endsAtTheWaitWithTheSameIndex() {
        BigInteger index = consul.catalogClient().getServices().getIndex();
        long started = System.nanoTime();

        ConsulResponse<Map<String, List<String>>> again =
                consul.catalogClient().getServices(blockingQuery(index, "300ms"));

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(again.getIndex()).isEqualTo(index);
    }

    @Test
    void blockingQuery_returnsOnRegistrationWithAHigherIndex() throws Exception {
        BigInteger index = consul.catalogClient().getServices().getIndex();
        CompletableFuture<ConsulResponse<Map<String, List<String>>>> waiting =
                CompletableFuture.supplyAsync(() -> consul.catalogClient().getServices(blockingQuery(index, "20s")));

        register("web-1", "web", 8080);

        ConsulResponse<Map<String, List<String>>> changed = waiting.get(10, TimeUnit.SECONDS);
        assertThat(changed.getIndex()).isGreaterThan(index);
        assertThat(changed.getResponse()).containsKey("web");
    }

    @Test
    void ttlHeartbeatKeepingTheStatus_doesNotMoveTheHealthIndex() throws Exception {
        register("web-1", "web", 8080);
        consul.agentClient().pass("web-1");
        BigInteger index = consul.healthClient().getAllServiceInstances("web").getIndex();

        consul.agentClient().pass("web-1");
        ConsulResponse<List<ServiceHealth>> same =
                consul.healthClient().getAllServiceInstances("web", blockingQuery(index, "300ms"));
        consul.agentClient().fail("web-1");
        ConsulResponse<List<ServiceHealth>> failed =
                consul.healthClient().getAllServiceInstances("web", blockingQuery(index, "10s"));

        assertThat(same.getIndex()).isEqualTo(index);
        assertThat(failed.getIndex()).isGreaterThan(index);
        assertThat(failed.getResponse().get(0).getChecks())
                .anySatisfy(c -> assertThat(c.getStatus()).isEqualTo("critical"));
    }

    @Test
    void healthEntry_hasNodeWithTaggedAddressesAndNodeAndServiceChecks() {
        register("web-1", "web", 8080);

        ServiceHealth entry = consul.healthClient()
                .getAllServiceInstances("web")
                .getResponse()
                .get(0);

        assertThat(entry.getNode().getDatacenter()).contains("dc1");
        assertThat(entry.getNode().getTaggedAddresses().orElseThrow().getWan()).isEqualTo("127.0.0.1");
        assertThat(entry.getNode().getTaggedAddresses().orElseThrow().getLan()).contains("127.0.0.1");
        assertThat(entry.getService().getAddress()).isEqualTo("10.0.0.1");
        assertThat(entry.getChecks()).extracting(c -> c.getCheckId()).containsExactly("serfHealth", "service:web-1");
    }

    @Test
    void requestFieldNames_areMatchedWithoutCase() throws Exception {
        HttpResponse<String> put = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://" + server.address() + "/v1/agent/service/register"))
                                .header("X-Consul-Token", "root")
                                .PUT(
                                        HttpRequest.BodyPublishers.ofString(
                                                "{\"name\":\"lower\",\"id\":\"lower-1\",\"port\":9000,\"address\":\"10.0.0.9\"}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());

        assertThat(put.statusCode()).isEqualTo(200);
        ServiceHealth entry = consul.healthClient()
                .getAllServiceInstances("lower")
                .getResponse()
                .get(0);
        assertThat(entry.getService().getId()).isEqualTo("lower-1");
        assertThat(entry.getService().getPort()).isEqualTo(9000);
    }

    @Test
    void unknownToken_isRefusedWithAclNotFound() {
        Consul stranger = client("not-a-token");
        try {
            assertThatThrownBy(() -> stranger.catalogClient().getServices())
                    .isInstanceOf(ConsulException.class)
                    .hasMessageContaining("403")
                    .hasMessageContaining("ACL not found");
        } finally {
            stranger.destroy();
        }
    }

    @Test
    void readOnlyToken_seesOnlyItsServicesAndCannotRegister() {
        register("web-1", "web", 8080);
        register("db-1", "db", 5432);
        Consul reader = client("reader");
        try {
            assertThat(reader.catalogClient().getServices().getResponse()).containsOnlyKeys("web");
            assertThat(reader.healthClient().getAllServiceInstances("db").getResponse())
                    .isEmpty();
            assertThatThrownBy(() -> reader.agentClient()
                            .register(ImmutableRegistration.builder()
                                    .id("web-2")
                                    .name("web")
                                    .port(1)
                                    .build()))
                    .hasMessageContaining("Permission denied");
        } finally {
            reader.destroy();
        }
    }

    @Test
    void unknownDatacenter_getsNoPathToDatacenter() {
        assertThatThrownBy(() -> consul.catalogClient()
                        .getServices(ImmutableQueryOptions.builder()
                                .datacenter("nowhere")
                                .build()))
                .hasMessageContaining("500")
                .hasMessageContaining("No path to datacenter");
    }

    @Test
    void namespaceOnConsulCe_isRejectedAsEnterpriseOnly() {
        assertThatThrownBy(() -> consul.catalogClient()
                        .getServices(ImmutableQueryOptions.builder()
                                .namespace("team-a")
                                .build()))
                .hasMessageContaining("400")
                .hasMessageContaining("Namespaces are a Consul Enterprise feature");
    }

    @Test
    void goDurations_parseAsConsulDoes() {
        assertThat(ConsulTestServer.parseGoDuration("1m30s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(ConsulTestServer.parseGoDuration("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(ConsulTestServer.parseGoDuration("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(ConsulTestServer.parseGoDuration("10")).isNull();
    }
}
