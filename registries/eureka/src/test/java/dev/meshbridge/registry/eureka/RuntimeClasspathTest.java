package dev.meshbridge.registry.eureka;

import static dev.meshbridge.registry.eureka.testing.EurekaRegistrar.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.appinfo.AmazonInfo;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher on exactly the class path the bridge gets from this module (eureka-client without Archaius, XStream,
 * Jersey, HttpClient 4, Guava 16...), in a JVM of its own, against the real Eureka server of this JVM: proves the
 * slimmed client decodes real full and delta answers.
 */
class RuntimeClasspathTest {

    @TempDir
    Path tmp;

    @Test
    void watcher_onTheRuntimeClassPathOnly_readsFullAndDeltaAnswers() throws Exception {
        String runtime =
                Files.readString(Path.of("target", "runtime-classpath.txt")).trim();
        Path probeDir = tmp.resolve("probe");
        Path probeClass = Path.of("target", "test-classes", "dev", "meshbridge", "registry", "eureka")
                .resolve(RuntimeClasspathProbe.class.getSimpleName() + ".class");
        Files.createDirectories(probeDir.resolve("dev/meshbridge/registry/eureka"));
        Files.copy(
                probeClass, probeDir.resolve("dev/meshbridge/registry/eureka").resolve(probeClass.getFileName()));
        String classPath = String.join(
                File.pathSeparator,
                probeDir.toString(),
                Path.of("target", "classes").toString(),
                runtime);
        String java = ProcessHandle.current().info().command().orElse("java");

        try (EmbeddedEurekaServer server = EmbeddedEurekaServer.start();
                EurekaRegistrar registrar = new EurekaRegistrar(server.serviceUrl())) {
            registrar.register(springCloudInstance("orders", "10.9.0.1", 8080)
                    .setMetadata(Map.of("zone", "zone-a"))
                    .build());
            registrar.register(springCloudInstance("orders", "10.9.0.2", 8080)
                    .setDataCenterInfo(AmazonInfo.Builder.newBuilder()
                            .addMetadata(AmazonInfo.MetaDataKey.instanceId, "i-1")
                            .addMetadata(AmazonInfo.MetaDataKey.availabilityZone, "eu-west-1c")
                            .build())
                    .build());
            Process probe = new ProcessBuilder(
                            java, "-cp", classPath, RuntimeClasspathProbe.class.getName(), server.serviceUrl(), "3")
                    .redirectErrorStream(true)
                    .start();
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(probe.getInputStream(), StandardCharsets.UTF_8))) {
                String first = readUpsert(out);
                assertThat(first)
                        .isEqualTo("host=orders.eureka 10.9.0.1{http=8080}/HEALTHY//zone-a/"
                                + " 10.9.0.2{http=8080}/HEALTHY/eu-west-1/eu-west-1c/");

                registrar.register(
                        springCloudInstance("orders", "10.9.0.3", 8080).build());

                String second = readUpsert(out);
                assertThat(second).startsWith("host=orders.eureka").contains(" 10.9.0.3{http=8080}/HEALTHY//");
                assertThat(out.readLine()).startsWith("stats Stats[fullFetches=1, deltaFetches=");
            } finally {
                assertThat(probe.waitFor(30, TimeUnit.SECONDS)).isTrue();
                probe.destroyForcibly();
            }
            assertThat(probe.exitValue()).isZero();
        }
    }

    /** The next {@code host=} line; other lines (a logger's warnings) are skipped; fails on end of output. */
    private static String readUpsert(BufferedReader out) throws Exception {
        String line;
        StringBuilder seen = new StringBuilder();
        while ((line = out.readLine()) != null) {
            if (line.startsWith("host=")) return line;
            seen.append(line).append('\n');
        }
        throw new AssertionError("the probe ended without a service update:\n" + seen);
    }
}
