package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.ConfigProblem;
import dev.meshbridge.mcp.McpOptions.CredentialForm;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class McpOptionsTest {

    static McpOptions parse(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        McpOptions options = McpOptions.parse(root.section("mcp"));
        root.accept("registries"); // another module's section
        root.finish();
        return options;
    }

    @Test
    void parse_noSection_givesTheDefaults() throws Exception {
        McpOptions options = parse("registries: []\n");

        assertThat(options).isEqualTo(McpOptions.defaults());
        assertThat(options.enabled()).isTrue();
        assertThat(options.bindAddress()).isEqualTo("0.0.0.0");
        assertThat(options.port()).isEqualTo(15051);
        assertThat(options.namespace()).isEqualTo("meshbridge");
        assertThat(options.revision()).isEmpty();
        assertThat(options.exportTo()).isEmpty();
        assertThat(options.endpointMode()).isEqualTo(EndpointMode.INLINE);
        assertThat(options.resourceName().toString()).isEqualTo("{host}");
        assertThat(options.initialSyncTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(options.ingress().enabled()).isTrue();
        assertThat(options.ingress().namespace()).isEqualTo("istio-system");
        assertThat(options.ingress().gatewaySelector()).containsExactly(Map.entry("istio", "ingressgateway"));
        assertThat(options.ingress().credentialForm()).isEqualTo(CredentialForm.KUBERNETES_GATEWAY);
    }

    /** The example of the README, verbatim. */
    @Test
    void parse_readmeExample_givesEveryValue() throws Exception {
        McpOptions options = parse("""
                mcp:
                  enabled: true
                  bindAddress: 0.0.0.0
                  port: 15051
                  namespace: dubbo-mesh
                  revision: canary
                  exportTo: [".", istio-system]
                  endpointMode: workload-entry
                  resourceName: "{registry}-{host}"
                  initialSyncTimeout: 45s
                  ingress:
                    enabled: true
                    namespace: istio-ingress
                    gatewaySelector:
                      istio: ingress
                      app.kubernetes.io/name: edge
                    credentialForm: namespace-name
                """);

        assertThat(options.namespace()).isEqualTo("dubbo-mesh");
        assertThat(options.revision()).isEqualTo("canary");
        assertThat(options.exportTo()).containsExactly(".", "istio-system");
        assertThat(options.endpointMode()).isEqualTo(EndpointMode.WORKLOAD_ENTRY);
        assertThat(options.resourceName().variables()).containsExactlyInAnyOrder("registry", "host");
        assertThat(options.initialSyncTimeout()).isEqualTo(Duration.ofSeconds(45));
        assertThat(options.ingress().namespace()).isEqualTo("istio-ingress");
        assertThat(options.ingress().gatewaySelector())
                .containsExactly(Map.entry("app.kubernetes.io/name", "edge"), Map.entry("istio", "ingress"));
        assertThat(options.ingress().credentialForm()).isEqualTo(CredentialForm.NAMESPACE_NAME);
        assertThat(options.ingress().credentialName("shop", "shop-tls")).isEqualTo("shop/shop-tls");
    }

    @Test
    void parse_badIngressValues_areRefusedWithLineAndField() {
        String yaml = """
                mcp:
                  ingress:
                    namespace: Istio_System
                    gatewaySelector: {}
                    credentialForm: file
                    selector: {istio: ingressgateway}
                """;

        assertThatThrownBy(() -> parse(yaml)).isInstanceOfSatisfying(ConfigException.class, e -> {
            List<ConfigProblem> problems = e.problems();
            assertThat(problems)
                    .extracting(ConfigProblem::path, ConfigProblem::line)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("mcp.ingress.namespace", 3),
                            org.assertj.core.groups.Tuple.tuple("mcp.ingress.gatewaySelector", 4),
                            org.assertj.core.groups.Tuple.tuple("mcp.ingress.credentialForm", 5),
                            org.assertj.core.groups.Tuple.tuple("mcp.ingress.selector", 6));
            assertThat(problems.get(1).message()).contains("at least one label");
            assertThat(problems.get(2).message())
                    .contains("kubernetes-gateway")
                    .contains("namespace-name")
                    .contains("name");
        });
        assertThatThrownBy(() -> parse("mcp:\n  ingress:\n    gatewaySelector: {\"bad key!\": x}\n"))
                .isInstanceOfSatisfying(
                        ConfigException.class,
                        e -> assertThat(e.problems().get(0).message())
                                .contains("'bad key!: x' is not a valid Kubernetes label"));
    }

    @Test
    void credentialForms_nameTheSecretAsIstiodReadsIt() {
        assertThat(CredentialForm.KUBERNETES_GATEWAY.credentialName("shop", "tls"))
                .isEqualTo("kubernetes-gateway://shop/tls");
        assertThat(CredentialForm.NAMESPACE_NAME.credentialName("shop", "tls")).isEqualTo("shop/tls");
        assertThat(CredentialForm.NAME.credentialName("shop", "tls")).isEqualTo("tls");
    }

    @Test
    void parse_badValues_areRefusedWithLineAndField() {
        String yaml = """
                mcp:
                  bindAddress: "not an address"
                  port: 70000
                  namespace: Dubbo_Mesh
                  revision: "bad rev!"
                  exportTo: ["*", team-a]
                  endpointMode: sidecar
                  resourceName: "{registry}.mesh"
                  nmespace: typo
                """;

        assertThatThrownBy(() -> parse(yaml)).isInstanceOfSatisfying(ConfigException.class, e -> {
            List<ConfigProblem> problems = e.problems();
            assertThat(problems)
                    .extracting(ConfigProblem::path, ConfigProblem::line)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("mcp.bindAddress", 2),
                            org.assertj.core.groups.Tuple.tuple("mcp.port", 3),
                            org.assertj.core.groups.Tuple.tuple("mcp.namespace", 4),
                            org.assertj.core.groups.Tuple.tuple("mcp.revision", 5),
                            org.assertj.core.groups.Tuple.tuple("mcp.exportTo", 6),
                            org.assertj.core.groups.Tuple.tuple("mcp.endpointMode", 7),
                            org.assertj.core.groups.Tuple.tuple("mcp.resourceName", 8),
                            org.assertj.core.groups.Tuple.tuple("mcp.nmespace", 9));
            assertThat(problems.get(4).message()).contains("'*'");
            assertThat(problems.get(5).message()).contains("inline").contains("workload-entry");
            assertThat(problems.get(6).message()).contains("{host}");
            assertThat(problems.get(7).message()).contains("did you mean 'namespace'");
        });
    }

    @Test
    void constructor_refusesATemplateWithoutHost() {
        assertThatThrownBy(
                        () -> McpOptions.builder().resourceName("{registry}.x").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("{host}");
    }
}
