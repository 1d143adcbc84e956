package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.ConfigProblem;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.model.Protocol;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A {@code type: consul} entry of {@code bridge.yaml} as a user writes it. */
class ConsulOptionsTest {

    @TempDir
    Path tmp;

    private static RegistryConfig parse(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        ConsulRegistryProvider provider = new ConsulRegistryProvider();
        List<RegistryConfig> configs = RegistriesConfig.parse(root, Map.of(provider.type(), provider));
        root.finish();
        return configs.get(0);
    }

    private static List<ConfigProblem> problems(String yaml) {
        try {
            parse(yaml);
        } catch (ConfigException e) {
            return e.problems();
        }
        throw new AssertionError("expected the configuration to be refused");
    }

    @Test
    void minimalEntry_getsHigressDefaults() throws Exception {
        RegistryConfig c = parse("""
                registries:
                  - type: consul
                    name: consul-prod
                    domain: consul.internal
                """);

        ConsulOptions o = c.options(ConsulOptions.class);
        assertThat(c.addresses()).containsExactly("consul.internal:8500");
        assertThat(o.datacenters()).isEmpty();
        assertThat(o.hostTemplate().toString()).isEqualTo("{service}.{datacenter}.consul");
        assertThat(o.blockingWait()).isEqualTo(Duration.ofSeconds(60));
        assertThat(o.denyServices()).containsExactly("consul");
        assertThat(o.warning()).isEqualTo(ConsulOptions.WarningHealth.HEALTHY);
        assertThat(o.defaultProtocol()).isEqualTo(Protocol.HTTP);
        assertThat(o.token()).isEmpty();
        assertThat(o.tls()).isEmpty();
    }

    @Test
    void fullEntry_parsesEveryOption() throws Exception {
        HeldCertificate ca =
                new HeldCertificate.Builder().certificateAuthority(0).build();
        HeldCertificate client = new HeldCertificate.Builder().signedBy(ca).build();
        Path caFile = Files.writeString(tmp.resolve("ca.pem"), ca.certificatePem());
        Path certFile = Files.writeString(tmp.resolve("client.pem"), client.certificatePem());
        Path keyFile = Files.writeString(tmp.resolve("client-key.pem"), client.privateKeyPkcs8Pem());
        Path tokenFile = Files.writeString(tmp.resolve("token"), "secret\n");

        RegistryConfig c = parse("""
                registries:
                  - type: consul
                    name: consul-prod
                    addresses: [consul-1.internal:8501, consul-2.internal:8501]
                    consulDatacenter: [dc1, dc2]
                    consulToken: {file: %s}
                    consulNamespace: team-a
                    consulPartition: payments
                    consulServiceTag: mesh
                    serviceAllowlist: ['shop-*']
                    serviceDenylist: ['*-admin']
                    consulRefreshInterval: 30s
                    consistency: stale
                    warningHealth: unhealthy
                    bareTags: drop
                    hostTemplate: '{service}.{namespace}.{datacenter}.consul'
                    defaultProtocol: grpc
                    zoneMetaKey: availability-zone
                    tls:
                      caFile: %s
                      certFile: %s
                      keyFile: %s
                      serverName: server.dc1.consul
                    emptyServicePolicy: keep
                    emptyServiceGrace: 2m
                """.formatted(tokenFile, caFile, certFile, keyFile));

        ConsulOptions o = c.options(ConsulOptions.class);
        assertThat(c.addresses()).containsExactly("consul-1.internal:8501", "consul-2.internal:8501");
        assertThat(o.datacenters()).containsExactly("dc1", "dc2");
        assertThat(o.token()).contains(Secret.file(tokenFile));
        assertThat(o.namespace()).isEqualTo("team-a");
        assertThat(o.partition()).isEqualTo("payments");
        assertThat(o.serviceTags()).containsExactly("mesh");
        assertThat(o.allowServices()).containsExactly("shop-*");
        assertThat(o.denyServices()).containsExactly("*-admin");
        assertThat(o.blockingWait()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.consistency()).isEqualTo(ConsulOptions.Consistency.STALE);
        assertThat(o.warning()).isEqualTo(ConsulOptions.WarningHealth.UNHEALTHY);
        assertThat(o.bareTags()).isEqualTo(ConsulOptions.BareTags.DROP);
        assertThat(o.defaultProtocol()).isEqualTo(Protocol.GRPC);
        assertThat(o.zoneMetaKey()).isEqualTo("availability-zone");
        assertThat(o.tls())
                .contains(new ConsulTls(
                        true, caFile.toString(), certFile.toString(), keyFile.toString(), "server.dc1.consul"));
        assertThat(c.emptyService().grace()).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void higressRefreshIntervalInNanoseconds_isTheBlockingWait() throws Exception {
        RegistryConfig c = parse("""
                registries:
                  - type: consul
                    name: c1
                    addresses: [127.0.0.1]
                    consulRefreshInterval: 30000000000
                    consulDatacenter: dc1
                """);

        assertThat(c.options(ConsulOptions.class).blockingWait()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.options(ConsulOptions.class).datacenters()).containsExactly("dc1");
    }

    @Test
    void mistakes_areRefusedWithTheirLineAndField() {
        List<ConfigProblem> p = problems("""
                registries:
                  - type: consul
                    name: c1
                    addresses: ['https://consul:8501']
                    authSecretName: consul-token
                    consulServiceTags: mesh
                    consulRefreshInterval: 20m
                    hostTemplate: '{service}.{group}.consul'
                    defaultProtocol: thrift
                """);

        assertThat(p).anySatisfy(x -> {
            assertThat(x.path()).isEqualTo("registries[0].addresses");
            assertThat(x.line()).isEqualTo(4);
            assertThat(x.message()).contains("tls");
        });
        assertThat(p).anySatisfy(x -> {
            assertThat(x.path()).isEqualTo("registries[0].authSecretName");
            assertThat(x.message()).contains("consulToken: {secret: {name: NAME, key: consulToken}}");
        });
        assertThat(p).anySatisfy(x -> {
            assertThat(x.path()).isEqualTo("registries[0].consulServiceTags");
            assertThat(x.message()).contains("did you mean 'consulServiceTag'");
        });
        assertThat(p).anySatisfy(x -> {
            assertThat(x.path()).isEqualTo("registries[0].consulRefreshInterval");
            assertThat(x.line()).isEqualTo(7);
        });
        assertThat(p).anySatisfy(x -> assertThat(x.message()).contains("unknown variable {group}"));
        assertThat(p).anySatisfy(x -> assertThat(x.message()).contains("unknown protocol 'thrift'"));
    }

    @Test
    void tlsFiles_mustExistAndGoTogether() {
        List<ConfigProblem> p = problems("""
                registries:
                  - type: consul
                    name: c1
                    addresses: [127.0.0.1]
                    tls: {certFile: /nowhere/client.pem}
                  - type: consul
                    name: c2
                    addresses: [127.0.0.1]
                    tls: {caFile: /nowhere/ca.pem}
                """);

        assertThat(p).anySatisfy(x -> assertThat(x.message()).contains("certFile and keyFile go together"));
        assertThat(p).anySatisfy(x -> {
            assertThat(x.path()).isEqualTo("registries[1].tls.caFile");
            assertThat(x.message()).contains("/nowhere/ca.pem");
        });
    }

    @Test
    void options_haveValueEquality_soAnUnchangedEntryKeepsItsWatcher() throws Exception {
        String yaml = """
                registries:
                  - type: consul
                    name: c1
                    addresses: [127.0.0.1]
                    consulToken: {env: PATH}
                    consulServiceTag: [a, b]
                """;

        assertThat(parse(yaml)).isEqualTo(parse(yaml));
        assertThat(parse(yaml).options(ConsulOptions.class).token()).isEqualTo(Optional.of(Secret.env("PATH")));
    }

    @Test
    void providerIsFoundThroughServiceLoader() {
        assertThat(RegistriesConfig.loadProviders()).containsKey("consul");
        assertThat(RegistriesConfig.loadProviders().get("consul").defaultPort()).isEqualTo(8500);
    }

    @Test
    void tokenFromAnUnsetVariable_isRefusedNamingTheVariable() {
        assertThatThrownBy(() -> parse("""
                        registries:
                          - type: consul
                            name: c1
                            addresses: [127.0.0.1]
                            consulToken: {env: MESHBRIDGE_SURELY_UNSET_VARIABLE}
                        """))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("registries[0].consulToken.env")
                .hasMessageContaining("MESHBRIDGE_SURELY_UNSET_VARIABLE is not set");
    }
}
