package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scenarios every proxyless gRPC implementation must pass against the whole bridge, with nothing but real parts:
 * gRPC backends on 127.0.0.1 register in a real in-process ZooKeeper as a Dubbo 3 interface-level provider ({@code
 * org.demo.Greeter}, Triple), a Dubbo 3 application ({@code shop}, Triple) and Spring Cloud ZooKeeper instances
 * ({@code orders}); the bridge ({@link Bridge#start} on a {@code bridge.yaml} naming that ZooKeeper) reads them and
 * serves them over xDS; the implementation's own xDS client resolves {@code xds:///<host>} through the bridge and makes
 * real calls, each answered by a backend with its own name. Each subclass runs them with one implementation.
 */
abstract class ProxylessZookeeperScenarios {

    private static final Logger log = LoggerFactory.getLogger(ProxylessZookeeperScenarios.class);
    static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    static final Duration WAIT = Duration.ofSeconds(30);

    static final String GREETER = "org.demo.greeter.dubbo";
    static final String SHOP = "shop.dubbo";
    static final String ORDERS = "orders.services.zookeeper";

    /** Calls per service for a weight split: enough for a tight bound, a second or two per implementation. */
    static final int SPLIT_CALLS = 1200;
    /** The chance that a correct split falls outside the bound {@link #binomialBounds} draws. */
    static final double SPLIT_ALPHA = 1e-6;

    @TempDir
    Path dir;

    ZkServer zk;
    ZookeeperApps apps;
    Path file;
    Bridge bridge;
    ProxylessClient client;
    final Map<String, IdentityBackend> backends = new HashMap<>();
    final Map<String, ZookeeperApps.SpringInstance> springInstances = new HashMap<>();
    final Map<String, ZookeeperApps.DubboInstance> dubboInstances = new HashMap<>();
    final Map<String, ZookeeperApps.DubboProvider> greeterProviders = new HashMap<>();

    /** The implementation under test, resolving through the xDS server on {@code xdsPort}. */
    abstract ProxylessClient newClient(int xdsPort) throws Exception;

    @BeforeEach
    void startZookeeper() throws Exception {
        zk = new ZkServer();
        apps = new ZookeeperApps(zk);
        file = dir.resolve("bridge.yaml");
    }

    @AfterEach
    void stopAll() throws Exception {
        if (client != null) client.close();
        if (bridge != null) bridge.close();
        for (IdentityBackend b : backends.values()) b.close();
        apps.close();
        zk.close();
    }

    // ------------------------------------------------------------------ the scenarios

    @Test
    void calls_reachEveryBackend_ofADubboInterfaceADubboApplicationAndASpringCloudService_andOneAddedLater()
            throws Exception {
        startWithTwoBackendsEach();

        greeterBackend("greeter-3", Map.of());
        dubboBackend("shop-3", Map.of());
        springBackend("orders-3");
        awaitAnsweredBy(GREETER, "greeter-1", "greeter-2", "greeter-3");
        awaitAnsweredBy(SHOP, "shop-1", "shop-2", "shop-3");
        awaitAnsweredBy(ORDERS, "orders-1", "orders-2", "orders-3");

        assertNoNack();
    }

    /**
     * Providers of weight 100 and 50 (Dubbo's {@code weight}, interface and application level): of {@value
     * #SPLIT_CALLS} calls, the first gets its 2/3 within the bound a binomial draw with that chance keeps to (a
     * random pick by weight, as gRPC's weighted_target makes it; an even split, 600, lies far outside).
     */
    @Test
    void split_followsTheRegistryWeights_100to50() throws Exception {
        greeterBackend("greeter-1", Map.of());
        greeterBackend("greeter-2", Map.of("weight", "50"));
        dubboBackend("shop-1", Map.of());
        dubboBackend("shop-2", Map.of("weight", "50"));
        startBridgeAndClient();
        awaitAnsweredBy(GREETER, "greeter-1", "greeter-2");
        awaitAnsweredBy(SHOP, "shop-1", "shop-2");

        long[] bounds = binomialBounds(SPLIT_CALLS, 2.0 / 3, SPLIT_ALPHA);
        for (String[] service :
                List.of(new String[] {GREETER, "greeter-1", "greeter-2"}, new String[] {SHOP, "shop-1", "shop-2"})) {
            ProxylessClient.Calls calls = client.call(service[0], SPLIT_CALLS);
            log.info(
                    "weight split client={} service={} weights=100:50 calls={} {}={} {}={} bound=[{}, {}]",
                    client.implementation(),
                    service[0],
                    SPLIT_CALLS,
                    service[1],
                    calls.answeredBy(service[1]),
                    service[2],
                    calls.answeredBy(service[2]),
                    bounds[0],
                    bounds[1]);
            assertThat(calls.failures()).as("failed calls").isEmpty();
            assertThat(calls.answeredBy()).containsOnlyKeys(service[1], service[2]);
            assertThat(calls.answeredBy(service[1]))
                    .as(
                            "calls answered by %s (weight 100) of %d to %s with %s",
                            service[1], SPLIT_CALLS, service[0], client.implementation())
                    .isBetween(bounds[0], bounds[1]);
        }
        assertNoNack();
    }

    /**
     * Dubbo providers with {@code weight=0} or {@code disabled=true} (interface and application level) and a Spring
     * Cloud instance taken {@code OUT_OF_SERVICE} get no call; the others get them all.
     */
    @Test
    void disabledAndWeightZeroInstances_getNoCalls() throws Exception {
        startWithTwoBackendsEach();
        greeterBackend("greeter-3", Map.of());
        dubboBackend("shop-3", Map.of());
        awaitAnsweredBy(GREETER, "greeter-1", "greeter-2", "greeter-3");
        awaitAnsweredBy(SHOP, "shop-1", "shop-2", "shop-3");

        greeterProviders.put(
                "greeter-1", apps.updateDubboInterface(greeterProviders.get("greeter-1"), Map.of("weight", "0")));
        greeterProviders.put(
                "greeter-2", apps.updateDubboInterface(greeterProviders.get("greeter-2"), Map.of("disabled", "true")));
        apps.updateDubbo(dubboInstances.get("shop-1"), Map.of("weight", "0"));
        apps.updateDubbo(dubboInstances.get("shop-2"), Map.of("disabled", "true"));
        springInstances.put("orders-1", apps.outOfService(springInstances.get("orders-1")));

        assertNoCallReaches(GREETER, Set.of("greeter-1", "greeter-2"), "greeter-3");
        assertNoCallReaches(SHOP, Set.of("shop-1", "shop-2"), "shop-3");
        assertNoCallReaches(ORDERS, Set.of("orders-1"), "orders-2");
        assertThat(bridge.aggregator().current().service(SHOP).endpoints())
                .as("the weight-0 and the disabled instance stay in the catalog (/debug/catalog), not routable")
                .extracting(e -> e.port("tri"), Endpoint::routable)
                .containsExactlyInAnyOrder(
                        tuple(backends.get("shop-1").port(), false),
                        tuple(backends.get("shop-2").port(), false),
                        tuple(backends.get("shop-3").port(), true));
        assertNoNack();
    }

    /**
     * Under steady calls to all three services, one provider of each unregisters while it still serves (as a
     * provider shutting down gracefully does): the calls stop reaching it, and not one call fails.
     */
    @Test
    void removedProvider_stopsGettingCalls_andNoCallFails() throws Exception {
        startWithTwoBackendsEach();
        client.startTraffic(List.of(GREETER, SHOP, ORDERS));
        try {
            awaitTraffic(60);

            apps.unregister(greeterProviders.get("greeter-1"));
            apps.unregister(dubboInstances.get("shop-1"));
            apps.unregister(springInstances.get("orders-1"));

            Set<String> removed = Set.of("greeter-1", "shop-1", "orders-1");
            await().atMost(WAIT).untilAsserted(() -> {
                Map<String, Long> before = served(removed);
                awaitTraffic(30);
                assertThat(served(removed))
                        .as("calls the removed providers served")
                        .isEqualTo(before);
            });
            Map<String, Long> before = served(removed);
            ProxylessClient.Calls mid = awaitTraffic(60);
            assertThat(served(removed)).isEqualTo(before);
            assertThat(mid.answeredBy()).containsKeys("greeter-2", "shop-2", "orders-2");
        } finally {
            ProxylessClient.Calls all = client.stopTraffic();
            log.info(
                    "removal under traffic client={} answered={} failed={}",
                    client.implementation(),
                    all.answered(),
                    all.failures().size());
            assertThat(all.failures())
                    .as("calls that failed while providers went")
                    .isEmpty();
        }
        assertNoNack();
    }

    // ------------------------------------------------------------------ the bridge, its registrations, its client

    String config(Duration sessionTimeout) {
        return """
                admin: {enabled: false}
                mcp: {enabled: false}
                xds: {bindAddress: 127.0.0.1, port: 0}
                reload: {interval: 1h}
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["%s"]
                    sessionTimeout: %ds
                """.formatted(zk.address(), sessionTimeout.toSeconds());
    }

    void startBridgeAndClient() throws Exception {
        Files.writeString(file, config(Duration.ofSeconds(10)));
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
        client = newClient(bridge.xdsPort());
    }

    /**
     * Registers greeter-1 and greeter-2 (Dubbo interface), shop-1 and shop-2 (Dubbo application) and orders-1 and
     * orders-2 (Spring Cloud), starts the bridge and the client, and waits until calls reach all six.
     */
    void startWithTwoBackendsEach() throws Exception {
        greeterBackend("greeter-1", Map.of());
        greeterBackend("greeter-2", Map.of());
        dubboBackend("shop-1", Map.of());
        dubboBackend("shop-2", Map.of());
        springBackend("orders-1");
        springBackend("orders-2");
        startBridgeAndClient();
        awaitAnsweredBy(GREETER, "greeter-1", "greeter-2");
        awaitAnsweredBy(SHOP, "shop-1", "shop-2");
        awaitAnsweredBy(ORDERS, "orders-1", "orders-2");
    }

    /** Starts backend {@code name} and registers it as a provider of Dubbo interface {@code org.demo.Greeter}. */
    void greeterBackend(String name, Map<String, String> parameters) throws Exception {
        greeterProviders.put(
                name,
                apps.registerDubboInterface(
                        "org.demo.Greeter", "greeter", backend(name).port(), parameters));
    }

    /** Starts backend {@code name} and registers it as an instance of Dubbo application {@code shop} (Triple). */
    void dubboBackend(String name, Map<String, String> metadata) throws Exception {
        dubboInstances.put(name, apps.registerDubbo("shop", backend(name).port(), metadata));
    }

    /** Starts backend {@code name} and registers it as an instance of Spring Cloud service {@code orders}. */
    void springBackend(String name) throws Exception {
        springInstances.put(name, apps.registerSpring("orders", backend(name).port()));
    }

    private IdentityBackend backend(String name) throws Exception {
        IdentityBackend b = new IdentityBackend(name);
        backends.put(name, b);
        return b;
    }

    // ------------------------------------------------------------------ what a caller sees

    /** Waits until the calls to {@code host} are answered by exactly these backends. */
    void awaitAnsweredBy(String host, String... names) {
        client.awaitAnsweredBy(host, names);
    }

    /**
     * Waits until only {@code remaining} answers, then makes 50 more calls: every one is answered by {@code remaining}
     * and none reaches the {@code gone} backends (their own call counters are the witnesses).
     */
    void assertNoCallReaches(String host, Set<String> gone, String remaining) {
        awaitAnsweredBy(host, remaining);
        Map<String, Long> before = served(gone);
        ProxylessClient.Calls calls = client.call(host, 50);
        assertThat(calls.failures()).isEmpty();
        assertThat(calls.answeredBy()).containsOnlyKeys(remaining);
        assertThat(served(gone)).isEqualTo(before);
    }

    /** Waits until the background traffic has made {@code n} more calls (answered or not); its calls so far. */
    ProxylessClient.Calls awaitTraffic(long n) {
        return client.awaitTraffic(n);
    }

    /** The calls each of these backends has served so far. */
    Map<String, Long> served(Set<String> names) {
        return names.stream()
                .collect(Collectors.toMap(n -> n, n -> backends.get(n).served()));
    }

    /** No client refused a resource the bridge sent (the bridge counts every NACK). */
    void assertNoNack() {
        assertThat(bridge.meters().find("meshbridge.xds.nacks").counters())
                .as("%s accepted every resource the bridge sent", client.implementation())
                .allSatisfy(n -> assertThat(n.count()).isZero());
    }

    /**
     * The narrowest {@code [low, high]} that holds a Binomial({@code n}, {@code p}) draw with probability at least
     * {@code 1 - alpha}, each tail holding at most {@code alpha / 2} (exact: the probabilities are summed in log space).
     */
    static long[] binomialBounds(int n, double p, double alpha) {
        double[] pmf = new double[n + 1];
        double logP = Math.log(p);
        double logQ = Math.log1p(-p);
        double logChoose = 0;
        for (int k = 0; k <= n; k++) {
            if (k > 0) logChoose += Math.log(n - k + 1) - Math.log(k);
            pmf[k] = Math.exp(logChoose + k * logP + (n - k) * logQ);
        }
        int low = 0;
        double tail = 0;
        while (low < n && tail + pmf[low] <= alpha / 2) tail += pmf[low++];
        int high = n;
        tail = 0;
        while (high > 0 && tail + pmf[high] <= alpha / 2) tail += pmf[high--];
        return new long[] {low, high};
    }
}
