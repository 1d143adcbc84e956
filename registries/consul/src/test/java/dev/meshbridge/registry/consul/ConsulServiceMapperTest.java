package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.model.catalog.ImmutableServiceWeights;
import org.kiwiproject.consul.model.health.HealthCheck;
import org.kiwiproject.consul.model.health.ImmutableHealthCheck;
import org.kiwiproject.consul.model.health.ImmutableNode;
import org.kiwiproject.consul.model.health.ImmutableService;
import org.kiwiproject.consul.model.health.ImmutableServiceHealth;
import org.kiwiproject.consul.model.health.ServiceHealth;

/** How Consul's health entries become endpoints, case by case. */
class ConsulServiceMapperTest {

    private final RegistryStatus status = new RegistryStatus("c1", "consul");

    private ConsulServiceMapper mapper(ConsulOptions options) {
        return new ConsulServiceMapper(
                new RegistryConfig(
                        "consul",
                        "c1",
                        List.of("127.0.0.1:8500"),
                        dev.meshbridge.core.config.EmptyServicePolicy.DELETE,
                        java.time.Duration.ofSeconds(30),
                        new TreeMap<>(Map.of("http", 8080)),
                        options),
                options,
                status);
    }

    private static ConsulOptions withWarning(ConsulOptions.WarningHealth warning, ConsulOptions.BareTags bareTags) {
        ConsulOptions d = ConsulOptions.defaults();
        return new ConsulOptions(
                d.datacenters(),
                d.token(),
                d.namespace(),
                d.partition(),
                d.serviceTags(),
                d.allowServices(),
                d.denyServices(),
                d.blockingWait(),
                d.consistency(),
                warning,
                bareTags,
                d.hostTemplate(),
                d.defaultProtocol(),
                d.zoneMetaKey(),
                d.tls());
    }

    private static HealthCheck check(String id, String status) {
        return ImmutableHealthCheck.builder()
                .node("n1")
                .checkId(id)
                .name(id)
                .status(status)
                .build();
    }

    private static ImmutableService.Builder service(String id) {
        return ImmutableService.builder()
                .id(id)
                .service("web")
                .address("10.0.0.1")
                .port(8080);
    }

    private static ServiceHealth entry(ImmutableService.Builder service, HealthCheck... checks) {
        return ImmutableServiceHealth.builder()
                .node(ImmutableNode.builder()
                        .node("n1")
                        .address("10.9.9.9")
                        .datacenter("dc1")
                        .build())
                .service(service.build())
                .addChecks(check("serfHealth", "passing"))
                .addChecks(checks)
                .build();
    }

    private ServiceUpsert map(ConsulServiceMapper m, ServiceHealth... entries) {
        ServiceKey key = m.key("dc1", "web");
        return m.map(key, m.host("dc1", "web"), List.of(entries));
    }

    @Test
    void aggregateStatus_maintenanceBeatsCriticalBeatsWarning() {
        ConsulServiceMapper m = mapper(ConsulOptions.defaults());

        assertThat(m.health(List.of(check("a", "passing"), check("b", "warning"))))
                .isEqualTo(Health.HEALTHY);
        assertThat(m.health(List.of(check("a", "warning"), check("b", "critical"))))
                .isEqualTo(Health.UNHEALTHY);
        assertThat(m.health(List.of(check("a", "critical"), check("_service_maintenance:web-1", "critical"))))
                .isEqualTo(Health.DRAINING);
        assertThat(m.health(List.of(check("_node_maintenance", "critical")))).isEqualTo(Health.DRAINING);
        assertThat(m.health(List.of())).isEqualTo(Health.HEALTHY);
        assertThat(mapper(withWarning(ConsulOptions.WarningHealth.UNHEALTHY, ConsulOptions.BareTags.LABEL))
                        .health(List.of(check("a", "warning"))))
                .isEqualTo(Health.UNHEALTHY);
    }

    @Test
    void weights_scaleSoConsulsDefaultIsAnOrdinaryInstance_andAreCapped() {
        ConsulServiceMapper m = mapper(ConsulOptions.defaults());

        ServiceUpsert u = map(
                m,
                entry(service("a").address("10.0.0.1")),
                entry(service("b").address("10.0.0.2").weights(weights(5, 1))),
                entry(service("c").address("10.0.0.3").weights(weights(65535, 1))),
                entry(service("d").address("10.0.0.4").weights(weights(3, 0)), check("service:d", "warning")));

        assertThat(u.endpoints())
                .extracting(Endpoint::address, Endpoint::weight, Endpoint::routable)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("10.0.0.1", 100, true),
                        org.assertj.core.groups.Tuple.tuple("10.0.0.2", 500, true),
                        org.assertj.core.groups.Tuple.tuple("10.0.0.3", Endpoint.MAX_WEIGHT, true),
                        org.assertj.core.groups.Tuple.tuple("10.0.0.4", 0, false));
    }

    private static ImmutableServiceWeights weights(int passing, int warning) {
        return ImmutableServiceWeights.builder()
                .passing(passing)
                .warning(warning)
                .build();
    }

    @Test
    void emptyServiceAddress_fallsBackToTheNodeAddress() {
        ServiceUpsert u =
                map(mapper(ConsulOptions.defaults()), entry(service("a").address("")));

        assertThat(u.endpoints().get(0).address()).isEqualTo("10.9.9.9");
    }

    @Test
    void badInstances_areSkippedAndReported_theRestKept() {
        ServiceUpsert u = map(
                mapper(ConsulOptions.defaults()),
                entry(service("a").port(0)),
                entry(service("b").address("10.0.0.2")),
                entry(service("c").address("10.0.0.2")));

        assertThat(u.endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.2");
        assertThat(status.skippedCount()).isEqualTo(2);
    }

    @Test
    void protocol_fromMetaThenSecureTagThenDefault_namesThePortWithConfiguredServicePorts() {
        ConsulServiceMapper m = mapper(ConsulOptions.defaults());

        ServiceUpsert u = map(
                m,
                entry(service("a").address("10.0.0.1").putMeta("protocol", "h2")),
                entry(service("b").address("10.0.0.2").addTags("secure=true")),
                entry(service("c").address("10.0.0.3")),
                entry(service("d").address("10.0.0.4").putMeta("protocol", "thrift")));

        assertThat(u.ports())
                .containsExactlyInAnyOrder(
                        new ServicePort("http2", 80, Protocol.HTTP2),
                        new ServicePort("https", 443, Protocol.HTTPS),
                        new ServicePort("http", 8080, Protocol.HTTP));
        assertThat(u.endpoints())
                .extracting(e -> e.ports().firstKey())
                .containsExactly("http2", "https", "http", "http");
    }

    @Test
    void bareTags_becomeTrueLabelsOrAreDropped() {
        assertThat(mapper(ConsulOptions.defaults())
                        .labels(List.of("primary", "env=prod"), Map.of())
                        .labels())
                .containsExactly(Map.entry("env", "prod"), Map.entry("primary", "true"));
        assertThat(mapper(withWarning(ConsulOptions.WarningHealth.HEALTHY, ConsulOptions.BareTags.DROP))
                        .labels(List.of("primary", "env=prod"), Map.of())
                        .labels())
                .containsExactly(Map.entry("env", "prod"));
    }

    @Test
    void host_followsTheTemplate_andSanitizesConsulNames() {
        ConsulServiceMapper m = mapper(ConsulOptions.defaults());

        assertThat(m.host("dc1", "Order_Service")).isEqualTo("order-service.dc1.consul");
        assertThat(m.key("dc1", "web")).isEqualTo(new ServiceKey("consul", "c1", "dc1", "", "web", ""));
    }

    @Test
    void nextIndex_followsConsulsRulesForBlockingClients() {
        assertThat(ConsulWatcher.nextIndex(java.math.BigInteger.TEN, java.math.BigInteger.valueOf(12)))
                .isEqualTo(12);
        assertThat(ConsulWatcher.nextIndex(java.math.BigInteger.TEN, java.math.BigInteger.valueOf(3)))
                .isZero();
        assertThat(ConsulWatcher.nextIndex(java.math.BigInteger.TEN, java.math.BigInteger.ZERO))
                .isEqualTo(1);
        assertThat(ConsulWatcher.waitParameter(java.time.Duration.ofSeconds(90)))
                .isEqualTo("90s");
        assertThat(ConsulWatcher.waitParameter(java.time.Duration.ofMinutes(5))).isEqualTo("5m");
        assertThat(ConsulWatcher.waitParameter(java.time.Duration.ofMillis(1500)))
                .isEqualTo("2s");
    }
}
