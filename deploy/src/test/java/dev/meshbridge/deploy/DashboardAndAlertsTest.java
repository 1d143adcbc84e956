package dev.meshbridge.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.app.Bridge;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.registry.zookeeper.ZkServer;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard ({@code deploy/grafana/meshbridge.json}) and the chart's PrometheusRule name only metrics the
 * bridge exports: every query is read and every metric it names is looked up in what a running bridge (a real
 * ZooKeeper behind it) answers on {@code /metrics}.
 */
class DashboardAndAlertsTest {

    static final Path DASHBOARD = Chart.ROOT.resolve("deploy/grafana/meshbridge.json");
    static final Pattern METRIC = Pattern.compile("\\bmeshbridge_[a-z0-9_]+\\b");

    static ZkServer zk;
    static Bridge bridge;
    static Set<String> exported;

    @BeforeAll
    static void startBridge() throws Exception {
        zk = new ZkServer();
        String yaml = """
                admin: {address: 127.0.0.1, port: 0}
                xds: {bindAddress: 127.0.0.1, port: 0}
                mcp: {bindAddress: 127.0.0.1, port: 0}
                reload: {enabled: false}
                data: {directory: ""}
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["%s"]
                """.formatted(zk.address());
        bridge = Bridge.start(
                BridgeConfig.parse("bridge.yaml", yaml, HelmChartTest.PROVIDERS), null, HelmChartTest.PROVIDERS);
        await().atMost(Duration.ofSeconds(30)).until(bridge::ready);
        HttpResponse<String> metrics = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + bridge.adminPort() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.statusCode()).isEqualTo(200);
        exported = new TreeSet<>();
        for (String line : metrics.body().split("\n")) {
            if (line.isBlank() || line.startsWith("#")) continue;
            int end = line.indexOf('{');
            if (end < 0) end = line.indexOf(' ');
            exported.add(line.substring(0, end));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (bridge != null) bridge.close();
        if (zk != null) zk.close();
    }

    static Set<String> metricsIn(String query) {
        Set<String> out = new TreeSet<>();
        Matcher m = METRIC.matcher(query);
        while (m.find()) out.add(m.group());
        return out;
    }

    static void assertBalanced(String query) {
        int round = 0;
        int curly = 0;
        int square = 0;
        for (char c : query.toCharArray()) {
            if (c == '(') round++;
            if (c == ')') round--;
            if (c == '{') curly++;
            if (c == '}') curly--;
            if (c == '[') square++;
            if (c == ']') square--;
            assertThat(round | curly | square).as("brackets of %s", query).isNotNegative();
        }
        assertThat(List.of(round, curly, square)).as("brackets of %s", query).containsOnly(0);
    }

    @Test
    void everyDashboardQuery_namesOnlyMetricsTheBridgeExports() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(Files.readString(DASHBOARD));
        assertThat(dashboard.path("uid").asText()).isEqualTo("meshbridge");
        List<String> queries = new ArrayList<>();
        Set<Integer> ids = new TreeSet<>();
        for (JsonNode panel : dashboard.path("panels")) {
            assertThat(ids.add(panel.path("id").asInt()))
                    .as("panel ids are unique")
                    .isTrue();
            if (panel.path("type").asText().equals("row")) continue;
            assertThat(panel.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
            assertThat(panel.path("targets"))
                    .as("queries of %s", panel.path("title"))
                    .isNotEmpty();
            for (JsonNode t : panel.path("targets")) queries.add(t.path("expr").asText());
        }
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (v.has("definition")) queries.add(v.path("definition").asText());
        }
        Set<String> used = new TreeSet<>();
        for (String q : queries) {
            Set<String> names = metricsIn(q);
            assertThat(names).as("metrics of %s", q).isNotEmpty();
            assertThat(exported).as("the bridge exports every metric of %s", q).containsAll(names);
            assertBalanced(q);
            used.addAll(names);
        }
        // what the issue asks the dashboard to show
        assertThat(used)
                .contains(
                        "meshbridge_registry_up", // registries up
                        "meshbridge_registry_last_sync_timestamp_seconds", // synced
                        "meshbridge_registry_services", // services per registry
                        "meshbridge_registry_instances", // endpoints per registry
                        "meshbridge_registry_skipped_total", // skipped items
                        "meshbridge_registry_errors_total", // errors
                        "meshbridge_xds_event_to_ack_seconds_bucket", // push latency
                        "meshbridge_mcp_event_to_ack_seconds_bucket",
                        "meshbridge_xds_push_bytes_total", // push bytes
                        "meshbridge_mcp_push_bytes_total",
                        "meshbridge_xds_streams", // connected clients
                        "meshbridge_xds_streams_stale", // stale clients
                        "meshbridge_mcp_streams_stale",
                        "meshbridge_xds_nacks_total", // NACKs
                        "meshbridge_mcp_nacks_total");
    }

    @Test
    void everyAlert_namesOnlyMetricsTheBridgeExports() {
        Chart.Rendered r = Chart.parse(Chart.templateWith("prometheusRule: {enabled: true}"));
        GenericKubernetesResource rule =
                (GenericKubernetesResource) r.ofKind("PrometheusRule").get(0);
        List<Map<String, Object>> rules = rule.get("spec", "groups", 0, "rules");
        Set<String> alerts = new TreeSet<>();
        for (Map<String, Object> alert : rules) {
            String expr = String.valueOf(alert.get("expr"));
            Set<String> names = metricsIn(expr);
            assertThat(names).as("metrics of %s", alert.get("alert")).isNotEmpty();
            assertThat(exported)
                    .as("the bridge exports every metric of %s", alert.get("alert"))
                    .containsAll(names);
            assertBalanced(expr);
            assertThat(expr).as("the alert reads the chart's series only").contains("{job=\"meshbridge\"}");
            alerts.add(String.valueOf(alert.get("alert")));
        }
        assertThat(alerts)
                .contains(
                        "MeshbridgeRegistryDown",
                        "MeshbridgeRegistryNeverSynced",
                        "MeshbridgeXdsNacks",
                        "MeshbridgeMcpNacks",
                        "MeshbridgeClientsStale",
                        "MeshbridgeCatalogShrank");
    }

    @Test
    void alertThresholds_comeFromTheValues() {
        Chart.Rendered r = Chart.parse(Chart.templateWith("""
                prometheusRule: {enabled: true, registryDownMinutes: 7, catalogShrinkPercent: 40}
                """));
        GenericKubernetesResource rule =
                (GenericKubernetesResource) r.ofKind("PrometheusRule").get(0);
        List<Map<String, Object>> rules = rule.get("spec", "groups", 0, "rules");
        Map<String, Map<String, Object>> byName = new java.util.HashMap<>();
        rules.forEach(x -> byName.put(String.valueOf(x.get("alert")), x));
        assertThat(byName.get("MeshbridgeRegistryDown")).containsEntry("for", "7m");
        assertThat(String.valueOf(byName.get("MeshbridgeCatalogShrank").get("expr")))
                .contains("< 60 / 100 *");
    }
}
