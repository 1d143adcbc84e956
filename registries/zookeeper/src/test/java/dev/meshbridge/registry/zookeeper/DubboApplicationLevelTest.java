package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.registry.zookeeper.demo.Greeter;
import dev.meshbridge.registry.zookeeper.demo.Ledger;
import java.util.List;
import java.util.Map;
import org.apache.dubbo.common.utils.NetUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Dubbo 3 application-level discovery: real Dubbo providers (dubbo and tri protocols) register
 * {@code /services/<app>/<ip:port>} and {@code /dubbo/mapping/<interface>} in a real ZooKeeper; the watcher turns them
 * into application hosts and, through the mapping, interface hosts.
 */
class DubboApplicationLevelTest {

    private static final String GREETER = Greeter.class.getName();
    private static final String LEDGER = Ledger.class.getName();

    private static ZkServer zk;
    private static DubboProvider greeterApp;
    private static DubboProvider ledgerApp;
    private static String ip;

    @BeforeAll
    static void start() throws Exception {
        zk = new ZkServer();
        ip = System.getProperty("DUBBO_IP_TO_REGISTRY", NetUtils.getLocalHost());
        greeterApp = new DubboProvider(
                        zk.address(),
                        "greeter-app",
                        "instance",
                        List.of(new DubboProvider.Export<>(Greeter.class, name -> "hello " + name, "1.0.0")))
                .start();
        ledgerApp = new DubboProvider(
                        zk.address(),
                        "ledger-app",
                        "all",
                        List.of(new DubboProvider.Export<>(Ledger.class, account -> 42L, "2.0.0")))
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (ledgerApp != null) ledgerApp.close();
        if (greeterApp != null) greeterApp.close();
        zk.close();
    }

    @Test
    void applicationInstance_becomesTheApplicationHost_withAPortPerProtocol() throws Exception {
        try (WatcherHarness h = WatcherHarness.start(zk.address())) {
            MeshService app = h.awaitService("greeter-app.dubbo", s -> true);
            assertThat(app.ports())
                    .containsExactly(
                            new ServicePort("dubbo", 20880, Protocol.DUBBO),
                            new ServicePort("tri", 50051, Protocol.TRIPLE));
            assertThat(app.endpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo(ip);
                assertThat(e.ports()).isEqualTo(Map.of("dubbo", greeterApp.dubboPort, "tri", greeterApp.triPort));
                assertThat(e.routable()).isTrue();
                assertThat(e.labels()).containsKey("dubbo.metadata.revision");
            });
            assertThat(app.labels()).containsEntry("dubbo.application", "greeter-app");
            assertThat(app.sources())
                    .singleElement()
                    .satisfies(k -> assertThat(k.namespace()).isEqualTo("dubbo-app:/services"));
            assertThat(h.status.skippedCount()).isZero();
            assertThat(h.status.droppedLabelCount()).isZero();
        }
    }

    @Test
    void mapping_givesAnApplicationOnlyInterfaceItsHost_withTheApplicationsInstances() throws Exception {
        try (WatcherHarness h = WatcherHarness.start(zk.address())) {
            String host = GREETER.toLowerCase() + ".dubbo";
            MeshService greeter = h.awaitService(host, s -> true);
            assertThat(greeter.endpoints()).singleElement().satisfies(e -> {
                assertThat(e.address()).isEqualTo(ip);
                assertThat(e.ports()).isEqualTo(Map.of("dubbo", greeterApp.dubboPort, "tri", greeterApp.triPort));
            });
            assertThat(greeter.labels())
                    .containsEntry("dubbo.application", "greeter-app")
                    .doesNotContainKey("dubbo.version");
            assertThat(greeter.sources())
                    .singleElement()
                    .satisfies(k -> assertThat(k.namespace()).isEqualTo("dubbo-mapping:/dubbo"));
            // the version is not in the mapping: no versioned host for an application-only interface
            assertThat(h.snapshot().services().keySet()).doesNotContain(GREETER.toLowerCase() + ".v-1-0-0.dubbo");
        }
    }

    @Test
    void registerModeAll_givesInterfaceLevelHosts_andTheMappingAddsNothingForThem() throws Exception {
        try (WatcherHarness h = WatcherHarness.start(zk.address())) {
            MeshService ledger = h.awaitService(
                    LEDGER.toLowerCase() + ".v-2-0-0.dubbo", s -> s.ports().size() == 2);
            assertThat(ledger.endpoints())
                    .extracting(e -> Map.copyOf(e.ports()))
                    .containsExactlyInAnyOrder(Map.of("dubbo", ledgerApp.dubboPort), Map.of("tri", ledgerApp.triPort));
            assertThat(ledger.endpoints()).allSatisfy(e -> {
                assertThat(e.address()).isEqualTo(ip);
                assertThat(e.labels())
                        .containsEntry("application", "ledger-app")
                        .containsEntry("version", "2.0.0");
            });
            h.awaitService("ledger-app.dubbo", s -> true);
            assertThat(h.snapshot().services().keySet()).doesNotContain(LEDGER.toLowerCase() + ".dubbo");
        }
    }

    @Test
    void providerStops_itsEndpointsLeaveTheCatalog_itsHostStaysEmpty() throws Exception {
        String mapping = "/dubbo/mapping/" + GREETER;
        try (WatcherHarness h = WatcherHarness.start(zk.address());
                org.apache.curator.framework.CuratorFramework raw = zk.client()) {
            byte[] mapped = raw.getData().forPath(mapping);
            h.awaitService("greeter-app.dubbo", s -> true);
            h.awaitService(GREETER.toLowerCase() + ".dubbo", s -> true);
            try (DubboProvider extra = new DubboProvider(
                            zk.address(),
                            "extra-app",
                            "instance",
                            List.of(new DubboProvider.Export<>(Greeter.class, name -> "hi " + name, "")))
                    .start()) {
                h.awaitService("extra-app.dubbo", s -> s.endpoints().size() == 1);
                // the mapping now lists both applications: the interface host has both instances
                h.awaitService(
                        GREETER.toLowerCase() + ".dubbo", s -> s.endpoints().size() == 2);
            }
            // the application's node is still there: its host stays, with no endpoints
            h.awaitService("extra-app.dubbo", s -> s.endpoints().isEmpty());
            h.awaitService(GREETER.toLowerCase() + ".dubbo", s -> s.endpoints().size() == 1);
            // Dubbo never takes an application out of a mapping; the other tests expect greeter-app alone
            raw.setData().forPath(mapping, mapped);
        }
    }
}
