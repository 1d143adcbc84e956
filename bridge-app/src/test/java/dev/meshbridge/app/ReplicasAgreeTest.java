package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.netflix.appinfo.InstanceInfo;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replicas behind one Service must be interchangeable: bridges watching the same registries serve byte-identical
 * resources with identical versions over xDS (SotW and Delta) and MCP, before and after the registrations change. Run
 * against a real ZooKeeper (three replicas; Dubbo interface and application providers, Spring Cloud instances) and a
 * real Eureka server (two replicas; Spring Cloud Netflix instances).
 */
class ReplicasAgreeTest {

    private static final Logger log = LoggerFactory.getLogger(ReplicasAgreeTest.class);
    static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    static final Duration WAIT = Duration.ofSeconds(30);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<Bridge> bridges = new ArrayList<>();

    @AfterEach
    void stopAll() throws Exception {
        for (Bridge b : bridges) b.close();
        for (int i = closeables.size() - 1; i >= 0; i--) closeables.get(i).close();
    }

    /** A replica's configuration: every port picked free, nothing kept on disk, MCP unpaced so reads are immediate. */
    static String replicaConfig(String registry) {
        return """
                admin: {address: 127.0.0.1, port: 0}
                xds: {bindAddress: 127.0.0.1, port: 0}
                mcp: {bindAddress: 127.0.0.1, port: 0, minPushInterval: 0s}
                reload: {enabled: false}
                data: {directory: ""}
                shutdown: {drainPeriod: 1s}
                registries:
                %s
                """.formatted(registry.indent(2));
    }

    static Bridge startReplica(String name, String config) throws Exception {
        Bridge b = Bridge.start(BridgeConfig.parse(name, config, PROVIDERS), null, PROVIDERS);
        await().atMost(WAIT).until(b::ready);
        return b;
    }

    private void startReplicas(int n, String config) throws Exception {
        for (int i = 0; i < n; i++) bridges.add(startReplica("replica-" + i, config));
    }

    /**
     * Waits until every replica's catalog has this many endpoints and the same content version, then until every
     * replica serves the same bytes and versions; returns what the first one serves.
     */
    private ServedResources awaitAgreement(long endpoints) {
        await().atMost(WAIT)
                .until(() -> bridges.stream()
                                .map(b -> b.aggregator().current())
                                .allMatch(s -> s.endpointCount() == endpoints)
                        && bridges.stream()
                                        .map(b -> b.aggregator().current().version())
                                        .distinct()
                                        .count()
                                == 1);
        ServedResources[] first = new ServedResources[3];
        await().atMost(WAIT).untilAsserted(() -> {
            for (int i = 0; i < bridges.size(); i++) {
                Bridge b = bridges.get(i);
                // an Envoy sidecar's view, a proxyless gRPC client's view (its listeners and routes), istiod's view
                ServedResources[] views = {
                    ServedResources.read(b.xdsPort(), ServedResources.XDS_TYPES, "envoy", "sidecar"),
                    ServedResources.read(
                            b.xdsPort(),
                            ServedResources.XDS_TYPES,
                            "grpc",
                            "proxyless",
                            List.copyOf(b.aggregator().current().services().keySet())),
                    ServedResources.read(b.mcpPort(), ServedResources.MCP_TYPES, "istiod", null)
                };
                for (int v = 0; v < views.length; v++) {
                    if (i == 0) first[v] = views[v];
                    else
                        assertThat(views[v])
                                .as("what replica %d serves (view %d) equals what replica 0 serves", i, v)
                                .isEqualTo(first[v]);
                }
            }
        });
        log.info(
                "{} replicas agree: xDS sidecar {} resources, xDS proxyless {} resources {}, MCP {} resources {}",
                bridges.size(),
                first[0].count(),
                first[1].count(),
                first[1].sotwVersions(),
                first[2].count(),
                first[2].sotwVersions());
        assertThat(first[1].sotwVersions())
                .as("types a proxyless client is served")
                .hasSize(4);
        return first[1];
    }

    @Test
    void threeReplicasOnOneZookeeper_serveIdenticalBytesAndVersions_beforeAndAfterChanges() throws Exception {
        ZkServer zk = new ZkServer();
        closeables.add(zk);
        ZookeeperApps apps = new ZookeeperApps(zk);
        closeables.add(apps);
        ZookeeperApps.DubboProvider g1 = apps.registerDubboInterface("org.demo.Greeter", "greeter", 20001, Map.of());
        apps.registerDubboInterface("org.demo.Greeter", "greeter", 20002, Map.of("weight", "50"));
        ZookeeperApps.DubboInstance shop = apps.registerDubbo("shop", 20011);
        apps.registerDubbo("shop", 20012);
        apps.registerSpring("orders", 20021);
        ZookeeperApps.SpringInstance o2 = apps.registerSpring("orders", 20022);

        startReplicas(3, replicaConfig("""
                - type: zookeeper
                  name: zk
                  addresses: ["%s"]
                """.formatted(zk.address())));
        ServedResources before = awaitAgreement(6);
        assertThat(before.resources()).isNotEmpty();

        // registrations change: a weight, an instance out of service, one added, one gone
        apps.updateDubboInterface(g1, Map.of("weight", "200"));
        apps.outOfService(o2);
        apps.registerSpring("orders", 20023);
        apps.unregister(shop);
        ServedResources after = awaitAgreement(6);
        assertThat(after).isNotEqualTo(before);
        assertThat(after.sotwVersions()).isNotEqualTo(before.sotwVersions());
    }

    @Test
    void twoReplicasOnOneEurekaServer_serveIdenticalBytesAndVersions_beforeAndAfterChanges() throws Exception {
        EmbeddedEurekaServer eureka = EmbeddedEurekaServer.start();
        closeables.add(eureka);
        EurekaRegistrar registrar = new EurekaRegistrar(eureka.serviceUrl());
        closeables.add(registrar);
        InstanceInfo h1 =
                EurekaRegistrar.springCloudInstance("hello", "127.0.0.1", 21001).build();
        InstanceInfo h2 =
                EurekaRegistrar.springCloudInstance("hello", "127.0.0.2", 21001).build();
        InstanceInfo w1 =
                EurekaRegistrar.springCloudInstance("world", "127.0.0.3", 21002).build();
        registrar.register(h1);
        registrar.register(h2);
        registrar.register(w1);

        startReplicas(2, replicaConfig("""
                - type: eureka
                  name: eureka
                  addresses: ["%s"]
                  fetchInterval: 200ms
                """.formatted(eureka.serviceUrl())));
        ServedResources before = awaitAgreement(3);

        registrar.overrideStatus(h2, InstanceInfo.InstanceStatus.OUT_OF_SERVICE);
        registrar.register(
                EurekaRegistrar.springCloudInstance("world", "127.0.0.4", 21002).build());
        ServedResources after = awaitAgreement(4);
        assertThat(after.sotwVersions()).isNotEqualTo(before.sotwVersions());
    }
}
