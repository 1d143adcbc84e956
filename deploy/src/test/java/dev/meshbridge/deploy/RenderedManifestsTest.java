package dev.meshbridge.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The plain manifests in {@code deploy/manifests/} (for users without Helm) are exactly what the chart renders for its
 * two documented examples, with release name and namespace {@code meshbridge}. When the chart changes, regenerate
 * them with {@code ./mvnw -pl deploy -am verify -Dtest=RenderedManifestsTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Ddeploy.updateManifests=true}.
 */
class RenderedManifestsTest {

    static final Path MANIFESTS = Chart.ROOT.resolve("deploy/manifests");

    static final List<String> EXAMPLES = List.of("istio-mcp", "envoy-fleet");

    @Test
    void plainManifests_areUpToDateWithTheChart() throws IOException {
        boolean update = Boolean.getBoolean("deploy.updateManifests");
        for (String example : EXAMPLES) {
            String rendered = header(example) + Chart.template(Chart.EXAMPLES.resolve(example + ".yaml"));
            Path file = MANIFESTS.resolve(example + ".yaml");
            if (update) Files.writeString(file, rendered);
            assertThat(file).as("deploy/manifests/%s.yaml exists", example).exists();
            assertThat(Files.readString(file))
                    .as(
                            "deploy/manifests/%s.yaml is what the chart renders; regenerate it with"
                                    + " -Ddeploy.updateManifests=true (see this test's javadoc)",
                            example)
                    .isEqualTo(rendered);
        }
    }

    private static String header(String example) {
        return """
                # Rendered from deploy/helm/meshbridge with examples/%s.yaml, for users without Helm:
                #   helm template meshbridge deploy/helm/meshbridge -n meshbridge -f deploy/helm/meshbridge/examples/%s.yaml
                # Edit bridge.yaml in the ConfigMap for your registries; kubectl create namespace meshbridge; kubectl apply -f.
                # Checked up to date with the chart by RenderedManifestsTest.
                """.formatted(example, example);
    }
}
