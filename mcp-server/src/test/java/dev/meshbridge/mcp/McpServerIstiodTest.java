package dev.meshbridge.mcp;

import static dev.meshbridge.mcp.IstiodMcpClient.serviceEntry;
import static dev.meshbridge.mcp.IstiodMcpClient.workloadEntry;
import static dev.meshbridge.mcp.ZookeeperRegistrations.dubboApplication;
import static dev.meshbridge.mcp.ZookeeperRegistrations.dubboInstance;
import static dev.meshbridge.mcp.ZookeeperRegistrations.dubboInterface;
import static dev.meshbridge.mcp.ZookeeperRegistrations.providerUrl;
import static dev.meshbridge.mcp.ZookeeperRegistrations.removal;
import static dev.meshbridge.mcp.ZookeeperRegistrations.springCloud;
import static dev.meshbridge.mcp.ZookeeperRegistrations.springInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.mcp.IstiodMcpClient.Config;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServicePort;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The MCP server against a client that behaves as istiod does, with the catalog fed into a real aggregator by the
 * upserts a ZooKeeper watcher sends for real Dubbo interface, Dubbo application and Spring Cloud registrations.
 */
class McpServerIstiodTest {

    static final String SE = "networking.istio.io/v1/ServiceEntry";
    static final String SE_V1ALPHA3 = "networking.istio.io/v1alpha3/ServiceEntry";
    static final String WE = "networking.istio.io/v1/WorkloadEntry";

    static final String GREETER = "org.apache.dubbo.demo.GreetingService";
    static final String GREETER_HOST = "org.apache.dubbo.demo.greetingservice.v-1-0-0.dubbo";
    static final String APP_HOST = "demo-provider.dubbo";
    static final String ORDERS_HOST = "orders.springcloud";
    static final String NS = McpOptions.DEFAULT_NAMESPACE;

    private final TestCatalog catalog = new TestCatalog();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private McpServer server;

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : closeables.reversed()) c.close();
        catalog.close();
    }

    // ------------------------------------------------------------------ fixtures

    static ServiceUpsert greeter(String... extraProviders) {
        List<String> urls = new ArrayList<>(List.of(
                providerUrl("dubbo", "10.0.0.11", 20880, GREETER, "version=1.0.0&weight=100"),
                providerUrl("dubbo", "10.0.0.12", 20880, GREETER, "version=1.0.0&weight=50&zone=zone-b")));
        urls.addAll(List.of(extraProviders));
        return dubboInterface(urls);
    }

    static ServiceUpsert demoApp(String endpointsJson) {
        return dubboApplication(
                "demo-provider",
                List.of(
                        dubboInstance("demo-provider", "10.0.0.21", endpointsJson, "\"env\":\"prod\""),
                        dubboInstance("demo-provider", "10.0.0.22", endpointsJson, "\"env\":\"prod\"")));
    }

    static final String DUBBO_AND_TRI =
            "[{\"port\":20880,\"protocol\":\"dubbo\"},{\"port\":50051,\"protocol\":\"tri\"}]";

    static ServiceUpsert orders(String... extra) {
        List<String> instances = new ArrayList<>(List.of(
                springInstance("orders", "a1", "10.0.0.31", 8080, "\"version\":\"v1\",\"instance_status\":\"UP\""),
                springInstance("orders", "a2", "10.0.0.32", 8080, "\"version\":\"v2\",\"instance_status\":\"UP\"")));
        instances.addAll(List.of(extra));
        return springCloud("orders", instances);
    }

    private void register(ServiceUpsert... upserts) {
        for (ServiceUpsert u : upserts) catalog.aggregator().accept(u);
    }

    private McpServer startServer(McpOptions options) throws IOException {
        server = new McpServer(
                options.toBuilder().bindAddress("127.0.0.1").port(0).build(), meters);
        closeables.add(server);
        server.start();
        catalog.aggregator().subscribe(server).join();
        return server;
    }

    private void catalogReady() {
        catalog.aggregator().flushNow().thenRun(server::markCatalogReady).join();
    }

    private IstiodMcpClient istiod(List<String> types) {
        IstiodMcpClient client = new IstiodMcpClient(server.port(), types);
        closeables.add(client);
        return client.start();
    }

    private McpServer.DebugView debug(Map<String, String> query) {
        return (McpServer.DebugView) server.debugSource().debug(query);
    }

    private static List<String> addresses(ServiceEntry se) {
        return se.getEndpointsList().stream().map(WorkloadEntry::getAddress).toList();
    }

    private static Map<String, String> versions(Map<String, Config> configs) {
        return configs.values().stream()
                .collect(Collectors.toMap(Config::name, c -> c.metadata().getVersion()));
    }

    // ------------------------------------------------------------------ tests

    @Test
    void initialSync_istio124_answersEveryTypeAndServesEveryService() throws Exception {
        register(greeter(), demoApp(DUBBO_AND_TRI), orders());
        startServer(McpOptions.defaults());
        catalogReady();

        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        for (String type : istiod.types()) {
            assertThat(istiod.responses(type)).as(type).hasSize(1);
            if (!type.equals(SE))
                assertThat(istiod.responses(type).get(0).getResourcesCount())
                        .as(type)
                        .isZero();
        }
        Map<String, Config> entries = istiod.configs(SE);
        assertThat(entries).containsOnlyKeys(NS + "/" + GREETER_HOST, NS + "/" + APP_HOST, NS + "/" + ORDERS_HOST);
        assertThat(istiod.decodeErrors()).isZero();

        Config greeter = entries.get(NS + "/" + GREETER_HOST);
        ServiceEntry se = serviceEntry(greeter);
        assertThat(se.getHostsList()).containsExactly(GREETER_HOST);
        assertThat(se.getLocation()).isEqualTo(ServiceEntry.Location.MESH_INTERNAL);
        assertThat(se.getResolution()).isEqualTo(ServiceEntry.Resolution.STATIC);
        assertThat(se.getPortsList())
                .containsExactly(ServicePort.newBuilder()
                        .setNumber(20880)
                        .setName("dubbo")
                        .setProtocol("TCP")
                        .build());
        assertThat(addresses(se)).containsExactly("10.0.0.11", "10.0.0.12");
        WorkloadEntry second = se.getEndpoints(1);
        assertThat(second.getPortsMap()).containsExactly(Map.entry("dubbo", 20880));
        assertThat(second.getWeight()).isEqualTo(50);
        assertThat(second.getLabelsMap()).containsEntry("zone", "zone-b").containsEntry("version", "1.0.0");
        assertThat(greeter.metadata().getLabelsMap())
                .containsEntry("meshbridge.dev/registry", "zk1")
                .containsEntry("meshbridge.dev/registry-type", "zookeeper")
                .containsEntry("app.kubernetes.io/managed-by", "meshbridge");
        assertThat(greeter.metadata().hasCreateTime())
                .as("no create_time: every replica sends the same bytes")
                .isFalse();
        assertThat(greeter.metadata().getVersion()).hasSize(16);

        ServiceEntry app = serviceEntry(entries.get(NS + "/" + APP_HOST));
        assertThat(app.getPortsList())
                .extracting(ServicePort::getName, ServicePort::getNumber, ServicePort::getProtocol)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("dubbo", 20880, "TCP"),
                        org.assertj.core.groups.Tuple.tuple("tri", 50051, "GRPC"));
        assertThat(app.getEndpoints(0).getPortsMap()).containsOnly(Map.entry("dubbo", 20880), Map.entry("tri", 50051));

        ServiceEntry orders = serviceEntry(entries.get(NS + "/" + ORDERS_HOST));
        assertThat(orders.getPorts(0).getNumber()).isEqualTo(80);
        assertThat(orders.getPorts(0).getProtocol()).isEqualTo("HTTP");
        assertThat(orders.getEndpointsList())
                .extracting(
                        WorkloadEntry::getAddress,
                        e -> e.getPortsMap().get("http"),
                        e -> e.getLabelsMap().get("version"))
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("10.0.0.31", 8080, "v1"),
                        org.assertj.core.groups.Tuple.tuple("10.0.0.32", 8080, "v2"));

        await().untilAsserted(() -> {
            McpServer.DebugView view = debug(Map.of());
            assertThat(view.clients()).hasSize(1);
            dev.meshbridge.ads.AdsClientView client = view.clients().get(0);
            assertThat(client.nodeId()).isEqualTo(IstiodMcpClient.NODE_ID);
            assertThat(client.metadata()).containsEntry("ISTIO_VERSION", "65536.65536.65536");
            assertThat(client.types()).hasSize(istiod.types().size());
            assertThat(client.types().values()).allMatch(t -> t.status().equals("SYNCED"));
            assertThat(client.types().values().stream().filter(t -> t.typeUrl().equals(SE)))
                    .singleElement()
                    .satisfies(t -> {
                        assertThat(t.lastAckedVersion())
                                .isEqualTo(istiod.responses(SE).get(0).getVersionInfo());
                    });
            assertThat(view.served()).hasSize(3);
            assertThat(view.resources().get("ServiceEntry").count()).isEqualTo(3);
        });
        assertThat(meters.get("meshbridge.mcp.streams").gauge().value()).isEqualTo(1.0);
        assertThat(meters.get("meshbridge.mcp.resources")
                        .tag("type", "ServiceEntry")
                        .gauge()
                        .value())
                .isEqualTo(3.0);
        // /debug/mcp renders as the admin server renders it
        String json = new ObjectMapper()
                .registerModule(new JavaTimeModule())
                .writeValueAsString(server.debugSource().debug(Map.of("kind", "ServiceEntry", "limit", "2")));
        assertThat(json)
                .contains("\"nodeId\":\"" + IstiodMcpClient.NODE_ID + "\"")
                .contains("\"typeUrl\":\"" + SE + "\"")
                .contains("\"servedTruncated\":true")
                .contains("\"host\":\"" + APP_HOST + "\"");
        // istiod puts a timestamp into the first request's nonce; it is still a new subscription
        assertThat(istiod.sent().get(1).getResponseNonce()).contains(" +0000 UTC m=+");
        assertThat(istiod.sent().get(1).hasNode()).isFalse();
    }

    @Test
    void initialSync_istio123_getsTheSameResourcesUnderV1alpha3() throws Exception {
        register(greeter(), demoApp(DUBBO_AND_TRI), orders());
        startServer(McpOptions.defaults());
        catalogReady();

        IstiodMcpClient old = istiod(IstiodMcpClient.PILOT_TYPES_1_23);
        IstiodMcpClient recent = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        old.awaitSynced();
        recent.awaitSynced();

        DiscoveryResponse v1alpha3 = old.responses(SE_V1ALPHA3).get(0);
        DiscoveryResponse v1 = recent.responses(SE).get(0);
        assertThat(v1alpha3.getTypeUrl()).isEqualTo(SE_V1ALPHA3);
        assertThat(v1alpha3.getResourcesCount()).isEqualTo(3);
        assertThat(v1alpha3.getResourcesList()).isEqualTo(v1.getResourcesList());
        assertThat(v1alpha3.getVersionInfo()).isEqualTo(v1.getVersionInfo());
        assertThat(old.configs(SE_V1ALPHA3)).containsOnlyKeys(recent.configs(SE).keySet());
    }

    @Test
    void instanceAdded_reversionsOnlyThatServiceEntry() throws Exception {
        register(greeter(), demoApp(DUBBO_AND_TRI), orders());
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();
        Map<String, Config> before = istiod.configs(SE);

        register(greeter(providerUrl("dubbo", "10.0.0.13", 20881, GREETER, "version=1.0.0")));

        Map<String, Config> after = istiod.awaitConfigs(
                SE, c -> addresses(serviceEntry(c.get(NS + "/" + GREETER_HOST))).size() == 3);
        ServiceEntry se = serviceEntry(after.get(NS + "/" + GREETER_HOST));
        assertThat(addresses(se)).containsExactly("10.0.0.11", "10.0.0.12", "10.0.0.13");
        assertThat(se.getEndpoints(2).getPortsMap()).containsExactly(Map.entry("dubbo", 20881));
        assertThat(se.getPorts(0).getNumber()).isEqualTo(20880);

        Map<String, String> v0 = versions(before);
        Map<String, String> v1 = versions(after);
        assertThat(v1.get(NS + "/" + GREETER_HOST)).isNotEqualTo(v0.get(NS + "/" + GREETER_HOST));
        assertThat(v1.get(NS + "/" + APP_HOST)).isEqualTo(v0.get(NS + "/" + APP_HOST));
        assertThat(v1.get(NS + "/" + ORDERS_HOST)).isEqualTo(v0.get(NS + "/" + ORDERS_HOST));
        assertThat(after.get(NS + "/" + GREETER_HOST).metadata().getCreateTime())
                .isEqualTo(before.get(NS + "/" + GREETER_HOST).metadata().getCreateTime());
        assertThat(istiod.responses(SE)).hasSize(2);
    }

    @Test
    void instanceRemoved_disappearsFromTheEndpoints() throws Exception {
        register(greeter(providerUrl("dubbo", "10.0.0.13", 20880, GREETER, "version=1.0.0")), orders());
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitConfigs(SE, c -> c.size() == 2);

        register(greeter());

        Map<String, Config> after = istiod.awaitConfigs(
                SE, c -> addresses(serviceEntry(c.get(NS + "/" + GREETER_HOST))).size() == 2);
        assertThat(addresses(serviceEntry(after.get(NS + "/" + GREETER_HOST))))
                .containsExactly("10.0.0.11", "10.0.0.12");
    }

    @Test
    void disabledWeightZeroAndOutOfServiceInstances_getNoTraffic() throws Exception {
        register(
                greeter(
                        providerUrl("dubbo", "10.0.0.13", 20880, GREETER, "version=1.0.0&disabled=true"),
                        providerUrl("dubbo", "10.0.0.14", 20880, GREETER, "version=1.0.0&weight=0")),
                orders(springInstance(
                        "orders",
                        "a3",
                        "10.0.0.33",
                        8080,
                        "\"version\":\"v3\",\"instance_status\":\"OUT_OF_SERVICE\"")));
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        Map<String, Config> entries = istiod.awaitConfigs(SE, c -> c.size() == 2);

        assertThat(addresses(serviceEntry(entries.get(NS + "/" + GREETER_HOST))))
                .containsExactly("10.0.0.11", "10.0.0.12");
        assertThat(addresses(serviceEntry(entries.get(NS + "/" + ORDERS_HOST))))
                .containsExactly("10.0.0.31", "10.0.0.32");

        // the disabled provider is enabled again: it gets traffic
        register(greeter(
                providerUrl("dubbo", "10.0.0.13", 20880, GREETER, "version=1.0.0&disabled=false"),
                providerUrl("dubbo", "10.0.0.14", 20880, GREETER, "version=1.0.0&weight=0")));
        istiod.awaitConfigs(
                SE, c -> addresses(serviceEntry(c.get(NS + "/" + GREETER_HOST))).contains("10.0.0.13"));
    }

    @Test
    void serviceDisappears_isRemovedFromTheNextResponse() throws Exception {
        ServiceUpsert orders = orders();
        register(greeter(), orders);
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitConfigs(SE, c -> c.size() == 2);

        catalog.aggregator().accept(removal(orders));

        Map<String, Config> after = istiod.awaitConfigs(SE, c -> c.size() == 1);
        assertThat(after).containsOnlyKeys(NS + "/" + GREETER_HOST);
        assertThat(debug(Map.of()).served())
                .extracting(McpServer.ServedView::host)
                .containsExactly(GREETER_HOST);
    }

    @Test
    void invalidService_isSkippedAndReported_whileTheOthersAreServed() throws Exception {
        // tri and grpc both default to service port 50051: istiod refuses a ServiceEntry with a port number twice
        String triAndGrpc = "[{\"port\":50051,\"protocol\":\"tri\"},{\"port\":50052,\"protocol\":\"grpc\"}]";
        register(greeter(), demoApp(triAndGrpc), orders());
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        assertThat(istiod.configs(SE)).containsOnlyKeys(NS + "/" + GREETER_HOST, NS + "/" + ORDERS_HOST);
        McpServer.DebugView view = debug(Map.of());
        assertThat(view.skipped()).singleElement().satisfies(s -> {
            assertThat(s.host()).isEqualTo(APP_HOST);
            assertThat(s.registry()).isEqualTo("zk1");
            assertThat(s.reasons())
                    .anySatisfy(r -> assertThat(r).contains("50051").contains("twice"));
        });
        assertThat(meters.get("meshbridge.mcp.services.skipped").gauge().value())
                .isEqualTo(1.0);
        assertThat(meters.get("meshbridge.mcp.skipped").counter().count()).isEqualTo(1.0);

        // the provider drops grpc: the service is served
        register(demoApp(DUBBO_AND_TRI));
        istiod.awaitConfigs(SE, c -> c.containsKey(NS + "/" + APP_HOST));
        assertThat(debug(Map.of()).skipped()).isEmpty();
        assertThat(meters.get("meshbridge.mcp.services.skipped").gauge().value())
                .isZero();
    }

    @Test
    void endpointWithHostName_isLeftOutAndReported_theRestServed() throws Exception {
        register(orders(springInstance("orders", "a3", "orders-3.corp.example", 8080, "\"version\":\"v3\"")));
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        Map<String, Config> entries = istiod.awaitConfigs(SE, c -> c.size() == 1);

        assertThat(addresses(serviceEntry(entries.get(NS + "/" + ORDERS_HOST))))
                .containsExactly("10.0.0.31", "10.0.0.32");
        assertThat(debug(Map.of()).droppedEndpoints())
                .singleElement()
                .satisfies(d -> assertThat(d.reasons())
                        .singleElement()
                        .asString()
                        .contains("orders-3.corp.example")
                        .contains("not an IP address"));
        assertThat(meters.get("meshbridge.mcp.endpoints.dropped").gauge().value())
                .isEqualTo(1.0);
    }

    @Test
    void workloadEntryMode_servesASelectorAndOneWorkloadEntryPerInstance() throws Exception {
        register(greeter(), orders());
        startServer(
                McpOptions.builder().endpointMode(EndpointMode.WORKLOAD_ENTRY).build());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        ServiceEntry se = serviceEntry(istiod.configs(SE).get(NS + "/" + GREETER_HOST));
        assertThat(se.getEndpointsList()).isEmpty();
        assertThat(se.getWorkloadSelector().getLabelsMap())
                .containsExactly(Map.entry(ServiceEntryTranslator.LABEL_SERVICE, GREETER_HOST));
        Map<String, Config> workloads = istiod.configs(WE);
        assertThat(workloads)
                .containsOnlyKeys(
                        NS + "/" + GREETER_HOST + ".10-0-0-11-20880",
                        NS + "/" + GREETER_HOST + ".10-0-0-12-20880",
                        NS + "/" + ORDERS_HOST + ".10-0-0-31-8080",
                        NS + "/" + ORDERS_HOST + ".10-0-0-32-8080");
        WorkloadEntry we = workloadEntry(workloads.get(NS + "/" + GREETER_HOST + ".10-0-0-12-20880"));
        assertThat(we.getAddress()).isEqualTo("10.0.0.12");
        assertThat(we.getPortsMap()).containsExactly(Map.entry("dubbo", 20880));
        assertThat(we.getWeight()).isEqualTo(50);
        assertThat(we.getLabelsMap())
                .containsEntry(ServiceEntryTranslator.LABEL_SERVICE, GREETER_HOST)
                .containsEntry("zone", "zone-b");

        Map<String, String> seBefore = versions(istiod.configs(SE));
        Map<String, String> weBefore = versions(workloads);
        // one provider changes its weight: exactly one WorkloadEntry gets a new version
        register(dubboInterface(List.of(
                providerUrl("dubbo", "10.0.0.11", 20880, GREETER, "version=1.0.0&weight=100"),
                providerUrl("dubbo", "10.0.0.12", 20880, GREETER, "version=1.0.0&weight=80&zone=zone-b"))));
        Map<String, Config> after = istiod.awaitConfigs(
                WE,
                c -> workloadEntry(c.get(NS + "/" + GREETER_HOST + ".10-0-0-12-20880"))
                                .getWeight()
                        == 80);
        Map<String, String> weAfter = versions(after);
        assertThat(weAfter.entrySet().stream()
                        .filter(e -> !e.getValue().equals(weBefore.get(e.getKey())))
                        .map(Map.Entry::getKey))
                .containsExactly(NS + "/" + GREETER_HOST + ".10-0-0-12-20880");
        assertThat(versions(istiod.configs(SE))).isEqualTo(seBefore);
    }

    @Test
    void nack_isReported_andTheRejectedVersionIsNotSentAgain() throws Exception {
        register(greeter());
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = new IstiodMcpClient(server.port(), IstiodMcpClient.PILOT_TYPES_1_24);
        closeables.add(istiod);
        istiod.nackNext(SE);
        istiod.start().awaitSynced();

        await().untilAsserted(() -> assertThat(
                        debug(Map.of()).clients().get(0).types().values())
                .filteredOn(t -> t.typeUrl().equals(SE))
                .singleElement()
                .satisfies(t -> {
                    assertThat(t.nacks()).isEqualTo(1);
                    assertThat(t.lastNack().error()).isEqualTo("test rejects " + SE);
                    assertThat(t.status()).isNotEqualTo("SYNCED");
                }));
        assertThat(meters.get("meshbridge.mcp.nacks")
                        .tag("type", "ServiceEntry")
                        .counter()
                        .count())
                .isEqualTo(1.0);

        // the next change is pushed (and ACKed); no resend of the rejected version came before it
        register(greeter(providerUrl("dubbo", "10.0.0.13", 20880, GREETER, "version=1.0.0")));
        istiod.awaitConfigs(
                SE, c -> addresses(serviceEntry(c.get(NS + "/" + GREETER_HOST))).size() == 3);
        assertThat(istiod.responses(SE)).hasSize(2);
        await().untilAsserted(() -> assertThat(
                        debug(Map.of()).clients().get(0).types().values())
                .filteredOn(t -> t.typeUrl().equals(SE))
                .singleElement()
                .satisfies(t -> assertThat(t.status()).isEqualTo("SYNCED")));
    }

    @Test
    void firstAnswers_waitUntilTheCatalogIsReady() throws Exception {
        register(greeter(), orders());
        startServer(
                McpOptions.builder().initialSyncTimeout(Duration.ofMinutes(5)).build());
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        await().until(() -> !debug(Map.of()).clients().isEmpty()
                && debug(Map.of()).clients().get(0).types().size()
                        == istiod.types().size());
        server.idle().join();
        assertThat(debug(Map.of()).ready()).isFalse();
        for (String type : istiod.types())
            assertThat(istiod.responses(type)).as(type).isEmpty();

        catalogReady();

        istiod.awaitSynced();
        assertThat(istiod.responses(SE).get(0).getResourcesCount()).isEqualTo(2);
    }

    @Test
    void firstAnswers_goOutWhenTheInitialSyncTimeoutPasses_withoutAReadySignal() throws Exception {
        register(greeter());
        startServer(
                McpOptions.builder().initialSyncTimeout(Duration.ofMillis(300)).build());
        catalog.aggregator().flushNow().join();

        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);

        istiod.awaitSynced();
        assertThat(istiod.configs(SE)).containsOnlyKeys(NS + "/" + GREETER_HOST);
        assertThat(debug(Map.of()).ready()).isTrue();
    }

    @Test
    void start_onAPortInUse_failsClearly_andCloseStillWorks() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            McpServer s = new McpServer(
                    McpOptions.builder()
                            .bindAddress("127.0.0.1")
                            .port(taken.getLocalPort())
                            .build(),
                    meters);
            closeables.add(s);

            org.assertj.core.api.Assertions.assertThatThrownBy(s::start)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("127.0.0.1:" + taken.getLocalPort())
                    .hasMessageContaining("mcp.port");
            s.close();
            org.assertj.core.api.Assertions.assertThatThrownBy(s::start).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void reconnectingIstiod_getsTheSameVersionsAndCreationTimes() throws Exception {
        register(greeter(), demoApp(DUBBO_AND_TRI), orders());
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient first = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        first.awaitSynced();
        Map<String, Config> before = first.configs(SE);
        first.close();
        await().until(() -> debug(Map.of()).clients().isEmpty());

        IstiodMcpClient second = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        second.awaitSynced();

        Map<String, Config> after = second.configs(SE);
        assertThat(versions(after)).isEqualTo(versions(before));
        for (String name : before.keySet()) {
            assertThat(after.get(name).metadata().getCreateTime())
                    .isEqualTo(before.get(name).metadata().getCreateTime());
        }
    }

    @Test
    void options_namespaceRevisionAndExportTo_appearOnTheResources() throws Exception {
        register(greeter());
        startServer(McpOptions.builder()
                .namespace("dubbo-mesh")
                .revision("canary")
                .exportTo(List.of(".", "istio-system"))
                .resourceName("{registry}-{host}")
                .build());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        Map<String, Config> entries = istiod.awaitConfigs(SE, c -> c.size() == 1);

        Config greeter = entries.get("dubbo-mesh/zk1-" + GREETER_HOST);
        assertThat(greeter).isNotNull();
        assertThat(greeter.metadata().getLabelsMap()).containsEntry("istio.io/rev", "canary");
        assertThat(serviceEntry(greeter).getExportToList()).containsExactly(".", "istio-system");
    }

    @Test
    void close_endsTheStreams_andASecondCloseDoesNothing() throws Exception {
        register(greeter());
        startServer(McpOptions.defaults());
        catalogReady();
        IstiodMcpClient istiod = istiod(IstiodMcpClient.PILOT_TYPES_1_24);
        istiod.awaitSynced();

        server.close();
        server.close();

        await().until(() -> istiod.error() != null || istiod.completed());
        assertThat(server.debugSource().debug(Map.of())).isInstanceOf(Map.class);
    }
}
