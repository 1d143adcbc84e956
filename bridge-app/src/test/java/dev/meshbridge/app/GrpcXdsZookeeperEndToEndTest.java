package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.ads.AdsTestClient;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.registry.zookeeper.ZkServer;
import dev.meshbridge.registry.zookeeper.ZookeeperOptions;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.xds.XdsNameResolverProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole way, with nothing but real parts: gRPC backends on 127.0.0.1 register in a real in-process ZooKeeper as
 * Spring Cloud ZooKeeper instances ({@code orders}) and as a Dubbo 3 application serving Triple ({@code shop}); the
 * full bridge ({@link Bridge#start} on a {@code bridge.yaml} naming that ZooKeeper) reads them with its ZooKeeper
 * watcher and serves them over xDS; grpc-java's own xDS client resolves {@code xds:///orders.services.zookeeper} and
 * {@code xds:///shop.dubbo} through the bridge and makes real RPCs, each answered by a backend with its own name.
 */
class GrpcXdsZookeeperEndToEndTest {

    private static final Logger log = LoggerFactory.getLogger(GrpcXdsZookeeperEndToEndTest.class);
    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger SCHEMES = new AtomicInteger();

    private static final String ORDERS = "orders.services.zookeeper";
    private static final String SHOP = "shop.dubbo";

    @TempDir
    Path dir;

    private ZkServer zk;
    private ZookeeperApps apps;
    private Path file;
    private Bridge bridge;
    private final Map<String, IdentityBackend> backends = new HashMap<>();
    private final Map<String, ZookeeperApps.SpringInstance> springInstances = new HashMap<>();
    private final Map<String, ZookeeperApps.DubboInstance> dubboInstances = new HashMap<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<XdsNameResolverProvider> resolvers = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    /** Between the bridge and ZooKeeper in the restart tests: cut, the registry is down for the bridge only. */
    private TcpProxy proxy;
    /** The xDS port the restart tests keep across bridge restarts. */
    private int xdsPort;

    @BeforeEach
    void startZookeeper() throws Exception {
        zk = new ZkServer();
        apps = new ZookeeperApps(zk);
        file = dir.resolve("bridge.yaml");
    }

    @AfterEach
    void stopAll() throws Exception {
        for (ManagedChannel c : channels) c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        for (XdsNameResolverProvider r : resolvers)
            NameResolverRegistry.getDefaultRegistry().deregister(r);
        for (AutoCloseable c : closeables) c.close();
        if (bridge != null) bridge.close();
        if (proxy != null) proxy.close();
        for (IdentityBackend b : backends.values()) b.close();
        apps.close();
        zk.close();
    }

    @Test
    void rpcs_reachEveryBackendRegisteredInZookeeper_andOneAddedLater() throws Exception {
        Clients clients = startWithTwoBackendsEach();

        springBackend("orders-3");
        dubboBackend("shop-3");
        awaitAnsweredBy(clients.orders(), "orders-1", "orders-2", "orders-3");
        awaitAnsweredBy(clients.shop(), "shop-1", "shop-2", "shop-3");

        assertThat(bridge.meters().find("meshbridge.xds.nacks").counters())
                .as("grpc-java accepted every resource the bridge sent")
                .allSatisfy(n -> assertThat(n.count()).isZero());
    }

    @Test
    void backendsRemovedDisabledOrWithWeightZero_getNoRpcs() throws Exception {
        Clients clients = startWithTwoBackendsEach();
        dubboBackend("shop-3");
        awaitAnsweredBy(clients.shop(), "shop-1", "shop-2", "shop-3");

        apps.unregister(springInstances.get("orders-1"));
        apps.updateDubbo(dubboInstances.get("shop-1"), Map.of("weight", "0"));
        apps.updateDubbo(dubboInstances.get("shop-2"), Map.of("disabled", "true"));

        assertNoRpcReaches(clients.orders(), Set.of("orders-1"), "orders-2");
        assertNoRpcReaches(clients.shop(), Set.of("shop-1", "shop-2"), "shop-3");
        assertThat(bridge.aggregator().current().service(SHOP).endpoints())
                .as("the weight-0 and the disabled instance stay in the catalog (/debug/catalog), not routable")
                .extracting(e -> e.port("tri"), Endpoint::routable)
                .containsExactlyInAnyOrder(
                        tuple(backends.get("shop-1").port(), false),
                        tuple(backends.get("shop-2").port(), false),
                        tuple(backends.get("shop-3").port(), true));
    }

    @Test
    void watcherRestartedByAConfigChange_andZookeeperRestarted_noRpcFails() throws Exception {
        Clients clients = startWithTwoBackendsEach();
        ManagedChannel orders = clients.orders();
        ManagedChannel shop = clients.shop();
        RegistryReconciler.Running first = zookeeperWatcher();
        long sequence = bridge.aggregator().flushNow().join().sequence();

        RpcTraffic traffic = new RpcTraffic(List.of(orders, shop));
        try {
            traffic.awaitMore(20);

            // 1. the registry's entry changes: the reconciler stops this watcher and starts a new one
            Files.writeString(file, config(Duration.ofSeconds(12)));
            bridge.checkConfigFile();
            RegistryReconciler.Running second = zookeeperWatcher();
            assertThat(second.watcher()).isNotSameAs(first.watcher());
            assertThat(second.config().options(ZookeeperOptions.class).sessionTimeout())
                    .isEqualTo(Duration.ofSeconds(12));
            assertThat(first.status().state()).isEqualTo(RegistryStatus.State.STOPPED);
            await().atMost(WAIT).until(() -> second.status().hasSynced());
            traffic.awaitMore(40);
            assertNothingPublishedSince(sequence, "the new watcher's first sync found what the old one had");
            // the new watcher follows ZooKeeper
            springBackend("orders-3");
            awaitAnsweredBy(orders, "orders-1", "orders-2", "orders-3");

            // 2. ZooKeeper restarts: the watcher is cut off, reconnects and resyncs, and the registering clients
            // re-register every instance (curator x-discovery deletes and re-creates them after a reconnect)
            sequence = bridge.aggregator().flushNow().join().sequence();
            Map<String, Long> registrations = apps.registrations();
            long syncs = second.status().syncCount();
            zk.restart();
            await().atMost(WAIT)
                    .until(() -> second.status().syncCount() > syncs
                            && second.status().state() == RegistryStatus.State.UP);
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(apps.registrations())
                            .hasSameSizeAs(registrations)
                            .allSatisfy((path, created) -> assertThat(created).isNotEqualTo(registrations.get(path))));
            traffic.awaitMore(40);
            assertNothingPublishedSince(sequence, "the restart and the re-registrations changed nothing");
            // the watcher still follows ZooKeeper
            dubboBackend("shop-3");
            awaitAnsweredBy(shop, "shop-1", "shop-2", "shop-3");
            traffic.awaitMore(40);
        } finally {
            traffic.stop();
        }
        log.info(
                "RPCs through both restarts: answered={} failed={}",
                traffic.answered(),
                traffic.failures().size());
        assertThat(traffic.failures())
                .as("RPCs that failed during the restarts")
                .isEmpty();
        assertThat(traffic.answeredBy()).containsKeys("orders-1", "orders-2", "shop-1", "shop-2");
    }

    // ------------------------------------------------------------------ restarts: a restart never takes traffic away

    @Test
    void bridgeRestartsWhileItsRegistryIsSlowToSync_firstAnswersHeld_noRpcFails() throws Exception {
        Clients clients = startBehindProxy(Duration.ofSeconds(60), false);
        RpcTraffic traffic = new RpcTraffic(List.of(clients.orders(), clients.shop()));
        try {
            traffic.awaitMore(20);
            proxy.cut();
            restartBridge();
            // the new bridge cannot read its registry yet: it answers nothing, and the clients keep what they have
            traffic.awaitMore(60);
            assertThat(bridge.ready()).isFalse();
            proxy.restore();
            await().atMost(WAIT).until(bridge::ready);
            traffic.awaitMore(40);
            springBackend("orders-3");
            awaitAnsweredBy(clients.orders(), "orders-1", "orders-2", "orders-3");
            traffic.awaitMore(20);
        } finally {
            traffic.stop();
        }
        log.info("RPCs through a restart with a slow registry: answered={}", traffic.answered());
        assertThat(traffic.failures()).as("RPCs that failed").isEmpty();
    }

    @Test
    void bridgeRestartsWhileItsRegistryIsDown_servesTheCatalogFile_thenPushesOnlyWhatChanged() throws Exception {
        Clients clients = startBehindProxy(Duration.ofSeconds(2), true);
        Path catalogFile = dir.resolve("data").resolve("catalog.json.gz");
        await().atMost(WAIT).until(() -> Files.exists(catalogFile));
        RpcTraffic traffic = new RpcTraffic(List.of(clients.orders(), clients.shop()));
        try {
            traffic.awaitMore(20);
            proxy.cut();
            restartBridge();
            // the registry's sync timeout passes: the bridge serves what it served before, from the file
            await().atMost(WAIT).until(bridge::ready);
            assertThat(bridge.staleRegistries()).containsExactly("zk");
            assertThat(bridge.aggregator().current().service(ORDERS).endpoints())
                    .hasSize(2);
            traffic.awaitMore(60);

            // a plain ADS client holding everything, to see what is pushed when the registry comes back
            AdsTestClient watcher = new AdsTestClient(
                    xdsPort,
                    io.envoyproxy.envoy.config.core.v3.Node.newBuilder()
                            .setId("watcher")
                            .build());
            closeables.add(watcher);
            watcher.openDelta();
            watcher.deltaSubscribe(CLUSTER, List.of(), Map.of());
            watcher.deltaAck(watcher.nextDelta());
            watcher.deltaSubscribe(ENDPOINT, List.of(), Map.of());
            DeltaDiscoveryResponse endpoints = watcher.nextDelta();
            assertThat(endpoints.getResourcesList()).hasSize(2);
            watcher.deltaAck(endpoints);

            // while it is down, one service changes in the registry; then it comes back
            springBackend("orders-3");
            proxy.restore();
            await().atMost(WAIT).until(() -> bridge.staleRegistries().isEmpty());
            awaitAnsweredBy(clients.orders(), "orders-1", "orders-2", "orders-3");
            DeltaDiscoveryResponse change = watcher.nextDelta();
            assertThat(change.getTypeUrl()).isEqualTo(ENDPOINT);
            assertThat(change.getResourcesList())
                    .singleElement()
                    .satisfies(r -> assertThat(r.getName()).contains(ORDERS));
            watcher.deltaAck(change);
            bridge.aggregator().flushNow().join();
            traffic.awaitMore(20);
            assertThat(watcher.pending()).as("nothing else was pushed").isZero();
        } finally {
            traffic.stop();
        }
        log.info("RPCs through a restart with the registry down: answered={}", traffic.answered());
        assertThat(traffic.failures()).as("RPCs that failed").isEmpty();
    }

    private static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    private static final String ENDPOINT = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

    private String restartConfig(Duration syncTimeout, boolean keepCatalog) {
        return """
                admin: {enabled: false}
                mcp: {enabled: false}
                xds: {bindAddress: 127.0.0.1, port: %d}
                reload: {enabled: false}
                data: {directory: "%s", writeInterval: 100ms}
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["127.0.0.1:%d"]
                    sessionTimeout: 10s
                    syncTimeout: %ds
                """.formatted(xdsPort, keepCatalog ? dir.resolve("data") : "", proxy.port(), syncTimeout.toSeconds());
    }

    /** As {@link #startWithTwoBackendsEach()}, with the bridge reaching ZooKeeper through {@link #proxy}. */
    private Clients startBehindProxy(Duration syncTimeout, boolean keepCatalog) throws Exception {
        proxy = new TcpProxy(zk.port());
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            xdsPort = free.getLocalPort();
        }
        springBackend("orders-1");
        springBackend("orders-2");
        dubboBackend("shop-1");
        dubboBackend("shop-2");
        Files.writeString(file, restartConfig(syncTimeout, keepCatalog));
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
        Clients clients = new Clients(xdsChannel(ORDERS), xdsChannel(SHOP));
        awaitAnsweredBy(clients.orders(), "orders-1", "orders-2");
        awaitAnsweredBy(clients.shop(), "shop-1", "shop-2");
        return clients;
    }

    /** Stops the bridge and starts a new one on the same configuration and port, as a process restart does. */
    private void restartBridge() throws Exception {
        bridge.close();
        bridge = null;
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
    }

    // ------------------------------------------------------------------ the bridge and its clients

    private String config(Duration sessionTimeout) {
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

    private void startBridge() throws Exception {
        Files.writeString(file, config(Duration.ofSeconds(10)));
        bridge = Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS);
    }

    private RegistryReconciler.Running zookeeperWatcher() {
        Collection<RegistryReconciler.Running> running = bridge.reconciler().running();
        assertThat(running)
                .singleElement()
                .satisfies(r -> assertThat(r.watcher()).isNotNull());
        return running.iterator().next();
    }

    /** The two xDS clients: {@code xds:///orders.services.zookeeper} and {@code xds:///shop.dubbo}. */
    private record Clients(ManagedChannel orders, ManagedChannel shop) {}

    /**
     * Registers backends orders-1 and orders-2 (Spring Cloud) and shop-1 and shop-2 (Dubbo), starts the bridge, and
     * waits until RPCs through each client reach its two backends.
     */
    private Clients startWithTwoBackendsEach() throws Exception {
        springBackend("orders-1");
        springBackend("orders-2");
        dubboBackend("shop-1");
        dubboBackend("shop-2");
        startBridge();
        Clients clients = new Clients(xdsChannel(ORDERS), xdsChannel(SHOP));
        awaitAnsweredBy(clients.orders(), "orders-1", "orders-2");
        awaitAnsweredBy(clients.shop(), "shop-1", "shop-2");
        return clients;
    }

    /** Starts backend {@code name} and registers it as an instance of Spring Cloud service {@code orders}. */
    private void springBackend(String name) throws Exception {
        springInstances.put(name, apps.registerSpring("orders", backend(name).port()));
    }

    /** Starts backend {@code name} and registers it as an instance of Dubbo application {@code shop} (Triple). */
    private void dubboBackend(String name) throws Exception {
        dubboInstances.put(name, apps.registerDubbo("shop", backend(name).port()));
    }

    private IdentityBackend backend(String name) throws Exception {
        IdentityBackend b = new IdentityBackend(name);
        backends.put(name, b);
        return b;
    }

    /**
     * A channel to {@code xds:///<host>} resolved by grpc-xds (SotW over ADS) against this test's bridge: its xDS
     * resolver has a bootstrap of its own (grpc-xds reads the global one once per JVM) under a scheme of its own.
     */
    private ManagedChannel xdsChannel(String host) {
        String scheme = "meshbridge-zk-e2e-" + SCHEMES.incrementAndGet();
        Map<String, ?> xdsServer = Map.of(
                "server_uri", "127.0.0.1:" + bridge.xdsPort(),
                "channel_creds", List.of(Map.of("type", "insecure")),
                "server_features", List.of("xds_v3"));
        Map<String, ?> bootstrap = Map.of(
                "xds_servers", List.of(xdsServer), "node", Map.of("id", scheme + "-" + host, "cluster", "zk-e2e"));
        XdsNameResolverProvider resolver = XdsNameResolverProvider.createForTest(scheme, bootstrap);
        NameResolverRegistry.getDefaultRegistry().register(resolver);
        resolvers.add(resolver);
        ManagedChannel channel = Grpc.newChannelBuilder(scheme + ":///" + host, InsecureChannelCredentials.create())
                .build();
        channels.add(channel);
        return channel;
    }

    // ------------------------------------------------------------------ what a caller sees

    /** Waits until the RPCs on {@code channel} are answered by exactly these backends. */
    private static void awaitAnsweredBy(ManagedChannel channel, String... names) {
        Set<String> expected = Set.of(names);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            Set<String> answered = new HashSet<>();
            for (int i = 0; i < 4 * expected.size(); i++) answered.add(IdentityBackend.ask(channel));
            assertThat(answered).isEqualTo(expected);
        });
    }

    /**
     * Waits until only {@code remaining} answers, then makes 50 more RPCs: every one is answered by {@code remaining}
     * and none reaches the {@code gone} backends (their own call counters are the witnesses).
     */
    private void assertNoRpcReaches(ManagedChannel channel, Set<String> gone, String remaining) {
        awaitAnsweredBy(channel, remaining);
        Map<String, Long> servedBefore = gone.stream()
                .collect(Collectors.toMap(n -> n, n -> backends.get(n).served()));
        for (int i = 0; i < 50; i++) assertThat(IdentityBackend.ask(channel)).isEqualTo(remaining);
        for (String name : gone)
            assertThat(backends.get(name).served()).as(name).isEqualTo(servedBefore.get(name));
    }

    /**
     * No catalog was published since the one numbered {@code sequence}: nothing changed for the clients and nothing was
     * pushed to them (the aggregator publishes only changes, and the xDS server pushes only what a catalog changed).
     */
    private void assertNothingPublishedSince(long sequence, String why) {
        assertThat(bridge.aggregator().flushNow().join().sequence()).as(why).isEqualTo(sequence);
    }
}
