package dev.meshbridge.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.testing.TestRegistryProvider;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigNodeTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();

    private static List<RegistryConfig> load(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        List<RegistryConfig> r = RegistriesConfig.parse(root, PROVIDERS);
        root.finish();
        return r;
    }

    @Test
    void parse_validRegistries_givesTypedConfig() throws Exception {
        List<RegistryConfig> r = load("""
                registries:
                  - type: test
                    name: first
                    addresses: [10.0.0.1:2181, 10.0.0.2]
                    services: [a, b]
                    emptyServicePolicy: keep
                    emptyServiceGrace: 2m
                    servicePorts: {http: 8080}
                  - type: test
                    name: second
                    domain: reg.example.com
                    port: 8848
                """);
        assertThat(r).hasSize(2);
        assertThat(r.get(0).addresses()).containsExactly("10.0.0.1:2181", "10.0.0.2:9999");
        assertThat(r.get(0).emptyService()).isEqualTo(EmptyServicePolicy.keep(Duration.ofMinutes(2)));
        assertThat(r.get(0).servicePorts()).containsEntry("http", 8080);
        assertThat(r.get(0).options(TestRegistryProvider.Options.class).services())
                .containsExactly("a", "b");
        assertThat(r.get(1).addresses()).containsExactly("reg.example.com:8848");
    }

    @Test
    void parse_everyProblem_isReportedWithLineAndField() {
        assertThatThrownBy(() -> load("""
                registries:
                  - type: test
                    name: first
                    addresses: [10.0.0.1:99999]
                    emptyServicePolicy: sometimes
                  - type: tset
                    name: second
                  - type: test
                    name: first
                    addresses: [a]
                    syncTimeout: soon
                    servicez: [x]
                """)).isInstanceOf(ConfigException.class).satisfies(e -> {
            String m = e.getMessage();
            assertThat(m)
                    .contains("bridge.yaml:4:")
                    .contains("registries[0].addresses")
                    .contains("invalid port '99999'");
            assertThat(m)
                    .contains("bridge.yaml:5:")
                    .contains("registries[0].emptyServicePolicy: expected one of [delete, keep]");
            assertThat(m).contains("bridge.yaml:6:").contains("unknown registry type 'tset'; available: [test]");
            assertThat(m).contains("bridge.yaml:11:").contains("expected a duration");
            assertThat(m)
                    .contains("bridge.yaml:12:")
                    .contains("registries[2].servicez: unknown field; did you mean 'services'?");
            assertThat(m).contains("registry name 'first' is already used at line 2");
        });
    }

    @Test
    void parse_yamlSyntaxError_namesLineAndColumn() {
        assertThatThrownBy(() -> load("registries:\n  - type: test\n    name: [unclosed\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.yaml:4:")
                .hasMessageContaining("YAML syntax");
    }

    @Test
    void parse_duplicateKey_isReported() {
        assertThatThrownBy(() -> load("registries:\n  - type: test\n    name: a\n    name: b\n    addresses: [x]\n"))
                .hasMessageContaining("bridge.yaml:4:")
                .hasMessageContaining("duplicate key 'name'");
    }

    @Test
    void secret_fromMissingEnvironmentVariable_isReportedWithoutValue() throws Exception {
        ConfigNode root = ConfigNode.parse("bridge.yaml", "a: {env: MESHBRIDGE_SURELY_UNSET_VARIABLE}\nb: hunter2\n");
        root.secret("a");
        Secret b = root.secret("b").orElseThrow();
        assertThat(b.toString()).doesNotContain("hunter2").isEqualTo("<inline>");
        assertThat(b.resolve()).isEqualTo("hunter2");
        assertThatThrownBy(root::finish)
                .hasMessageContaining("bridge.yaml:1:")
                .hasMessageContaining("MESHBRIDGE_SURELY_UNSET_VARIABLE is not set");
    }

    @Test
    void secret_kubernetesForm_resolvesThroughTheInstalledReader_andIsDescribedWithoutItsValue() throws Exception {
        ConfigNode root = ConfigNode.parse(
                "bridge.yaml",
                "a: {secret: {name: zk-auth, key: password}}\nb: {secret: {name: zk-auth, key: password, namespace: shop}}\n");
        Secret a = root.secret("a").orElseThrow();
        Secret b = root.secret("b").orElseThrow();
        root.finish();
        assertThat(a).isEqualTo(Secret.kubernetes(null, "zk-auth", "password"));
        assertThat(a.describe()).isEqualTo("Kubernetes Secret <bridge namespace>/zk-auth key password");
        assertThat(b.describe()).isEqualTo("Kubernetes Secret shop/zk-auth key password");

        // without a reader (the Kubernetes source off), resolving says so
        assertThatThrownBy(a::resolve)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("zk-auth key password")
                .hasMessageContaining("the Kubernetes source is off");

        java.util.List<String> asked = new java.util.ArrayList<>();
        KubernetesSecrets.Reader reader = new KubernetesSecrets.Reader() {
            @Override
            public String defaultNamespace() {
                return "meshbridge";
            }

            @Override
            public String read(String namespace, String name, String key) {
                asked.add(namespace + "/" + name + "#" + key);
                return "s3cret-" + namespace + "\n";
            }
        };
        try (AutoCloseable installed = KubernetesSecrets.install(reader)) {
            assertThat(a.resolve()).isEqualTo("s3cret-meshbridge");
            assertThat(b.resolve()).isEqualTo("s3cret-shop");
            assertThat(a.resolve()).isEqualTo("s3cret-meshbridge");
        }
        assertThat(asked)
                .as("read at every resolve, in the reference's namespace or the bridge's own")
                .containsExactly("meshbridge/zk-auth#password", "shop/zk-auth#password", "meshbridge/zk-auth#password");
        assertThat(KubernetesSecrets.available()).isFalse();
    }

    @Test
    void secret_kubernetesForm_badNamesAndTwoFormsAtOnce_areReportedWithLineAndField() throws Exception {
        ConfigNode root = ConfigNode.parse(
                "bridge.yaml",
                "a: {secret: {name: Zk_Auth, key: 'a b', namespace: NS}}\nb: {secret: {name: x, key: y}, env: HOME}\n"
                        + "c: {secret: {key: y}}\n");
        root.secret("a");
        root.secret("b");
        root.secret("c");
        assertThatThrownBy(root::finish)
                .hasMessageContaining("a.secret.name")
                .hasMessageContaining("a.secret.key")
                .hasMessageContaining("a.secret.namespace")
                .hasMessageContaining("bridge.yaml:2:")
                .hasMessageContaining("give exactly one of env, file or secret")
                .hasMessageContaining("c.secret.name");
    }

    @Test
    void refuseKubernetesSecrets_namesEverySecretFormWithItsLineAndField() throws Exception {
        ConfigNode root = ConfigNode.parse("bridge.yaml", "a: plain\nnested:\n  b: {secret: {name: x, key: y}}\n");
        root.secret("a");
        root.section("nested").secret("b");
        assertThat(root.refuseKubernetesSecrets("needs the Kubernetes source")).isEqualTo(1);
        assertThatThrownBy(root::finish)
                .hasMessageContaining("bridge.yaml:3:")
                .hasMessageContaining("nested.b")
                .hasMessageContaining("needs the Kubernetes source");
    }

    @Test
    void duration_acceptsUnitsSumsAndHigressNanoseconds() {
        assertThat(ConfigNode.parseDuration("250ms", null)).isEqualTo(Duration.ofMillis(250));
        assertThat(ConfigNode.parseDuration("1m30s", null)).isEqualTo(Duration.ofSeconds(90));
        assertThat(ConfigNode.parseDuration("30000000000", java.time.temporal.ChronoUnit.NANOS))
                .isEqualTo(Duration.ofSeconds(30));
        assertThat(ConfigNode.parseDuration("30000000000", null)).isNull();
        assertThat(ConfigNode.parseDuration("5 parsecs", null)).isNull();
    }
}
