package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.Secret;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

class McpBridgeConverterTest {

    /** The spec of an McpBridge as Higress documents it (nacos2, zookeeper, consul, static), as parsed JSON. */
    private static Object spec(String yaml) {
        return new Yaml().<Map<String, Object>>load(yaml).get("spec");
    }

    private static final String HIGRESS_SPEC = """
            spec:
              registries:
              - type: nacos2
                name: my-nacos
                domain: 192.168.0.10
                port: 8848
                nacosNamespaceId: d8ac64f3-xxxx-xxxx-xxxx-47a814ecf358
                nacosGroups: [DEFAULT_GROUP]
                nacosRefreshInterval: 30000000000
                authSecretName: nacos-auth
              - type: zookeeper
                name: my-zk
                domain: zk.example.com
                port: 2181
                zkServicesPath: [/dubbo, /services]
                enableMCPServer: false
                protocol: http
              - type: consul
                name: my-consul
                domain: consul.example.com
                port: 8500
                consulDatacenter: dc1
                authSecretName: consul-auth
              - type: static
                name: my-static
                domain: 1.1.1.1:80
                port: 80
            """;

    @Test
    void convert_higressRegistries_becomeRegistryConfigsWithHigressFieldNames() {
        McpBridgeConverter.Result r = McpBridgeConverter.convert(
                "higress-system", "default", spec(HIGRESS_SPEC), HigressShapedProviders.all());

        assertThat(r.problems()).isEmpty();
        assertThat(r.registries())
                .extracting(RegistryConfig::type, RegistryConfig::name, RegistryConfig::addresses)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("nacos", "my-nacos", List.of("192.168.0.10:8848")),
                        org.assertj.core.groups.Tuple.tuple("zookeeper", "my-zk", List.of("zk.example.com:2181")),
                        org.assertj.core.groups.Tuple.tuple("consul", "my-consul", List.of("consul.example.com:8500")));
        assertThat(r.registries().get(0).options(HigressShapedProviders.NacosOptions.class))
                .isEqualTo(new HigressShapedProviders.NacosOptions(
                        "d8ac64f3-xxxx-xxxx-xxxx-47a814ecf358",
                        List.of("DEFAULT_GROUP"),
                        Duration.ofSeconds(30),
                        // authSecretName: Higress's keys of the Secret in the McpBridge's namespace
                        Secret.kubernetes("higress-system", "nacos-auth", "nacosUsername"),
                        Secret.kubernetes("higress-system", "nacos-auth", "nacosPassword")));
        assertThat(r.registries().get(2).options(HigressShapedProviders.ConsulOptions.class))
                .isEqualTo(new HigressShapedProviders.ConsulOptions(
                        "dc1", Secret.kubernetes("higress-system", "consul-auth", "consulToken")));
        assertThat(r.registries().get(1).options(HigressShapedProviders.ZookeeperOptions.class))
                .isEqualTo(new HigressShapedProviders.ZookeeperOptions(List.of("/dubbo", "/services")));
        assertThat(r.notes())
                .containsExactly(
                        "spec.registries[1]: protocol ignored (Higress only)",
                        "spec.registries[3] (type static, name my-static) is skipped: the bridge has no static registry");
    }

    @Test
    void convert_authSecretName_entrysOwnCredentialWins_andOtherTypesDropItWithANote() {
        Object spec = spec("""
                spec:
                  registries:
                  - type: nacos2
                    name: n
                    domain: nacos.example.com
                    port: 8848
                    authSecretName: nacos-auth
                    nacosUsername: fixed-user
                  - type: zookeeper
                    name: z
                    domain: zk.example.com
                    port: 2181
                    authSecretName: zk-auth
                """);
        McpBridgeConverter.Result r = McpBridgeConverter.convert("ns1", "default", spec, HigressShapedProviders.all());

        assertThat(r.problems()).isEmpty();
        HigressShapedProviders.NacosOptions nacos =
                r.registries().get(0).options(HigressShapedProviders.NacosOptions.class);
        assertThat(nacos.nacosUsername()).isEqualTo(Secret.literal("fixed-user"));
        assertThat(nacos.nacosPassword()).isEqualTo(Secret.kubernetes("ns1", "nacos-auth", "nacosPassword"));
        assertThat(r.notes())
                .containsExactly(
                        "spec.registries[1]: authSecretName ignored (Higress reads it for nacos and consul only)");
    }

    @Test
    void convert_unknownFieldOrMissingName_refusedNamingTheResourceField() {
        Object spec = spec("""
                spec:
                  registries:
                  - type: static
                    name: skipped-first
                    domain: 1.1.1.1
                  - type: zookeeper
                    name: my-zk
                    domain: zk.example.com
                    zkServicePath: [/dubbo]
                  - type: consul
                    domain: consul.example.com
                """);

        McpBridgeConverter.Result r =
                McpBridgeConverter.convert("higress-system", "default", spec, HigressShapedProviders.all());

        assertThat(r.accepted()).isFalse();
        assertThat(r.problems())
                .containsExactlyInAnyOrder(
                        "spec.registries[2].name: required field is missing",
                        "spec.registries[1].zkServicePath: unknown field; did you mean 'zkServicesPath'? (known here:"
                                + " addresses, deletionGuard, domain, emptyServiceGrace, emptyServicePolicy,"
                                + " hostNameRefresh, limits, name, nonIpAddress, port, reregistrationWindow,"
                                + " servicePorts, syncTimeout, type, warmUp, zkServicesPath)");
    }

    @Test
    void convert_unknownType_refused_butHigressOnlyTypesAreSkipped() {
        McpBridgeConverter.Result r = McpBridgeConverter.convert("ns", "mb", spec("""
                        spec:
                          registries:
                          - {type: zookeper, name: zk, domain: zk.example.com}
                          - {type: dns, name: d, domain: example.com}
                        """), HigressShapedProviders.all());

        assertThat(r.problems())
                .singleElement()
                .asString()
                .startsWith("spec.registries[0].type: unknown registry type 'zookeper'");
        assertThat(r.notes())
                .containsExactly("spec.registries[1] (type dns, name d) is skipped: the bridge has no dns registry");
    }

    @Test
    void convert_noRegistries_emptyList() {
        McpBridgeConverter.Result r =
                McpBridgeConverter.convert("ns", "mb", spec("spec: {}"), HigressShapedProviders.all());

        assertThat(r.accepted()).isTrue();
        assertThat(r.registries()).isEmpty();
    }
}
