package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                false);
    }

    @Test
    void check_badConfig_exitsWith2AndNamesLineAndField() throws Exception {
        Path f = dir.resolve("bridge.yaml");
        Files.writeString(f, """
                registries:
                  - type: fixed
                    name: Bad_Name
                    addresses: [x]
                admin:
                  prot: 9000
                aggregator:
                  quietPeriod: 50ms
                  maxDelay: 10ms
                """);
        assertThat(run("--config", f.toString(), "--check")).isEqualTo(Main.EXIT_BAD_CONFIG);
        String e = err.toString(StandardCharsets.UTF_8);
        assertThat(e).contains("bridge.yaml:3:").contains("registries[0].name").contains("DNS-1123 label");
        assertThat(e).contains("bridge.yaml:6:").contains("admin.prot: unknown field; did you mean 'port'?");
        assertThat(e).contains("bridge.yaml:9:").contains("aggregator.maxDelay: must not be shorter than quietPeriod");
    }

    @Test
    void check_validConfig_exitsWith0() throws Exception {
        Path f = dir.resolve("bridge.yaml");
        Files.writeString(f, "registries:\n  - {type: fixed, name: ok, addresses: [x], services: [a]}\n");
        assertThat(run("--config=" + f, "--check")).isEqualTo(Main.EXIT_OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("configuration is valid: 1 registries [ok (fixed)]");
    }

    @Test
    void args_wrongOrMissing_printUsage() {
        assertThat(run("--frobnicate")).isEqualTo(Main.EXIT_ERROR);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("unknown argument '--frobnicate'")
                .contains("Usage: meshbridge");
        assertThat(run()).isEqualTo(Main.EXIT_ERROR);
        assertThat(run("--config", dir.resolve("missing.yaml").toString())).isEqualTo(Main.EXIT_BAD_CONFIG);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("does not exist");
        assertThat(run("--help")).isEqualTo(Main.EXIT_OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("--demo");
    }
}
