package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboApplicationInstance;
import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboInterfaceInstance;
import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboServiceName;
import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;

import com.alibaba.nacos.api.naming.pojo.Instance;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NacosServiceMapperTest {

    private final RegistryConfig config = NacosTestSupport.config("prod", "n:8848", "servicePorts: {grpc: 9000}");
    private final NacosServiceMapper mapper = new NacosServiceMapper(config, config.options(NacosOptions.class));

    private static ServiceKey key(String group, String name) {
        return new ServiceKey("nacos", "prod", "public", group, name, "");
    }

    @ParameterizedTest(name = "Nacos weight {0} -> {1}")
    @CsvSource({"1.0, 100", "0.5, 50", "2.5, 250", "0.01, 1", "0.004, 1", "0.0, 0", "10000, 1000000", "-1, 0"})
    void weight_isScaledByTheOrdinaryInstanceWeight(double nacos, int expected) {
        assertThat(NacosServiceMapper.weight(nacos)).isEqualTo(expected);
    }

    @Test
    void springCloudService_getsHigressHost_httpPort_clusterAndMetadataLabels() {
        Instance a = springCloudInstance("10.0.0.1", 8080, 1.0, Map.of("zone", "eu west 1", "version", "v2"));
        Instance b = springCloudInstance("10.0.0.2", 8081, 0.5, Map.of());
        b.setClusterName("BACKUP");
        b.setHealthy(false);
        ServiceUpsert u =
                mapper.map(key("TRADE_GROUP", "Order_Service"), List.of(b, a)).upsert();

        assertThat(u.host()).isEqualTo("order-service.trade-group.public.nacos");
        assertThat(u.ports()).containsExactly(new ServicePort("http", 80, Protocol.HTTP));
        assertThat(u.endpoints()).hasSize(2);
        Endpoint first = u.endpoints().get(0);
        assertThat(first.address()).isEqualTo("10.0.0.1");
        assertThat(first.port("http")).isEqualTo(8080);
        assertThat(first.weight()).isEqualTo(100);
        assertThat(first.labels())
                .containsEntry("nacos.io/cluster", "DEFAULT")
                .containsEntry("zone", "eu_west_1")
                .containsEntry("version", "v2");
        Endpoint second = u.endpoints().get(1);
        assertThat(second.weight()).isEqualTo(50);
        assertThat(second.health()).isEqualTo(Health.UNHEALTHY);
        assertThat(second.labels()).containsEntry("nacos.io/cluster", "BACKUP");
    }

    @Test
    void protocolMetadata_namesThePort_andServicePortsApply() {
        Instance grpc = springCloudInstance("10.0.0.1", 50051, 1.0, Map.of("protocol", "grpc"));
        Instance https = springCloudInstance("10.0.0.2", 8443, 1.0, Map.of("secure", "true"));
        ServiceUpsert u =
                mapper.map(key("DEFAULT_GROUP", "api"), List.of(grpc, https)).upsert();
        assertThat(u.ports())
                .containsExactlyInAnyOrder(
                        new ServicePort("grpc", 9000, Protocol.GRPC), new ServicePort("https", 443, Protocol.HTTPS));
    }

    @Test
    void disabledAndZeroWeightInstances_areKeptButNotRoutable() {
        Instance disabled = springCloudInstance("10.0.0.1", 8080);
        disabled.setEnabled(false);
        Instance zero = springCloudInstance("10.0.0.2", 8080, 0.0, Map.of());
        ServiceUpsert u =
                mapper.map(key("DEFAULT_GROUP", "api"), List.of(disabled, zero)).upsert();
        assertThat(u.endpoints()).hasSize(2).noneMatch(Endpoint::routable);
    }

    @Test
    void dubboInterface_getsExactlyTheZookeeperHost_andDubboWeight() {
        String url = "dubbo://10.0.0.5:20880/org.demo.Greeter?interface=org.demo.Greeter&version=1.0.0&group=g1"
                + "&application=demo&weight=30&methods=a,b&timestamp=1";
        ServiceUpsert u = mapper.map(key("DEFAULT_GROUP", dubboServiceName(url)), List.of(dubboInterfaceInstance(url)))
                .upsert();
        assertThat(u.host())
                .isEqualTo(DubboNaming.interfaceHost(
                        DubboNaming.interfaceTemplate(null), "prod", "org.demo.Greeter", "1.0.0", "g1", "demo"))
                .isEqualTo("org.demo.greeter.v-1-0-0.g-g1.dubbo");
        assertThat(u.ports()).containsExactly(new ServicePort("dubbo", 20880, Protocol.DUBBO));
        Endpoint e = u.endpoints().get(0);
        assertThat(e.weight()).isEqualTo(30);
        assertThat(e.labels())
                .containsEntry("application", "demo")
                .doesNotContainKeys("methods", "timestamp", "protocol", "path", "category");
        assertThat(u.labels())
                .containsEntry("dubbo.interface", "org.demo.Greeter")
                .containsEntry("dubbo.group", "g1");
    }

    @Test
    void dubboInterfaceWithoutWeightParameter_usesTheNacosWeight_andEmptyVersionGroupGiveTheBareHost() {
        String url = "tri://10.0.0.6:50051/org.demo.Echo?interface=org.demo.Echo&application=demo";
        Instance i = dubboInterfaceInstance(url);
        i.setWeight(0.5);
        ServiceUpsert u = mapper.map(key("DEFAULT_GROUP", dubboServiceName(url)), List.of(i))
                .upsert();
        assertThat(dubboServiceName(url)).isEqualTo("providers:org.demo.Echo::");
        assertThat(u.host()).isEqualTo("org.demo.echo.dubbo");
        assertThat(u.ports()).containsExactly(new ServicePort("tri", 50051, Protocol.TRIPLE));
        assertThat(u.endpoints().get(0).weight()).isEqualTo(50);
    }

    @Test
    void dubboApplication_malformedEndpointsAreSkipped_withTheirReason() {
        Instance good = dubboApplicationInstance("10.0.0.1", 20880, "[{\"port\":20880,\"protocol\":\"dubbo\"}]", "r");
        Instance bad = dubboApplicationInstance("10.0.0.2", 20880, "[{\"port\":70000,\"protocol\":\"dubbo\"}]", "r");
        NacosServiceMapper.Result r = mapper.map(key("DEFAULT_GROUP", "shop"), List.of(good, bad));
        assertThat(r.upsert().host()).isEqualTo("shop.dubbo");
        assertThat(r.upsert().endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.1");
        assertThat(r.skipped()).singleElement().satisfies(s -> {
            assertThat(s.item()).isEqualTo("public/DEFAULT_GROUP/shop instance 10.0.0.2:20880");
            assertThat(s.reason()).contains("70000");
        });
    }

    @Test
    void serviceNameThatCannotBeAHost_isSkipped_notSent() {
        NacosServiceMapper.Result r = mapper.map(key("DEFAULT_GROUP", "ab.".repeat(90)), List.of());
        assertThat(r.upsert()).isNull();
        assertThat(r.skipped())
                .singleElement()
                .satisfies(s -> assertThat(s.reason()).contains("253"));
    }

    @Test
    void sameInstances_inAnyOrder_giveTheSameUpsert() {
        Instance a = springCloudInstance("10.0.0.1", 8080);
        Instance b = springCloudInstance("10.0.0.2", 8080);
        assertThat(mapper.map(key("G", "s"), List.of(a, b)).upsert())
                .isEqualTo(mapper.map(key("G", "s"), List.of(b, a)).upsert());
    }
}
