package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IngressOptionsTest {

    @TempDir
    Path dir;

    @Test
    void parse_absentSection_everythingOff() {
        IngressOptions o = TestOptions.parse("");
        assertThat(o).isEqualTo(IngressOptions.DISABLED);
        assertThat(o.readsIngresses()).isFalse();
    }

    @Test
    void parse_completeExample() throws Exception {
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\nkind: Config\n");
        IngressOptions o = TestOptions.parse("""
                ingress:
                  ingressClass: edge
                  controllerName: example.com/edge
                  clusterDomain: cluster.example
                  syncTimeout: 10s
                  kubernetes:
                    enabled: true
                    kubeconfig: %s
                    context: prod
                    namespaces: [shop, pay]
                    watchIngresses: true
                    events: false
                  mcpBridge:
                    enabled: true
                    namespace: higress-system
                    name: default
                  directory:
                    path: %s
                    reloadInterval: 5s
                """.formatted(kubeconfig, dir));

        assertThat(o.ingressClass()).isEqualTo("edge");
        assertThat(o.controllerName()).isEqualTo("example.com/edge");
        assertThat(o.clusterDomain()).isEqualTo("cluster.example");
        assertThat(o.syncTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.kubernetes())
                .isEqualTo(new IngressOptions.Kubernetes(
                        true, java.util.Optional.of(kubeconfig), "prod", List.of("shop", "pay"), true, false));
        assertThat(o.mcpBridge()).isEqualTo(new IngressOptions.McpBridge(true, "higress-system", "default"));
        assertThat(o.directory())
                .isEqualTo(new IngressOptions.Directory(java.util.Optional.of(dir), Duration.ofSeconds(5)));
        assertThat(o.readsIngresses()).isTrue();
    }

    @Test
    void parse_badValues_everyProblemWithLineAndField() throws ConfigException {
        String yaml = """
                ingress:
                  ingressClass: Mesh_Bridge
                  kubernetes:
                    enabled: false
                    namespaces: [shop, Shop]
                  mcpBridge:
                    enabled: true
                  directory:
                    path: %s/missing
                    reloadIntervall: 1s
                """.formatted(dir);
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        IngressOptions.parse(root.section("ingress"));

        assertThatThrownBy(root::finish)
                .isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).problems())
                        .extracting(Object::toString)
                        .containsExactly(
                                "bridge.yaml:2:17: ingress.ingressClass: 'Mesh_Bridge' is not a valid IngressClass name"
                                        + " (DNS-1123)",
                                "bridge.yaml:5:17: ingress.kubernetes.namespaces: 'Shop' is not a namespace name"
                                        + " (DNS-1123 label)",
                                "bridge.yaml:5:17: ingress.kubernetes.namespaces: has no effect unless"
                                        + " kubernetes.enabled is true",
                                "bridge.yaml:7:5: ingress.mcpBridge: mcpBridge.enabled needs kubernetes.enabled: true",
                                "bridge.yaml:9:11: ingress.directory.path: directory " + dir
                                        + "/missing does not exist",
                                "bridge.yaml:10:5: ingress.directory.reloadIntervall: unknown field; did you mean"
                                        + " 'reloadInterval'? (known here: path, reloadInterval)"));
    }
}
