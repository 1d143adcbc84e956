package dev.meshbridge.registry.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.Secret;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NacosOptionsTest {

    private static RegistryConfig parse(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        List<RegistryConfig> out = RegistriesConfig.parse(root, RegistriesConfig.loadProviders());
        root.finish();
        return out.get(0);
    }

    @Test
    void provider_isFoundThroughServiceLoader_withNacosDefaultPort() {
        assertThat(RegistriesConfig.loadProviders()).containsKey("nacos");
        assertThat(RegistriesConfig.loadProviders().get("nacos").defaultPort()).isEqualTo(8848);
    }

    @Test
    void defaults_publicNamespace_defaultGroup_oneSecondRefresh() throws Exception {
        RegistryConfig c = parse("""
                registries:
                  - type: nacos
                    name: prod
                    addresses: [nacos-1]
                """);
        NacosOptions o = c.options(NacosOptions.class);
        assertThat(c.addresses()).containsExactly("nacos-1:8848");
        assertThat(o.namespaceIds()).containsExactly("public");
        assertThat(o.groups()).containsExactly("DEFAULT_GROUP");
        assertThat(o.refreshInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(o.contextPath()).isEqualTo("/nacos");
        assertThat(o.fuzzyWatch()).isTrue();
        assertThat(o.hasCredentials()).isFalse();
        assertThat(o.hostTemplate().toString()).isEqualTo("{service}.{group}.{namespace}.nacos");
    }

    @Test
    void higressFields_areUnderstood_refreshInNanoseconds() throws Exception {
        RegistryConfig c = parse("""
                registries:
                  - type: nacos
                    name: production
                    domain: 192.168.0.32
                    port: 8848
                    nacosNamespaceId: d8ac64f3-xxxx
                    nacosNamespace: prod
                    nacosGroups: [DEFAULT_GROUP, TRADE]
                    nacosRefreshInterval: 30000000000
                    nacosAccessKey: ak
                    nacosSecretKey: sk
                    nacosAddressServer: http://addr.example:8080/nacos
                    nacosTimeout: 5000
                """);
        NacosOptions o = c.options(NacosOptions.class);
        assertThat(c.addresses()).containsExactly("192.168.0.32:8848");
        assertThat(o.namespaceIds()).containsExactly("d8ac64f3-xxxx");
        assertThat(o.namespaceInHost("d8ac64f3-xxxx")).isEqualTo("prod");
        assertThat(o.groups()).containsExactly("DEFAULT_GROUP", "TRADE");
        assertThat(o.refreshInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.accessKey()).isEqualTo(Secret.literal("ak"));
        assertThat(o.addressServer()).isEqualTo(new NacosOptions.AddressServer("addr.example", 8080, "/nacos"));
    }

    @Test
    void stars_meanAllNamespacesAndAllGroups() throws Exception {
        NacosOptions o = parse("""
                        registries:
                          - type: nacos
                            name: all
                            addresses: ["n:8848"]
                            nacosNamespaceId: "*"
                            nacosGroups: ["*"]
                        """).options(NacosOptions.class);
        assertThat(o.allNamespaces()).isTrue();
        assertThat(o.namespaceIds()).isEmpty();
        assertThat(o.allGroups()).isTrue();
        assertThat(o.groups()).isEmpty();
    }

    @Test
    void severalNamespaces_commaSeparatedOrList_emptyIdIsPublic() throws Exception {
        NacosOptions o = parse("""
                        registries:
                          - type: nacos
                            name: two
                            addresses: ["n:8848"]
                            nacosNamespaceId: "dev, , test"
                        """).options(NacosOptions.class);
        assertThat(o.namespaceIds()).containsExactly("dev", "test");
    }

    @Test
    void credentials_fromEnvironmentOrFile_areSecretsThatNeverPrint(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("password");
        Files.writeString(file, "s3cret\n");
        String env = System.getenv().keySet().stream().findFirst().orElseThrow();
        NacosOptions o = parse("""
                        registries:
                          - type: nacos
                            name: secured
                            addresses: ["n:8848"]
                            nacosUsername: {env: %s}
                            nacosPassword: {file: %s}
                        """.formatted(env, file)).options(NacosOptions.class);
        assertThat(o.password().resolve()).isEqualTo("s3cret");
        assertThat(o.toString()).doesNotContain("s3cret").contains("file:" + file);
    }

    @Test
    void badFields_areRefusedWithLineAndField() {
        assertThatThrownBy(() -> parse("""
                        registries:
                          - type: nacos
                            name: bad
                            addresses: ["n:8848"]
                            nacosNamespaceId: ["*", dev]
                            nacosGroups: ["*", G]
                            nacosRefreshInterval: 10ms
                            nacosUsername: only-user
                            hostTemplate: "{service}.{cluster}.nacos"
                            nacosRefreshIntervall: 1s
                        """)).isInstanceOf(ConfigException.class).satisfies(e -> {
            List<String> problems = ((ConfigException) e)
                    .problems().stream().map(Object::toString).toList();
            assertThat(problems)
                    .anySatisfy(p -> assertThat(p).contains(":5:").contains("nacosNamespaceId"))
                    .anySatisfy(p -> assertThat(p).contains(":6:").contains("nacosGroups"))
                    .anySatisfy(p -> assertThat(p).contains(":7:").contains("at least 100ms"))
                    .anySatisfy(p -> assertThat(p).contains("nacosPassword").contains("together"))
                    .anySatisfy(p -> assertThat(p).contains(":9:").contains("unknown variable {cluster}"))
                    .anySatisfy(p -> assertThat(p).contains(":10:").contains("nacosRefreshInterval"));
        });
    }

    @Test
    void nacosNamespace_needsExactlyOneNamespaceId() {
        assertThatThrownBy(() -> parse("""
                        registries:
                          - type: nacos
                            name: bad
                            addresses: ["n:8848"]
                            nacosNamespaceId: [a, b]
                            nacosNamespace: shown
                        """))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("nacosNamespace")
                .hasMessageContaining("exactly one nacosNamespaceId");
    }

    @Test
    void equalEntries_giveEqualOptions_soTheWatcherIsNotRestarted() throws Exception {
        String yaml = """
                registries:
                  - type: nacos
                    name: prod
                    addresses: [n]
                    nacosGroups: [A, B]
                    serviceAllowlist: ["shop-*"]
                    nacosPassword: p
                    nacosUsername: u
                """;
        assertThat(parse(yaml)).isEqualTo(parse(yaml));
        assertThat(parse(yaml).options())
                .isNotEqualTo(parse(yaml.replace("[A, B]", "[A]")).options());
    }

    @Test
    void tls_readsTheFilesAndChannels_andAcceptsAUserWithTlsOnHttp(@TempDir Path dir) throws Exception {
        Path ca = dir.resolve("ca.crt");
        dev.meshbridge.core.testing.TestPki.ca("options-ca").writeCa(ca);
        NacosOptions o = parse("""
                        registries:
                          - type: nacos
                            name: tls
                            addresses: ["n:8848"]
                            nacosUsername: u
                            nacosPassword: p
                            tls: {caFile: %s, http: false, reloadInterval: 2s}
                        """.formatted(ca)).options(NacosOptions.class);
        assertThat(o.tls().files().caFile()).isEqualTo(ca);
        assertThat(o.tls().grpc()).isTrue();
        assertThat(o.tls().http()).isFalse();
        assertThat(o.tls().reloadInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(NacosOptions.defaults().tls()).isNull();

        // the watcher logs in over HTTPS for nacos-client (NacosTokenAuthPlugin): nothing refused
        NacosOptions both = parse("""
                        registries:
                          - type: nacos
                            name: tls
                            addresses: ["n:8848"]
                            nacosUsername: u
                            nacosPassword: p
                            tls: {caFile: %s}
                        """.formatted(ca)).options(NacosOptions.class);
        assertThat(both.tls().http()).isTrue();
        assertThat(both.username()).isNotNull();
    }

    @Test
    void addressServer_acceptsHostPortOrUrl() {
        assertThat(NacosOptions.parseAddressServer("addr:9090"))
                .isEqualTo(new NacosOptions.AddressServer("addr", 9090, ""));
        assertThat(NacosOptions.parseAddressServer("http://addr/nacos/serverlist"))
                .isEqualTo(new NacosOptions.AddressServer("addr", 8080, "/nacos"));
        assertThat(Map.of("x", NacosOptions.normalizeContextPath("nacos/"))).containsEntry("x", "/nacos");
    }
}
