package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.KubernetesSecrets;
import dev.meshbridge.core.config.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ClusterSecrets} against fabric8's mock API server in CRUD mode (kubernetes-server-mock 7.8.0): a {@code
 * {secret: ...}} credential resolves to the Secret's value now (a replaced Secret at the next resolve), in the
 * reference's namespace or the client's; a missing Secret or key is an error naming the Secret, the key and the keys it
 * has, never a value.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class ClusterSecretsTest {

    private static final String VALUE = "Canary-Cluster-Secret-7f3a";

    KubernetesClient client;
    KubernetesMockServer server;

    private ClusterSecrets secrets;
    private AutoCloseable installed;

    @BeforeEach
    void install() {
        secrets = new ClusterSecrets(client, null);
        installed = KubernetesSecrets.install(secrets);
    }

    @AfterEach
    void uninstall() throws Exception {
        installed.close();
        secrets.close();
    }

    private void put(String namespace, String name, Map<String, String> plain) {
        Map<String, String> data = new java.util.LinkedHashMap<>();
        plain.forEach((k, v) -> data.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
        client.secrets()
                .inNamespace(namespace)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(namespace)
                        .endMetadata()
                        .withData(data)
                        .build())
                .createOr(NonDeletingOperation::update);
    }

    @Test
    void resolve_readsTheKeyNow_inTheNamedOrTheClientsNamespace_trailingNewlineRemoved() {
        String own = secrets.defaultNamespace();
        assertThat(own).isEqualTo(client.getNamespace() == null ? "default" : client.getNamespace());
        put(own, "zk-auth", Map.of("password", VALUE + "\n"));
        put("higress-system", "higress-nacos-auth", Map.of("nacosUsername", "nacos", "nacosPassword", VALUE));

        assertThat(Secret.kubernetes(null, "zk-auth", "password").resolve()).isEqualTo(VALUE);
        assertThat(Secret.kubernetes("higress-system", "higress-nacos-auth", "nacosUsername")
                        .resolve())
                .isEqualTo("nacos");

        // rotated: the next resolve reads the new value
        put(own, "zk-auth", Map.of("password", "rotated"));
        assertThat(Secret.kubernetes(null, "zk-auth", "password").resolve()).isEqualTo("rotated");
    }

    @Test
    void missingSecretOrKey_isNamedWithTheKeysItHas_neverAValue() {
        put("shop", "zk-auth", Map.of("user", VALUE, "other", VALUE));

        assertThatThrownBy(
                        () -> Secret.kubernetes("shop", "zk-auth", "password").resolve())
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("Kubernetes Secret shop/zk-auth has no key password (keys: other, user)")
                .hasMessageNotContaining(VALUE);
        assertThatThrownBy(() -> Secret.kubernetes("shop", "nope", "password").resolve())
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("Kubernetes Secret shop/nope does not exist (key password)");
    }
}
