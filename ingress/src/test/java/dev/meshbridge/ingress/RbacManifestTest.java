package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * Proves that {@code deploy/rbac.yaml} grants exactly what the module uses: every request the bridge's own client
 * makes against fabric8's mock API server, while exercising Ingresses, TLS Secrets, Events and the McpBridge, is
 * allowed by the ClusterRole, and every rule of the ClusterRole is used.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class RbacManifestTest {

    private static final String AGENT = "meshbridge-rbac-test";
    private static final Pattern PATH = Pattern.compile(
            "^/(?:api/v1|apis/(?<group>[^/]+)/[^/]+)(?:/namespaces/[^/]+)?/(?<resource>[a-z0-9.-]+)(?<name>/[^/?]+)?(?:/[a-z]+)?(?:\\?(?<query>.*))?$");

    KubernetesClient client;
    KubernetesMockServer server;

    @Test
    void clusterRole_grantsExactlyTheRequestsTheModuleMakes() throws Exception {
        Manifests.registerMcpBridgeCrd(server);
        IngressOptions options = TestOptions.parse("""
                ingress:
                  syncTimeout: 5s
                  kubernetes: {enabled: true}
                  mcpBridge: {enabled: true}
                """);
        try (KubernetesClient bridgeClient = new KubernetesClientBuilder()
                        .withConfig(new ConfigBuilder(client.getConfiguration())
                                .withUserAgent(AGENT)
                                .build())
                        .build();
                IngressController controller = new IngressController(
                        options,
                        bridgeClient,
                        new SimpleMeterRegistry(),
                        HigressShapedProviders.all(),
                        r -> {},
                        () -> true)) {
            controller.start();
            Manifests.apply(client, Manifests.tlsIngress("shop", "web", "a.example.com", "a-tls"));
            Manifests.apply(client, Manifests.tlsSecret("shop", "a-tls", "a"));
            client.genericKubernetesResources(McpBridgeWatcher.MCP_BRIDGE)
                    .inNamespace("higress-system")
                    .resource(client.getKubernetesSerialization().unmarshal("""
                                    apiVersion: networking.higress.io/v1
                                    kind: McpBridge
                                    metadata: {name: default, namespace: higress-system}
                                    spec:
                                      registries: [{type: zookeeper, name: zk, domain: zk.example.com, port: 2181}]
                                    """, GenericKubernetesResource.class))
                    .create();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> controller
                                    .mcpBridgeRegistries()
                                    .map(l -> l.size() == 1)
                                    .orElse(false)
                            && RouteTables.tls(controller.routes().current())
                                    .equals(List.of("a.example.com shop/a-tls cert:a [shop/web]")));
            // a problem, so that an Event is posted
            Manifests.apply(client, Manifests.registryIngress("shop", "bad", "a.example.com", "/x", "Not_A_Host"));
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> client.v1().events().inNamespace("shop").list().getItems().stream()
                            .anyMatch(e -> e.getReason().equals(Issue.INVALID)));
        }

        Set<String> used = new TreeSet<>();
        for (int i = server.getRequestCount(); i > 0; i--) {
            RecordedRequest r = server.takeRequest();
            if (!AGENT.equals(r.getHeader("User-Agent"))) continue;
            used.add(permission(r));
        }
        assertThat(used).isEqualTo(granted());
    }

    /** {@code group/resource:verb} of a request, as RBAC sees it. */
    private static String permission(RecordedRequest r) {
        Matcher m = PATH.matcher(r.getPath());
        assertThat(m.matches()).as(r.getPath()).isTrue();
        String group = m.group("group") == null ? "" : m.group("group");
        String query = m.group("query") == null ? "" : m.group("query");
        String verb = switch (r.getMethod()) {
            case "GET" -> query.contains("watch=true") ? "watch" : m.group("name") == null ? "list" : "get";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> "delete";
            default -> r.getMethod();
        };
        return group + "/" + m.group("resource") + ":" + verb;
    }

    @SuppressWarnings("unchecked")
    private static Set<String> granted() throws IOException {
        Set<String> out = new TreeSet<>();
        for (Object doc : new Yaml().loadAll(Files.readString(Path.of("deploy/rbac.yaml")))) {
            Map<String, Object> m = (Map<String, Object>) doc;
            if (!"ClusterRole".equals(m.get("kind"))) continue;
            for (Map<String, Object> rule : (List<Map<String, Object>>) m.get("rules")) {
                for (String g : (List<String>) rule.get("apiGroups"))
                    for (String res : (List<String>) rule.get("resources"))
                        for (String v : (List<String>) rule.get("verbs")) out.add(g + "/" + res + ":" + v);
            }
        }
        return out;
    }
}
