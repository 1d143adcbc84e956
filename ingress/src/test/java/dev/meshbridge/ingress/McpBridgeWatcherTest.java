package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.RegistryConfig;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The McpBridge watch against fabric8's mock API server in CRUD mode (kubernetes-server-mock 7.8.0) with the
 * McpBridge custom resource registered as Higress's CRD declares it ({@code networking.higress.io/v1},
 * {@code mcpbridges}, namespaced): the registries a user configures by editing the resource at run time.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class McpBridgeWatcherTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    KubernetesClient client;
    KubernetesMockServer server;

    private final List<List<RegistryConfig>> received = new CopyOnWriteArrayList<>();
    private McpBridgeWatcher watcher;
    private KubernetesEvents events;

    @BeforeEach
    void registerCrd() {
        Manifests.registerMcpBridgeCrd(server);
    }

    @AfterEach
    void tearDown() {
        if (watcher != null) watcher.close();
        if (events != null) events.close();
    }

    private void startWatcher() {
        events = new KubernetesEvents(client, Clock.systemUTC());
        watcher = new McpBridgeWatcher(
                client,
                new IngressOptions.McpBridge(true, "higress-system", "default"),
                HigressShapedProviders.all(),
                received::add,
                events,
                new SimpleMeterRegistry());
        watcher.start();
    }

    private void apply(String yaml) {
        GenericKubernetesResource r =
                client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
        client.genericKubernetesResources(McpBridgeWatcher.MCP_BRIDGE)
                .inNamespace("higress-system")
                .resource(r)
                .createOr(NonDeletingOperation::update);
    }

    private static String mcpBridge(String registries) {
        return """
                apiVersion: networking.higress.io/v1
                kind: McpBridge
                metadata:
                  name: default
                  namespace: higress-system
                spec:
                  registries:
                """ + registries.indent(2);
    }

    private List<String> lastNames() {
        return received.get(received.size() - 1).stream()
                .map(c -> c.type() + ":" + c.name() + "@" + String.join(",", c.addresses()))
                .toList();
    }

    private List<Event> events() {
        return client.v1().events().inNamespace("higress-system").list().getItems().stream()
                .filter(e -> "McpBridge".equals(e.getInvolvedObject().getKind()))
                .sorted(java.util.Comparator.comparing(
                        Event::getMetadata, java.util.Comparator.comparing(m -> m.getName())))
                .toList();
    }

    /**
     * Higress's {@code authSecretName}: the Secret in the McpBridge's namespace, with Higress's keys, gives the Nacos
     * and Consul credentials of the registries the watch hands over, read through {@link ClusterSecrets} when used (a
     * Secret edited later is read as it is then).
     */
    @Test
    void authSecretName_credentialsComeFromTheSecretInTheMcpBridgesNamespace_withHigresssKeys() throws Exception {
        client.secrets()
                .inNamespace("higress-system")
                .resource(new io.fabric8.kubernetes.api.model.SecretBuilder()
                        .withNewMetadata()
                        .withName("higress-nacos-auth")
                        .withNamespace("higress-system")
                        .endMetadata()
                        .withData(
                                java.util.Map.of("nacosUsername", b64("higress"), "nacosPassword", b64("Nacos-Pass-1")))
                        .build())
                .createOr(NonDeletingOperation::update);
        client.secrets()
                .inNamespace("higress-system")
                .resource(new io.fabric8.kubernetes.api.model.SecretBuilder()
                        .withNewMetadata()
                        .withName("higress-consul-auth")
                        .withNamespace("higress-system")
                        .endMetadata()
                        .withData(java.util.Map.of("consulToken", b64("4add1665-5394-7c55-23a5-70806d51bc42")))
                        .build())
                .createOr(NonDeletingOperation::update);
        startWatcher();
        await().atMost(WAIT).until(() -> received.size() == 1);
        apply(mcpBridge("""
                - type: nacos2
                  name: my-nacos
                  domain: nacos.example.com
                  port: 8848
                  authSecretName: higress-nacos-auth
                - type: consul
                  name: my-consul
                  domain: consul.example.com
                  port: 8500
                  authSecretName: higress-consul-auth
                """));
        await().atMost(WAIT).until(() -> received.size() == 2);

        HigressShapedProviders.NacosOptions nacos =
                received.get(1).get(0).options(HigressShapedProviders.NacosOptions.class);
        HigressShapedProviders.ConsulOptions consul =
                received.get(1).get(1).options(HigressShapedProviders.ConsulOptions.class);
        try (ClusterSecrets secrets = new ClusterSecrets(client, null);
                AutoCloseable installed = dev.meshbridge.core.config.KubernetesSecrets.install(secrets)) {
            assertThat(nacos.nacosUsername().resolve()).isEqualTo("higress");
            assertThat(nacos.nacosPassword().resolve()).isEqualTo("Nacos-Pass-1");
            assertThat(consul.consulToken().resolve()).isEqualTo("4add1665-5394-7c55-23a5-70806d51bc42");
            assertThat(nacos.nacosPassword().describe())
                    .isEqualTo("Kubernetes Secret higress-system/higress-nacos-auth key nacosPassword");
        }
    }

    private static String b64(String s) {
        return java.util.Base64.getEncoder().encodeToString(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void mcpBridge_createdChangedDeleted_registriesFollowAtRunTime() {
        startWatcher();
        await().atMost(WAIT).until(() -> received.size() == 1);
        assertThat(received.get(0)).isEmpty(); // absent at the first read: no registries from it

        apply(mcpBridge("""
                - type: zookeeper
                  name: my-zk
                  domain: zk.example.com
                  port: 2181
                  zkServicesPath: [/dubbo]
                """));
        await().atMost(WAIT).until(() -> received.size() == 2);
        assertThat(lastNames()).containsExactly("zookeeper:my-zk@zk.example.com:2181");
        assertThat(watcher.current()).contains(received.get(1));

        apply(mcpBridge("""
                - type: zookeeper
                  name: my-zk
                  domain: zk.example.com
                  port: 2181
                  zkServicesPath: [/dubbo, /services]
                - type: nacos2
                  name: my-nacos
                  domain: nacos-a.example.com,nacos-b.example.com
                  port: 8848
                  nacosNamespaceId: public
                """));
        await().atMost(WAIT).until(() -> received.size() == 3);
        assertThat(lastNames())
                .containsExactly(
                        "zookeeper:my-zk@zk.example.com:2181",
                        "nacos:my-nacos@nacos-a.example.com:8848,nacos-b.example.com:8848");
        assertThat(received.get(2)
                        .get(0)
                        .options(HigressShapedProviders.ZookeeperOptions.class)
                        .zkServicesPath())
                .containsExactly("/dubbo", "/services");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(events())
                        .extracting(Event::getReason)
                        .containsExactly("RegistriesApplied", "RegistriesApplied"));

        client.genericKubernetesResources(McpBridgeWatcher.MCP_BRIDGE)
                .inNamespace("higress-system")
                .withName("default")
                .delete();
        await().atMost(WAIT).until(() -> received.size() == 4);
        assertThat(received.get(3)).isEmpty();
    }

    @Test
    void mcpBridge_invalidChange_lastGoodRegistriesKept_andInvalidRegistriesEventNamesTheField() {
        apply(mcpBridge("""
                - type: zookeeper
                  name: my-zk
                  domain: zk.example.com
                  port: 2181
                """));
        startWatcher();
        await().atMost(WAIT).until(() -> received.size() == 1);
        assertThat(lastNames()).containsExactly("zookeeper:my-zk@zk.example.com:2181");

        apply(mcpBridge("""
                - type: zookeeper
                  name: my-zk
                  domain: zk.example.com
                  port: 99999
                """));
        await().atMost(WAIT)
                .untilAsserted(
                        () -> assertThat(events()).extracting(Event::getReason).contains("InvalidRegistries"));
        Event invalid = events().stream()
                .filter(e -> e.getReason().equals("InvalidRegistries"))
                .findFirst()
                .orElseThrow();
        assertThat(invalid.getType()).isEqualTo("Warning");
        assertThat(invalid.getMessage())
                .isEqualTo("refused, the last valid registries stay in effect ([zookeeper:my-zk]):"
                        + " spec.registries[0].port: expected an integer in 1..65535, got 99999");
        assertThat(received).hasSize(1);
        assertThat(watcher.current()).contains(received.get(0));

        apply(mcpBridge("""
                - type: zookeeper
                  name: my-zk
                  domain: zk.example.com
                  port: 2182
                """));
        await().atMost(WAIT).until(() -> received.size() == 2);
        assertThat(lastNames()).containsExactly("zookeeper:my-zk@zk.example.com:2182");
    }
}
