package dev.meshbridge.registry.eureka;

import static dev.meshbridge.registry.eureka.testing.EurekaRegistrar.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.netflix.appinfo.AmazonInfo;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import dev.meshbridge.core.config.HostNamePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.ManualTicker;
import dev.meshbridge.core.testing.TableLookup;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.NameFilter;
import dev.meshbridge.core.watch.Ticker;
import dev.meshbridge.core.watch.WatcherRuntime;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The watcher against a real Eureka server in-process, with instances registered over REST as Spring Cloud Netflix
 * registers them; every test asserts the catalog a user would see.
 */
class EurekaWatcherTest {

    private static EmbeddedEurekaServer server;
    private static EurekaRegistrar registrar;

    private final TestCatalog catalog = new TestCatalog();
    private final List<EurekaWatcher> watchers = new ArrayList<>();
    private WatcherContext context;

    @BeforeAll
    static void startServer() {
        server = EmbeddedEurekaServer.start();
        registrar = new EurekaRegistrar(server.serviceUrl());
    }

    @AfterAll
    static void stopServer() {
        registrar.close();
        server.close();
    }

    @AfterEach
    void cleanUp() {
        watchers.forEach(EurekaWatcher::close);
        catalog.close();
        registrar.cancelAll();
    }

    static EurekaOptions.Builder fast() {
        return EurekaOptions.builder().fetchInterval(Duration.ofMillis(100)).maxBackoff(Duration.ofMillis(500));
    }

    private EurekaWatcher watch(EurekaOptions options) {
        return watch(RegistryConfig.of("eureka", "eu", List.of(server.serviceUrl()), options));
    }

    private EurekaWatcher watch(RegistryConfig config) {
        return watch(config, WatcherRuntime.system());
    }

    private EurekaWatcher watch(RegistryConfig config, WatcherRuntime runtime) {
        WatcherContext base = catalog.context(config);
        context = new WatcherContext(config, base.events(), base.status(), runtime);
        EurekaWatcher w = new EurekaWatcher(context);
        watchers.add(w);
        w.start();
        return w;
    }

    private RegistryStatus status() {
        return context.status();
    }

    static Endpoint endpoint(MeshService service, String address) {
        return service.endpoints().stream()
                .filter(e -> e.address().equals(address))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no endpoint " + address + " in " + service.endpoints()));
    }

    static boolean has(MeshService service, String address, Health health) {
        return service.endpoints().stream().anyMatch(e -> e.address().equals(address) && e.health() == health);
    }

    @Test
    void fullFetch_registeredApplications_becomeServicesWithEndpoints() {
        registrar.register(springCloudInstance("orders", "10.0.0.1", 8080).build());
        registrar.register(springCloudInstance("orders", "10.0.0.2", 8080).build());

        EurekaWatcher watcher = watch(fast().build());

        MeshService orders =
                catalog.awaitService("orders.eureka", s -> s.endpoints().size() == 2);
        assertThat(orders.ports()).containsExactly(new ServicePort("http", 80, Protocol.HTTP));
        Endpoint e = endpoint(orders, "10.0.0.1");
        assertThat(e.ports()).containsExactly(Map.entry("http", 8080));
        assertThat(e.health()).isEqualTo(Health.HEALTHY);
        assertThat(e.routable()).isTrue();
        assertThat(e.weight()).isEqualTo(Endpoint.DEFAULT_WEIGHT);
        assertThat(e.labels()).containsEntry("management.port", "8080");
        assertThat(orders.origin().registryType()).isEqualTo("eureka");
        assertThat(orders.origin().name()).isEqualTo("ORDERS");
        await().atMost(TestCatalog.TIMEOUT)
                .until(() -> status().hasSynced() && status().state() == RegistryStatus.State.UP);
        assertThat(watcher.stats().fullFetches()).isEqualTo(1);
    }

    @Test
    void delta_newApplication_appearsWithoutAnotherFullFetch() {
        registrar.register(springCloudInstance("orders", "10.0.1.1", 8080).build());
        EurekaWatcher watcher = watch(fast().build());
        catalog.awaitService("orders.eureka");

        registrar.register(springCloudInstance("payments", "10.0.1.2", 9090).build());

        MeshService payments = catalog.awaitService("payments.eureka");
        assertThat(endpoint(payments, "10.0.1.2").ports()).containsExactly(Map.entry("http", 9090));
        assertThat(watcher.stats().fullFetches()).isEqualTo(1);
        assertThat(watcher.stats().deltaFetches()).isPositive();
        assertThat(watcher.stats().hashMismatches()).isZero();
    }

    @Test
    void instanceStartingThenUpThenDown_isUnhealthyHealthyUnhealthy() {
        InstanceInfo starting = springCloudInstance("inventory", "10.0.2.1", 8080)
                .setStatus(InstanceStatus.STARTING)
                .build();
        registrar.register(springCloudInstance("inventory", "10.0.2.2", 8080).build());
        registrar.register(starting);
        watch(fast().build());

        MeshService s =
                catalog.awaitService("inventory.eureka", x -> x.endpoints().size() == 2);
        assertThat(endpoint(s, "10.0.2.1").health()).isEqualTo(Health.UNHEALTHY);
        assertThat(endpoint(s, "10.0.2.2").health()).isEqualTo(Health.HEALTHY);

        // Spring Cloud registers again on every status change of its own
        starting.setStatus(InstanceStatus.UP);
        registrar.register(starting);
        catalog.awaitService("inventory.eureka", x -> has(x, "10.0.2.1", Health.HEALTHY));

        starting.setStatus(InstanceStatus.DOWN);
        registrar.register(starting);
        MeshService down = catalog.awaitService("inventory.eureka", x -> has(x, "10.0.2.1", Health.UNHEALTHY));
        assertThat(down.endpoints()).hasSize(2);
        assertThat(endpoint(down, "10.0.2.2").health()).isEqualTo(Health.HEALTHY);
    }

    @Test
    void outOfService_drains_andBackInService_afterOverrideRemovedAndClientRenews() {
        InstanceInfo instance = springCloudInstance("catalog", "10.0.3.1", 8080).build();
        registrar.register(instance);
        registrar.register(springCloudInstance("catalog", "10.0.3.2", 8080).build());
        watch(fast().build());
        catalog.awaitService("catalog.eureka", s -> s.endpoints().size() == 2);

        registrar.overrideStatus(instance, InstanceStatus.OUT_OF_SERVICE);
        MeshService draining = catalog.awaitService("catalog.eureka", s -> has(s, "10.0.3.1", Health.DRAINING));
        assertThat(endpoint(draining, "10.0.3.2").health()).isEqualTo(Health.HEALTHY);

        // removing the override leaves the status UNKNOWN until the client's next renewal re-registers it
        registrar.removeStatusOverride(instance);
        catalog.awaitService("catalog.eureka", s -> has(s, "10.0.3.1", Health.UNHEALTHY));
        registrar.renew(instance);
        catalog.awaitService("catalog.eureka", s -> has(s, "10.0.3.1", Health.HEALTHY));
    }

    @Test
    void cancel_removesTheInstance_andTheLastOneRemovesTheService() {
        InstanceInfo a = springCloudInstance("shipping", "10.0.4.1", 8080).build();
        InstanceInfo b = springCloudInstance("shipping", "10.0.4.2", 8080).build();
        registrar.register(a);
        registrar.register(b);
        watch(fast().build());
        catalog.awaitService("shipping.eureka", s -> s.endpoints().size() == 2);

        registrar.cancel(a);
        MeshService one =
                catalog.awaitService("shipping.eureka", s -> s.endpoints().size() == 1);
        assertThat(one.endpoints().get(0).address()).isEqualTo("10.0.4.2");

        registrar.cancel(b);
        catalog.awaitAbsent("shipping.eureka");
    }

    @Test
    void metadata_becomesSanitizedLabels_zoneRegionAndWeight() {
        registrar.register(springCloudInstance("billing", "10.0.5.1", 8080)
                .setMetadata(Map.of(
                        "zone", "zone-a",
                        "region", "eu-west",
                        "weight", "50",
                        "version", "1.2.3",
                        "owner team", "payments",
                        "build", "x".repeat(70)))
                .build());
        registrar.register(springCloudInstance("billing", "10.0.5.2", 8080)
                .setMetadata(Map.of("weight", "heavy"))
                .build());
        registrar.register(springCloudInstance("billing", "10.0.5.3", 8080)
                .setMetadata(Map.of("weight", "0"))
                .build());
        watch(fast().build());

        MeshService s =
                catalog.awaitService("billing.eureka", x -> x.endpoints().size() == 3);
        Endpoint e = endpoint(s, "10.0.5.1");
        assertThat(e.locality()).isEqualTo(Locality.of("eu-west", "zone-a"));
        assertThat(e.weight()).isEqualTo(50);
        assertThat(e.labels())
                .containsEntry("version", "1.2.3")
                .containsEntry("owner_team", "payments")
                .containsEntry("zone", "zone-a")
                .doesNotContainKey("build");
        assertThat(status().droppedLabelCount()).isPositive();
        Endpoint malformedWeight = endpoint(s, "10.0.5.2");
        assertThat(malformedWeight.weight()).isEqualTo(Endpoint.DEFAULT_WEIGHT);
        assertThat(malformedWeight.routable()).isTrue();
        assertThat(status().skippedCount()).isPositive();
        assertThat(endpoint(s, "10.0.5.3").routable()).isFalse();
        assertThat(s.routableEndpoints()).extracting(Endpoint::address).containsExactly("10.0.5.1", "10.0.5.2");
    }

    @Test
    void awsDataCenter_givesZoneAndRegion_securePortIsHttps() {
        AmazonInfo aws = AmazonInfo.Builder.newBuilder()
                .addMetadata(AmazonInfo.MetaDataKey.instanceId, "i-0abc")
                .addMetadata(AmazonInfo.MetaDataKey.availabilityZone, "us-east-1b")
                .addMetadata(AmazonInfo.MetaDataKey.localIpv4, "10.0.6.1")
                .build();
        registrar.register(springCloudInstance("gateway", "10.0.6.1", 8080)
                .setDataCenterInfo(aws)
                .setSecurePort(8443)
                .enablePort(InstanceInfo.PortType.SECURE, true)
                .build());
        watch(fast().build());

        MeshService s = catalog.awaitService("gateway.eureka");
        Endpoint e = endpoint(s, "10.0.6.1");
        assertThat(e.locality()).isEqualTo(Locality.of("us-east-1", "us-east-1b"));
        // a secure instance is called on its secure port only (Spring's EurekaServiceInstance), even with port on
        assertThat(e.ports()).containsExactly(Map.entry("https", 8443));
        assertThat(s.ports()).containsExactly(new ServicePort("https", 443, Protocol.HTTPS));
    }

    @Test
    void polls_runOnlyAsTheInjectedTickerAdvances() {
        ManualTicker ticker = new ManualTicker();
        registrar.register(springCloudInstance("clock", "10.0.11.1", 8080).build());
        EurekaWatcher watcher = watch(
                RegistryConfig.of(
                        "eureka",
                        "eu",
                        List.of(server.serviceUrl()),
                        fast().fetchInterval(Duration.ofSeconds(30)).build()),
                new WatcherRuntime(ticker, dev.meshbridge.core.watch.HostResolver.Lookup.SYSTEM));
        catalog.awaitService("clock.eureka", x -> x.endpoints().size() == 1);
        await().atMost(TestCatalog.TIMEOUT).until(() -> ticker.pending() == 1);

        registrar.register(springCloudInstance("clock", "10.0.11.2", 8080).build());
        assertThat(ticker.pendingDelays()).containsExactly(Duration.ofSeconds(30));
        assertThat(catalog.service("clock.eureka").endpoints()).hasSize(1);

        ticker.advance(Duration.ofSeconds(30));
        catalog.awaitService("clock.eureka", x -> x.endpoints().size() == 2);
        assertThat(watcher.stats().deltaFetches()).isEqualTo(1);
    }

    @Test
    void preferIpAddressFalse_servesTheHostNameClientsConnectTo_notTheIpAddr() {
        // Spring Cloud Netflix's default: hostName is the machine's name; Spring's and Netflix's clients connect to it
        registrar.register(
                springCloudInstance("legacy", "localhost", "10.0.7.9", 8081).build());
        registrar.register(springCloudInstance("legacy", "10.0.7.1", 8080).build());
        watch(fast().build());

        MeshService s = catalog.awaitService("legacy.eureka", x -> x.endpoints().size() == 2);
        assertThat(s.endpoints()).extracting(Endpoint::address).containsExactly("10.0.7.1", "127.0.0.1");
        assertThat(endpoint(s, "127.0.0.1").ports()).containsExactly(Map.entry("http", 8081));
        assertThat(status().skippedCount()).isZero();
    }

    @Test
    void hostNameThatDoesNotResolve_leavesOutOnlyThatInstance_reported() {
        TableLookup dns = new TableLookup().put("box-1.corp", "10.0.7.21");
        registrar.register(
                springCloudInstance("legacy3", "box-1.corp", "10.0.7.11", 8080).build());
        registrar.register(
                springCloudInstance("legacy3", "gone.corp", "10.0.7.12", 8080).build());
        watch(
                RegistryConfig.of("eureka", "eu", List.of(server.serviceUrl()), fast().build()),
                new WatcherRuntime(Ticker.system(), dns));

        MeshService s = catalog.awaitService("legacy3.eureka");
        assertThat(s.endpoints()).extracting(Endpoint::address).containsExactly("10.0.7.21");
        await().atMost(TestCatalog.TIMEOUT).until(() -> status().skippedCount() > 0);
    }

    @Test
    void hostNameInsteadOfIp_skip_leavesOutOnlyThatInstance() {
        registrar.register(springCloudInstance("legacy2", "10.0.8.1", 8080).build());
        registrar.register(
                springCloudInstance("legacy2", "localhost", "10.0.8.2", 8081).build());
        watch(RegistryConfig.of("eureka", "eu", List.of(server.serviceUrl()), fast().build())
                .withHostNames(new HostNamePolicy(HostNamePolicy.Mode.SKIP, HostNamePolicy.DEFAULT_REFRESH)));

        MeshService s = catalog.awaitService("legacy2.eureka");
        assertThat(s.endpoints()).extracting(Endpoint::address).containsExactly("10.0.8.1");
        assertThat(status().skippedCount()).isEqualTo(1);
    }

    @Test
    void applicationFilter_includeAndExcludePatterns_decideWhichAppsBecomeServices() {
        registrar.register(springCloudInstance("orders-api", "10.0.9.1", 8080).build());
        registrar.register(
                springCloudInstance("orders-canary", "10.0.9.2", 8080).build());
        registrar.register(springCloudInstance("reporting", "10.0.9.3", 8080).build());
        watch(fast().applications(NameFilter.of(List.of("orders-*"), List.of("*-CANARY")))
                .build());

        catalog.awaitService("orders-api.eureka");
        await().atMost(TestCatalog.TIMEOUT).until(() -> status().hasSynced());
        assertThat(catalog.snapshot().services().keySet())
                .contains("orders-api.eureka")
                .doesNotContain("orders-canary.eureka", "reporting.eureka");
    }

    @Test
    void hostTemplate_withRegistryName_namesTheHost() {
        registrar.register(springCloudInstance("search", "10.0.10.1", 8080).build());
        watch(RegistryConfig.of(
                "eureka",
                "prod",
                List.of(server.serviceUrl()),
                fast().hostTemplate("{service}.{registry}.eureka.internal").build()));

        catalog.awaitService("search.prod.eureka.internal");
    }

    @Test
    void close_isIdempotent_andAStartedWatcherCannotStartAgain() {
        EurekaWatcher watcher = watch(fast().build());
        assertThatThrownBy(watcher::start).isInstanceOf(IllegalStateException.class);
        watcher.close();
        watcher.close();
        assertThat(status().state()).isEqualTo(RegistryStatus.State.STOPPED);
    }
}
