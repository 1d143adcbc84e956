package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.ConfigProblem;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code type: zookeeper} entries of {@code bridge.yaml}, parsed by the real provider found through ServiceLoader. */
class ZookeeperOptionsTest {

    private static List<RegistryConfig> parse(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        List<RegistryConfig> out = RegistriesConfig.parse(root, RegistriesConfig.loadProviders());
        root.finish();
        return out;
    }

    @Test
    void provider_isFoundThroughServiceLoader_withPort2181() {
        RegistryWatcherProvider p = RegistriesConfig.loadProviders().get("zookeeper");
        assertThat(p).isInstanceOf(ZookeeperWatcherProvider.class);
        assertThat(p.defaultPort()).isEqualTo(2181);
    }

    @Test
    void fullEntry_givesEveryOption(@TempDir Path dir) throws Exception {
        Path password = Files.writeString(dir.resolve("zk-password"), "s3cret\n");
        RegistryConfig c = parse("""
                registries:
                  - type: zookeeper
                    name: zk-prod
                    addresses: [zk1.example, "zk2.example:2182"]
                    zkServicesPath: [/dubbo, /services, /legacy/apps/]
                    chroot: /prod
                    username: bridge
                    password: {file: %s}
                    sessionTimeout: 30s
                    connectionTimeout: 5s
                    maxResponseBytes: 33554432
                    reregistrationWindow: 2s
                    dubboInterfaceHostTemplate: "{interface}[.{version}][.{group}].rpc"
                    dubboApplicationHostTemplate: "{application}.apps"
                    springCloudHostTemplate: "{service}.{registry}.svc"
                    emptyServicePolicy: keep
                    emptyServiceGrace: 30s
                """.formatted(password)).get(0);
        assertThat(c.type()).isEqualTo("zookeeper");
        assertThat(c.addresses()).containsExactly("zk1.example:2181", "zk2.example:2182");
        ZookeeperOptions o = c.options(ZookeeperOptions.class);
        assertThat(o.servicesPaths()).containsExactly("/dubbo", "/services", "/legacy/apps");
        assertThat(o.chroot()).isEqualTo("/prod");
        assertThat(o.username()).isEqualTo("bridge");
        assertThat(o.password()).isEqualTo(Secret.file(password));
        assertThat(o.password().resolve()).isEqualTo("s3cret");
        assertThat(o.password().toString()).doesNotContain("s3cret");
        assertThat(o.sessionTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.connectionTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.maxResponseBytes()).isEqualTo(32 * 1024 * 1024);
        assertThat(c.removals().reregistrationWindow()).isEqualTo(Duration.ofSeconds(2));
        assertThat(o.dubboInterfaceHost().render(Map.of("interface", "a.B", "version", "1", "group", "")))
                .isEqualTo("a.b.1.rpc");
        assertThat(o.dubboApplicationHost().render(Map.of("application", "shop")))
                .isEqualTo("shop.apps");
        assertThat(o.springCloudHost().render(Map.of("service", "cart", "registry", "zk-prod")))
                .isEqualTo("cart.zk-prod.svc");
    }

    @Test
    void minimalEntry_getsTheDefaults_andEqualEntriesAreEqual() throws Exception {
        String yaml = """
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: [127.0.0.1]
                """;
        RegistryConfig c = parse(yaml).get(0);
        assertThat(c.options(ZookeeperOptions.class)).isEqualTo(ZookeeperOptions.defaults());
        assertThat(ZookeeperOptions.defaults().servicesPaths()).containsExactly("/dubbo", "/services");
        assertThat(ZookeeperOptions.defaults().springCloudHost().render(Map.of("service", "cart", "root", "services")))
                .isEqualTo("cart.services.zookeeper");
        assertThat(parse(yaml).get(0)).isEqualTo(c);
        assertThat(parse(yaml + "    chroot: /other\n").get(0)).isNotEqualTo(c);
    }

    @Test
    void higressDomainAndPort_becomeTheAddress() throws Exception {
        List<RegistryConfig> c = parse("""
                registries:
                  - {type: zookeeper, name: a, domain: zk.example, port: 2182}
                  - {type: zookeeper, name: b, domain: "zk1.example,zk2.example"}
                """);
        assertThat(c.get(0).addresses()).containsExactly("zk.example:2182");
        assertThat(c.get(1).addresses()).containsExactly("zk1.example:2181", "zk2.example:2181");
    }

    @Test
    void badOptions_areRefused_namingLineAndFieldOfEach() {
        String yaml = """
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["zk1:2181/prod"]
                    zkServicesPath: [dubbo, /services/, /services/apps]
                    chroot: no-slash
                    username: bridge
                    sessionTimeout: 5
                    connectionTimeout: 1h
                    maxResponseBytes: 10
                    dubboInterfaceHostTemplate: "{iface}.dubbo"
                    springCloudHostTemplate: "static.zookeeper"
                    zkServicePath: [/typo]
                """;
        assertThatThrownBy(() -> parse(yaml)).isInstanceOfSatisfying(ConfigException.class, e -> {
            assertThat(e.problems())
                    .extracting(ConfigProblem::line, ConfigProblem::path)
                    .contains(
                            org.assertj.core.groups.Tuple.tuple(4, "registries[0].addresses"),
                            org.assertj.core.groups.Tuple.tuple(5, "registries[0].zkServicesPath"),
                            org.assertj.core.groups.Tuple.tuple(6, "registries[0].chroot"),
                            org.assertj.core.groups.Tuple.tuple(7, "registries[0].username"),
                            org.assertj.core.groups.Tuple.tuple(8, "registries[0].sessionTimeout"),
                            org.assertj.core.groups.Tuple.tuple(9, "registries[0].connectionTimeout"),
                            org.assertj.core.groups.Tuple.tuple(10, "registries[0].maxResponseBytes"),
                            org.assertj.core.groups.Tuple.tuple(11, "registries[0].dubboInterfaceHostTemplate"),
                            org.assertj.core.groups.Tuple.tuple(12, "registries[0].springCloudHostTemplate"),
                            org.assertj.core.groups.Tuple.tuple(13, "registries[0].zkServicePath"));
            assertThat(e.getMessage())
                    .contains("bridge.yaml:4")
                    .contains("write host:port here and the path as chroot: /prod")
                    .contains("'dubbo' must be an absolute path")
                    .contains("'/services/apps' and '/services' overlap")
                    .contains("needs a password too")
                    .contains("unknown variable {iface}")
                    .contains("uses no variable")
                    .contains("did you mean 'zkServicesPath'");
        });
    }
}
