package dev.meshbridge.registry.eureka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.ConfigProblem;
import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code type: eureka} entries of {@code bridge.yaml}: what a user writes and what the watcher gets. */
class EurekaConfigTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();

    @TempDir
    Path tmp;

    private static List<RegistryConfig> load(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        List<RegistryConfig> r = RegistriesConfig.parse(root, PROVIDERS);
        root.finish();
        return r;
    }

    private static List<ConfigProblem> problems(String yaml) {
        try {
            load(yaml);
        } catch (ConfigException e) {
            return e.problems();
        }
        throw new AssertionError("expected the configuration to be refused");
    }

    @Test
    void provider_isFoundThroughServiceLoader_withEurekasDefaultPort() {
        assertThat(PROVIDERS).containsKey("eureka");
        assertThat(PROVIDERS.get("eureka").defaultPort()).isEqualTo(8761);
    }

    @Test
    void minimalEntry_getsTheDefaults() throws Exception {
        RegistryConfig c = load("""
                registries:
                  - type: eureka
                    name: eureka
                    addresses: [eureka.example.com]
                """).get(0);

        assertThat(c.addresses()).containsExactly("http://eureka.example.com:8761/eureka");
        EurekaOptions o = c.options(EurekaOptions.class);
        assertThat(o).isEqualTo(EurekaOptions.defaults());
        assertThat(o.fetchInterval()).isEqualTo(Duration.ofSeconds(3));
        assertThat(o.authenticated()).isFalse();
        assertThat(o.hostTemplate().render(Map.of("service", "orders"))).isEqualTo("orders.eureka");
    }

    @Test
    void higressDomainAndPort_becomeServiceUrls() throws Exception {
        List<RegistryConfig> r = load("""
                registries:
                  - type: eureka
                    name: with-port
                    domain: eureka.example.com
                    port: 8080
                  - type: eureka
                    name: without-port
                    domain: eureka-a.example.com,eureka-b.example.com
                """);

        assertThat(r.get(0).addresses()).containsExactly("http://eureka.example.com:8080/eureka");
        assertThat(r.get(1).addresses())
                .containsExactly("http://eureka-a.example.com:8761/eureka", "http://eureka-b.example.com:8761/eureka");
    }

    @Test
    void addresses_hostsAndUrls_areNormalizedToServiceUrls() throws Exception {
        RegistryConfig c = load("""
                registries:
                  - type: eureka
                    name: eureka
                    addresses:
                      - 10.0.0.1
                      - 10.0.0.2:8080
                      - https://Eureka.Example.com/eureka/
                      - http://netflix.example.com:8080/eureka/v2
                """).get(0);

        assertThat(c.addresses())
                .containsExactly(
                        "http://10.0.0.1:8761/eureka",
                        "http://10.0.0.2:8080/eureka",
                        "https://eureka.example.com:8761/eureka",
                        "http://netflix.example.com:8080/eureka/v2");
    }

    @Test
    void credentialsInTheUrl_areRefused_withoutEchoingThem() {
        List<ConfigProblem> p = problems("""
                registries:
                  - type: eureka
                    name: eureka
                    addresses: [http://admin:hunter2@eureka.example.com:8761/eureka]
                """);

        assertThat(p).hasSize(1);
        assertThat(p.get(0).line()).isEqualTo(4);
        assertThat(p.get(0).path()).isEqualTo("registries[0].addresses");
        assertThat(p.get(0).message()).contains("username and password").doesNotContain("hunter2");
    }

    @Test
    void everyProblem_isReportedWithItsLineAndField() {
        List<ConfigProblem> p = problems("""
                registries:
                  - type: eureka
                    name: eureka
                    addresses: [ftp://eureka.example.com, http://eureka.example.com:70000]
                    username: bridge
                    fetchInterval: 1ms
                    maxBackoff: 2s
                    nonIpAddress: sometimes
                    hostTemplate: "{app}.eureka"
                    serviceAllowlist: ["", ORDERS]
                    weightKey: ""
                    fetchInterval2: 1s
                """);

        assertThat(p)
                .extracting(ConfigProblem::path)
                .contains(
                        "registries[0].addresses",
                        "registries[0].password",
                        "registries[0].fetchInterval",
                        "registries[0].nonIpAddress",
                        "registries[0].hostTemplate",
                        "registries[0].serviceAllowlist",
                        "registries[0].weightKey",
                        "registries[0].fetchInterval2");
        assertThat(p).allSatisfy(problem -> assertThat(problem.line()).isBetween(2, 12));
        assertThat(p)
                .filteredOn(problem -> problem.path().endsWith("fetchInterval2"))
                .singleElement()
                .satisfies(problem -> assertThat(problem.message()).contains("did you mean 'fetchInterval'"));
    }

    @Test
    void maxBackoffShorterThanTheInterval_isRefused() {
        List<ConfigProblem> p = problems("""
                registries:
                  - type: eureka
                    name: eureka
                    addresses: [eureka.example.com]
                    fetchInterval: 10s
                    maxBackoff: 5s
                """);

        assertThat(p).singleElement().satisfies(problem -> {
            assertThat(problem.path()).isEqualTo("registries[0].maxBackoff");
            assertThat(problem.line()).isEqualTo(6);
        });
    }

    @Test
    void credentialsFromEnvAndFile_areSecretsThatNeverPrint() throws Exception {
        Path file = Files.writeString(tmp.resolve("pw"), "s3cret\n");
        String anyEnv = System.getenv().keySet().iterator().next();
        RegistryConfig c = load("""
                registries:
                  - type: eureka
                    name: eureka
                    addresses: [eureka.example.com]
                    username: {env: %s}
                    password: {file: %s}
                """.formatted(anyEnv, file)).get(0);

        EurekaOptions o = c.options(EurekaOptions.class);
        assertThat(o.username()).isEqualTo(Secret.env(anyEnv));
        assertThat(o.password()).isEqualTo(Secret.file(file));
        assertThat(o.password().resolve()).isEqualTo("s3cret");
        assertThat(o.toString()).contains("file:" + file).doesNotContain("s3cret");
        assertThat(c.toString()).doesNotContain("s3cret");
    }

    @Test
    void readmeExample_parsesIntoTheDocumentedOptions() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        Matcher m =
                Pattern.compile("```yaml\\n(registries:.*?)```", Pattern.DOTALL).matcher(readme);
        assertThat(m.find())
                .as("README.md has a yaml example starting with registries:")
                .isTrue();

        RegistryConfig c = load(m.group(1).replace("/etc/meshbridge/eureka-password", writePassword()))
                .get(0);

        assertThat(c.addresses())
                .containsExactly("http://eureka-1.example.com:8761/eureka", "http://eureka-2.example.com:8761/eureka");
        assertThat(c.emptyService()).isEqualTo(EmptyServicePolicy.keep(Duration.ofSeconds(90)));
        EurekaOptions o = c.options(EurekaOptions.class);
        assertThat(o.authenticated()).isTrue();
        assertThat(o.fetchInterval()).isEqualTo(Duration.ofSeconds(3));
        assertThat(o.applications().accepts("ORDERS")).isTrue();
        assertThat(o.applications().accepts("ORDERS-CANARY")).isFalse();
        assertThat(c.hostNames().mode()).isEqualTo(dev.meshbridge.core.config.HostNamePolicy.Mode.RESOLVE);
    }

    private String writePassword() throws IOException {
        return Files.writeString(tmp.resolve("eureka-password"), "pw").toString();
    }

    @Test
    void passwordWithoutUsername_isRefused_withoutEchoingIt() {
        assertThatThrownBy(() -> load("""
                        registries:
                          - type: eureka
                            name: eureka
                            addresses: [eureka.example.com]
                            password: only-a-password
                        """))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("registries[0].username")
                .hasMessageNotContaining("only-a-password");
    }
}
