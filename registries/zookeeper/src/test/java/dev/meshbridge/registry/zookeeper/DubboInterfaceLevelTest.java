package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.testing.TestCatalog;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Interface-level Dubbo: providers written by Dubbo's own ZooKeeper registry into a real ZooKeeper, read by the
 * watcher into a real aggregator.
 */
class DubboInterfaceLevelTest {

    private static ZkServer zk;
    private static DubboRegistryWriter dubbo;
    private static CuratorFramework raw;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new ZkServer();
        dubbo = new DubboRegistryWriter(zk.address());
        raw = zk.client();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        raw.close();
        dubbo.close();
        zk.close();
    }

    static String provider(String protocol, String address, String iface, String params) {
        return protocol + "://" + address + "/" + iface + "?anyhost=true&application=greeter-app&dubbo=2.0.2"
                + "&interface=" + iface + "&methods=greet,greetAll&pid=4242&release=3.3.6&side=provider"
                + "&timestamp=1700000000000" + (params.isEmpty() ? "" : "&" + params);
    }

    @Test
    void providers_eachVersionAndGroup_getTheirOwnHostWithEndpointsPortsWeightsAndLabels() throws Exception {
        String iface = "org.demo.Greeter";
        dubbo.register(provider("dubbo", "10.0.0.1:20880", iface, ""));
        dubbo.register(provider("dubbo", "10.0.0.2:20880", iface, ""));
        dubbo.register(provider("dubbo", "10.0.0.3:20881", iface, "version=1.0.0&weight=50"));
        dubbo.register(provider("tri", "10.0.0.4:50052", iface, "version=1.0.0&group=blue"));

        try (WatcherHarness h = WatcherHarness.start(zk.address())) {
            MeshService plain =
                    h.awaitService("org.demo.greeter.dubbo", s -> s.endpoints().size() == 2);
            assertThat(plain.ports()).containsExactly(new ServicePort("dubbo", 20880, Protocol.DUBBO));
            assertThat(plain.endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.1", "10.0.0.2");
            Endpoint first = plain.endpoints().get(0);
            assertThat(first.ports()).containsEntry("dubbo", 20880);
            assertThat(first.weight()).isEqualTo(100);
            assertThat(first.routable()).isTrue();
            assertThat(first.health()).isEqualTo(Health.HEALTHY);
            assertThat(first.labels())
                    .containsEntry("application", "greeter-app")
                    .containsEntry("release", "3.3.6")
                    .containsEntry("dubbo", "2.0.2")
                    .doesNotContainKeys("methods", "pid", "timestamp", "interface", "side", "anyhost");
            assertThat(plain.labels()).containsEntry("dubbo.interface", iface);
            assertThat(plain.sources())
                    .containsExactly(new ServiceKey("zookeeper", "zk", "dubbo:/dubbo", "", iface, ""));

            MeshService v1 = h.awaitService("org.demo.greeter.v-1-0-0.dubbo", s -> true);
            assertThat(v1.endpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo("10.0.0.3");
                assertThat(e.ports()).containsEntry("dubbo", 20881);
                assertThat(e.weight()).isEqualTo(50);
                assertThat(e.labels()).containsEntry("version", "1.0.0");
            });
            assertThat(v1.labels()).containsEntry("dubbo.version", "1.0.0");

            MeshService blue = h.awaitService("org.demo.greeter.v-1-0-0.g-blue.dubbo", s -> true);
            assertThat(blue.ports()).containsExactly(new ServicePort("tri", 50051, Protocol.TRIPLE));
            assertThat(blue.endpoints())
                    .singleElement()
                    .satisfies(e -> assertThat(e.ports()).containsEntry("tri", 50052));
            assertThat(blue.labels()).containsEntry("dubbo.group", "blue");
            assertThat(h.status.hasSynced()).isTrue();
            assertThat(h.status.skippedCount()).isZero();
        }
    }

    @Test
    void weightOutOfRange_isClampedAndReported() throws Exception {
        // its own root, so the other tests of the shared ZooKeeper do not see it
        String url = provider("dubbo", "10.0.7.1:20880", "org.demo.Heavy", "weight=5000000");
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/heavy/org.demo.Heavy/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8));
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/heavy]")) {
            MeshService heavy =
                    h.awaitService("org.demo.heavy.dubbo", s -> s.endpoints().size() == 1);

            assertThat(heavy.endpoints().get(0).weight()).isEqualTo(Endpoint.MAX_WEIGHT);
            assertThat(h.status.skippedCount()).as("the clamp is reported").isEqualTo(1);
        }
    }

    @Test
    void changes_addRemoveDisableAndWeightZero_showInTheCatalog() throws Exception {
        String iface = "org.demo.Orders";
        String a = provider("dubbo", "10.0.1.1:20880", iface, "");
        dubbo.register(a);
        try (WatcherHarness h = WatcherHarness.start(zk.address())) {
            String host = "org.demo.orders.dubbo";
            h.awaitService(host, s -> s.endpoints().size() == 1);

            String b = provider("dubbo", "10.0.1.2:20880", iface, "");
            dubbo.register(b);
            h.awaitService(host, s -> s.endpoints().size() == 2);

            dubbo.unregister(b);
            String bDisabled = provider("dubbo", "10.0.1.2:20880", iface, "disabled=true");
            dubbo.register(bDisabled);
            MeshService disabled = h.awaitService(
                    host,
                    s -> s.endpoints().size() == 2 && s.routableEndpoints().size() == 1);
            assertThat(disabled.endpoints())
                    .filteredOn(e -> e.address().equals("10.0.1.2"))
                    .singleElement()
                    .satisfies(e -> assertThat(e.enabled()).isFalse());

            dubbo.unregister(bDisabled);
            String bWeightZero = provider("dubbo", "10.0.1.2:20880", iface, "weight=0");
            dubbo.register(bWeightZero);
            MeshService zero =
                    h.awaitService(host, s -> s.endpoints().stream().anyMatch(e -> e.enabled() && e.weight() == 0));
            assertThat(zero.routableEndpoints()).extracting(Endpoint::address).containsExactly("10.0.1.1");

            dubbo.unregister(bWeightZero);
            h.awaitService(host, s -> s.endpoints().size() == 1);
            dubbo.unregister(a);
            // the interface's providers node is still there: the host stays (its cluster too), with no endpoints
            h.awaitService(host, s -> s.endpoints().isEmpty());
            assertThat(h.status.skippedCount()).isZero();
        }
    }

    @Test
    void consumersRoutersAndDubboReservedNodes_neverBecomeServices() throws Exception {
        String iface = "org.demo.Billing";
        dubbo.register(provider("dubbo", "10.0.2.1:20880", iface, ""));
        dubbo.register("consumer://10.0.2.9/" + iface + "?application=shop&category=consumers&check=false"
                + "&interface=" + iface + "&side=consumer");
        dubbo.register("condition://0.0.0.0/" + iface + "?category=routers&dynamic=false&rule="
                + URLEncoder.encode("host = 10.0.2.9 => host = 10.0.2.1", StandardCharsets.UTF_8));
        dubbo.register("consumer://10.0.2.9/org.demo.OnlyConsumed?application=shop&category=consumers"
                + "&interface=org.demo.OnlyConsumed&side=consumer");
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/dubbo/metadata/org.demo.Billing/provider/shop", "{}".getBytes());
        // an application's rules, and other config-center entries, are not the bridge's (no dubboConsumerApplication)
        raw.create().creatingParentsIfNeeded().forPath("/dubbo/config/dubbo/shop.configurators", "x".getBytes());
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/dubbo/config/dubbo/shop.condition-router", "garbage".getBytes());

        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/dubbo]")) {
            h.awaitSyncs(1);
            MeshService billing = h.awaitService("org.demo.billing.dubbo", s -> true);
            assertThat(billing.endpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo("10.0.2.1");
                assertThat(e.enabled()).isTrue();
            });
            assertThat(h.snapshot().services().keySet())
                    .noneMatch(host ->
                            host.contains("onlyconsumed") || host.contains("metadata") || host.contains("config"));
            assertThat(h.status.skippedCount()).isZero();
        }
    }

    @Test
    void dubbo26OverrideUrls_disableOrReweighProviders_asDubbosConsumerApplies_andTheirRemovalUndoesIt()
            throws Exception {
        String iface = "org.demo.Overridden";
        String a = provider("dubbo", "10.0.8.1:20880", iface, "");
        String b = provider("dubbo", "10.0.8.2:20880", iface, "");
        dubbo.register(a);
        dubbo.register(b);
        // what dubbo-admin 2.6 writes: disable one provider (address with port), reweigh every provider (0.0.0.0)
        String disableB = "override://10.0.8.2:20880/" + iface + "?category=configurators&disabled=true&dynamic=false"
                + "&enabled=true";
        String weighAll =
                "override://0.0.0.0/" + iface + "?category=configurators&dynamic=false&enabled=true&weight=40";
        // a rule someone switched off, and one for another service, change nothing
        String off = "override://10.0.8.1:20880/" + iface + "?category=configurators&disabled=true&enabled=false";
        String other = "override://0.0.0.0/org.demo.Other?category=configurators&disabled=true";
        dubbo.register(disableB);
        dubbo.register(weighAll);
        dubbo.register(off);
        dubbo.register(other);
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/dubbo]")) {
            String host = "org.demo.overridden.dubbo";
            MeshService s = h.awaitService(host, x -> x.routableEndpoints().size() == 1);
            assertThat(s.endpoints()).extracting(Endpoint::address).containsExactly("10.0.8.1", "10.0.8.2");
            assertThat(s.routableEndpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo("10.0.8.1");
                assertThat(e.weight()).isEqualTo(40);
            });

            dubbo.unregister(disableB);
            h.awaitService(host, x -> x.routableEndpoints().size() == 2);
            dubbo.unregister(weighAll);
            MeshService back =
                    h.awaitService(host, x -> x.routableEndpoints().stream().allMatch(e -> e.weight() == 100));
            assertThat(back.routableEndpoints()).hasSize(2);
            assertThat(h.status.skippedCount()).isZero();
        }
    }

    @Test
    void configCenterRules_asDubboAdminWritesThem_disableAndReweigh_forTheMatchingAddresses() throws Exception {
        String iface = "org.demo.Governed";
        dubbo.register(provider("dubbo", "10.0.9.1:20880", iface, "version=1.0.0"));
        dubbo.register(provider("dubbo", "10.0.9.2:20880", iface, "version=1.0.0"));
        dubbo.register(provider("dubbo", "10.0.9.3:20880", iface, "version=1.0.0"));
        String path = "/dubbo/config/dubbo/" + iface + ":1.0.0:.configurators";
        String rule = """
                configVersion: v2.7
                scope: service
                key: org.demo.Governed:1.0.0
                enabled: true
                configs:
                - side: consumer
                  addresses: [0.0.0.0]
                  providerAddresses: ["10.0.9.2:20880"]
                  parameters:
                    disabled: true
                - side: consumer
                  addresses: [0.0.0.0]
                  providerAddresses: ["10.0.9.3"]
                  parameters:
                    weight: 300
                - side: provider
                  addresses: ["10.0.9.1:20880"]
                  parameters:
                    weight: 5
                """;
        raw.create().creatingParentsIfNeeded().forPath(path, rule.getBytes(StandardCharsets.UTF_8));
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/dubbo]")) {
            String host = "org.demo.governed.v-1-0-0.dubbo";
            MeshService s = h.awaitService(host, x -> x.routableEndpoints().size() == 2);
            assertThat(s.routableEndpoints())
                    .extracting(e -> e.address() + "=" + e.weight())
                    // the provider-side weight is the provider's to apply (it registers its new URL)
                    .containsExactly("10.0.9.1=100", "10.0.9.3=300");

            // the rule switched off as a whole: every provider back as registered
            raw.setData()
                    .forPath(
                            path,
                            rule.replace("enabled: true", "enabled: false").getBytes(StandardCharsets.UTF_8));
            h.awaitService(
                    host,
                    x -> x.routableEndpoints().size() == 3
                            && x.endpoints().stream().allMatch(e -> e.weight() == 100));

            // garbage keeps the rules before it (Dubbo's consumer does the same), reported
            raw.setData().forPath(path, rule.getBytes(StandardCharsets.UTF_8));
            h.awaitService(host, x -> x.routableEndpoints().size() == 2);
            raw.setData().forPath(path, "configs: [oops".getBytes(StandardCharsets.UTF_8));
            await().atMost(TestCatalog.TIMEOUT).until(() -> h.status.skippedCount() == 1);
            assertThat(h.snapshot().service(host).routableEndpoints()).hasSize(2);

            raw.delete().forPath(path);
            h.awaitService(host, x -> x.routableEndpoints().size() == 3);
        }
    }

    @Test
    void emptyProtocolUrl_isNoProvider_andTheServiceFollowsTheEmptyPolicy() throws Exception {
        String iface = "org.demo.Empty";
        String emptyUrl = "empty://10.0.3.1:20880/" + iface + "?category=providers&interface=" + iface;
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/dubbo/" + iface + "/providers/" + URLEncoder.encode(emptyUrl, StandardCharsets.UTF_8));
        String real = provider("dubbo", "10.0.3.2:20880", "org.demo.Kept", "");
        dubbo.register(real);
        try (WatcherHarness h =
                WatcherHarness.start(zk.address(), "emptyServicePolicy: keep", "emptyServiceGrace: 1500ms")) {
            h.awaitSyncs(1);
            assertThat(h.snapshot().service("org.demo.empty.dubbo")).isNull();
            assertThat(h.status.skippedCount()).isZero();

            h.awaitService("org.demo.kept.dubbo", s -> s.endpoints().size() == 1);
            dubbo.unregister(real);
            await().during(Duration.ofMillis(500))
                    .atMost(TestCatalog.TIMEOUT)
                    .until(() -> h.snapshot().service("org.demo.kept.dubbo") != null);
            h.awaitService("org.demo.kept.dubbo", s -> s.endpoints().isEmpty());
        }
    }

    /** Writes a provider znode the way every Dubbo version does: the full URL, encoded once, under providers. */
    private static void writeProvider(String iface, String url) throws Exception {
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/dubbo/" + iface + "/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8));
    }

    @Test
    void znodesAsDubbo26Writes_areReadAsDubbosOwnParserReadsThem() throws Exception {
        String iface = "org.demo.Legacy";
        // Dubbo 2.6 and 2.7.0-2.7.2 write version, group and weight as default.* parameters
        writeProvider(
                iface,
                "dubbo://10.0.6.1:20880/" + iface + "?anyhost=true&application=legacy&default.group=blue"
                        + "&default.version=1.0.0&default.weight=30&dubbo=2.6.2&interface=" + iface
                        + "&methods=a&pid=1&side=provider&timestamp=1500000000000");
        // values are decoded once: '+' stays, a literal '%' is kept
        writeProvider(
                iface,
                "dubbo://10.0.6.2:20880/" + iface + "?application=legacy&interface=" + iface
                        + "&note=50%&side=provider&version=1.0.0+b7");
        // enabled=false is never called, even with disabled=false: Dubbo's registry hands it to no consumer
        writeProvider(
                iface,
                "dubbo://10.0.6.3:20880/" + iface + "?application=legacy&disabled=false&enabled=false" + "&interface="
                        + iface + "&side=provider");
        writeProvider(
                iface,
                "dubbo://10.0.6.4:20880/" + iface + "?application=legacy&disabled=false&interface=" + iface
                        + "&side=provider");

        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/dubbo]")) {
            MeshService blue = h.awaitService("org.demo.legacy.v-1-0-0.g-blue.dubbo", s -> true);
            assertThat(blue.endpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo("10.0.6.1");
                assertThat(e.weight()).isEqualTo(30);
            });
            MeshService build = h.awaitService("org.demo.legacy.v-1-0-0-b7.dubbo", s -> true);
            assertThat(build.endpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo("10.0.6.2");
                assertThat(e.labels()).containsEntry("version", "1.0.0_b7").containsKey("note");
            });
            assertThat(build.sources())
                    .singleElement()
                    .satisfies(k -> assertThat(k.version()).isEqualTo("1.0.0+b7"));
            MeshService plain =
                    h.awaitService("org.demo.legacy.dubbo", s -> s.endpoints().size() == 2);
            assertThat(plain.endpoints())
                    .extracting(e -> e.address() + " routable=" + e.routable())
                    .containsExactlyInAnyOrder("10.0.6.3 routable=false", "10.0.6.4 routable=true");
            assertThat(h.status.skippedCount()).isZero();
        }
    }

    @Test
    void sameInterfaceUnderTwoRoots_isOneHostPerRoot_theHomeRootKeepsItsHost() throws Exception {
        String iface = "org.demo.Rooted";
        // Dubbo's registry group picks the root: /dubbo by default, /gray for group=gray
        writeProvider(iface, provider("dubbo", "10.0.7.1:20880", iface, ""));
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/gray/" + iface + "/providers/"
                        + URLEncoder.encode(provider("dubbo", "10.0.7.2:20880", iface, ""), StandardCharsets.UTF_8));
        try (WatcherHarness h = WatcherHarness.start(zk.address(), "zkServicesPath: [/dubbo, /gray]")) {
            MeshService prod = h.awaitService("org.demo.rooted.dubbo", s -> true);
            MeshService gray = h.awaitService("org.demo.rooted.root-gray.dubbo", s -> true);
            h.awaitSyncs(1);
            assertThat(h.snapshot().service("org.demo.rooted.dubbo").endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.7.1");
            assertThat(gray.endpoints()).extracting(Endpoint::address).containsExactly("10.0.7.2");
            assertThat(prod.sources()).hasSize(1);
        }
        try (WatcherHarness h = WatcherHarness.start(
                zk.address(),
                "zkServicesPath: [/dubbo, /gray]",
                "dubboInterfaceHostTemplate: \"{interface}.{root}.dubbo\"")) {
            h.awaitService("org.demo.rooted.dubbo.dubbo", s -> s.endpoints().size() == 1);
            h.awaitService("org.demo.rooted.gray.dubbo", s -> s.endpoints().size() == 1);
        }
    }

    @Test
    void sameAddressRegisteredTwice_keepsTheNewestRegistration() throws Exception {
        String iface = "org.demo.Restarted";
        dubbo.register(provider("dubbo", "10.0.4.1:20880", iface, "timestamp=1700000000000&weight=10")
                .replace("&timestamp=1700000000000&timestamp", "&timestamp"));
        dubbo.register(provider("dubbo", "10.0.4.1:20880", iface, "weight=70")
                .replace("timestamp=1700000000000", "timestamp=1700000009999"));
        try (WatcherHarness h = WatcherHarness.start(zk.address())) {
            MeshService s = h.awaitService("org.demo.restarted.dubbo", x -> true);
            assertThat(s.endpoints())
                    .singleElement()
                    .satisfies(e -> assertThat(e.weight()).isEqualTo(70));
        }
    }

    @Test
    void hostTemplates_andServicePorts_followTheConfiguration() throws Exception {
        String iface = "org.demo.Templated";
        dubbo.register(provider("dubbo", "10.0.5.1:20880", iface, "version=2.1&group=gold"));
        try (WatcherHarness h = WatcherHarness.start(
                zk.address(),
                "dubboInterfaceHostTemplate: \"{group}.{version}.{interface}.{registry}.example\"",
                "servicePorts: {dubbo: 7001}")) {
            MeshService s = h.awaitService("gold.2-1.org.demo.templated.zk.example", x -> true);
            assertThat(s.ports()).containsExactly(new ServicePort("dubbo", 7001, Protocol.DUBBO));
            assertThat(s.endpoints())
                    .singleElement()
                    .satisfies(e -> assertThat(e.ports()).isEqualTo(java.util.Map.of("dubbo", 20880)));
            assertThat(List.copyOf(h.snapshot().services().keySet())).doesNotContain("org.demo.templated.dubbo");
        }
    }
}
