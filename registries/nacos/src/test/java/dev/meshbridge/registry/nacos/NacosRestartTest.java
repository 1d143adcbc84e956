package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboInterfaceInstance;
import static dev.meshbridge.registry.nacos.NacosTestSupport.dubboServiceName;
import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.naming.NamingService;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.Flaps;
import dev.meshbridge.core.testing.JumpTicker;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TestCatalog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A Nacos server restarting as a real one does, under the watcher: down for two seconds, then "starting", letting
 * clients back one at a time, each application's nacos-client registering its ephemeral instances again after its
 * own redo period (1 to 3 s), so the watcher's re-subscribed client is pushed partial lists for seconds. The watcher's
 * time is a {@link JumpTicker}: real time, with the warm-up jumped over at the end.
 */
class NacosRestartTest {

    private static final String DUBBO_URL = "dubbo://10.20.2.%d:20880/org.demo.Greeter?anyhost=true"
            + "&application=greeter&interface=org.demo.Greeter&methods=greet&side=provider&version=1.0.0";

    /**
     * Restarts the server under a watcher with {@code fields} (none: the defaults, which must keep everything), holding
     * the applications' re-registrations until the watcher is connected again and has read the emptied server.
     *
     * @return what the watcher sent that took away something served before the restart
     */
    private static List<String> restart(NacosTestServer.Version version, String... fields) throws Exception {
        boolean protectedRestart = !List.of(fields).contains("warmUp: 0s");
        List<AutoCloseable> closing = new ArrayList<>();
        try (NacosTestServer server = NacosTestServer.builder()
                        .version(version)
                        .pushDelay(Duration.ofMillis(20))
                        .start();
                TestCatalog catalog = new TestCatalog();
                JumpTicker ticker = new JumpTicker()) {
            String address = server.address();
            String greeter = dubboServiceName(DUBBO_URL.formatted(1));
            register(closing, address, Duration.ofMillis(1000), "orders", springCloudInstance("10.20.0.1", 8080));
            register(closing, address, Duration.ofMillis(3000), "orders", springCloudInstance("10.20.0.2", 8080));
            register(closing, address, Duration.ofMillis(2000), "single", springCloudInstance("10.20.1.1", 8080));
            register(
                    closing, address, Duration.ofMillis(1500), greeter, dubboInterfaceInstance(DUBBO_URL.formatted(1)));
            register(
                    closing, address, Duration.ofMillis(2500), greeter, dubboInterfaceInstance(DUBBO_URL.formatted(2)));

            List<String> all = new ArrayList<>(List.of("nacosRefreshInterval: 300ms"));
            all.addAll(List.of(fields));
            RegistryConfig config = NacosTestSupport.config("nacos-restart", address, all.toArray(String[]::new));
            RecordingSink events = new RecordingSink();
            WatcherContext context = NacosTestSupport.context(config, catalog, ticker, events);
            RegistryStatus status = context.status();
            NacosWatcher watcher = new NacosWatcher(config, context);
            closing.add(watcher);
            watcher.start();
            String orders = "orders.default-group.public.nacos";
            String single = "single.default-group.public.nacos";
            String dubbo = "org.demo.greeter.v-1-0-0.dubbo";
            catalog.awaitService(orders, s -> s.endpoints().size() == 2);
            catalog.awaitService(single, s -> s.endpoints().size() == 1);
            catalog.awaitService(dubbo, s -> s.endpoints().size() == 2);
            MeshSnapshot before = catalog.snapshot();
            int mark = events.events().size();

            // registrations are held until the watcher has been back long enough to read the emptied server, so the
            // partial state is seen whatever the clients' reconnect timing on a loaded machine
            server.holdRegistrations(true);
            server.restart(Duration.ofSeconds(2), Duration.ofMillis(300));
            await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
            await().atMost(TestCatalog.TIMEOUT.multipliedBy(2)).until(() -> status.state() == RegistryStatus.State.UP);
            Flaps.awaitWhilePartial(protectedRestart, events::events, mark);
            server.holdRegistrations(false);
            // every application is back in the server, and the watcher is connected again
            await().atMost(TestCatalog.TIMEOUT.multipliedBy(2))
                    .until(() -> server.instances("public", "DEFAULT_GROUP", "orders")
                                            .size()
                                    == 2
                            && server.instances("public", "DEFAULT_GROUP", "single")
                                            .size()
                                    == 1
                            && server.instances("public", "DEFAULT_GROUP", greeter)
                                            .size()
                                    == 2
                            && status.state() == RegistryStatus.State.UP);
            catalog.awaitService(orders, s -> s.endpoints().size() == 2);
            catalog.awaitService(dubbo, s -> s.endpoints().size() == 2);

            // the warm-up ends with a full read
            int syncs = events.events(RegistrySynced.class).size();
            ticker.jump(config.removals().warmUpOr(NacosWatcher.DEFAULT_WARM_UP).plusSeconds(1));
            if (!config.removals().warmUpOr(Duration.ofSeconds(1)).isZero()) {
                await().atMost(TestCatalog.TIMEOUT)
                        .until(() -> events.events(RegistrySynced.class).size() > syncs);
            }
            ticker.jump(Duration.ofSeconds(1));
            List<String> flaps = Flaps.since(events.events(), mark);
            if (flaps.isEmpty()) {
                MeshSnapshot after = catalog.awaitSnapshot(s -> s.service(single) != null);
                for (String host : List.of(orders, single, dubbo)) {
                    assertThat(after.service(host).endpoints())
                            .extracting(Endpoint::address)
                            .containsExactlyElementsOf(before.service(host).endpoints().stream()
                                    .map(Endpoint::address)
                                    .toList());
                }
            }
            System.out.printf(
                    "Nacos %s restart, clients re-registering over seconds, options %s: %d transient removals %s%n",
                    version.text, List.of(fields), flaps.size(), flaps);
            return flaps;
        } finally {
            for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
        }
    }

    private static void register(
            List<AutoCloseable> closing,
            String address,
            Duration redo,
            String service,
            com.alibaba.nacos.api.naming.pojo.Instance instance)
            throws Exception {
        NamingService app = NacosTestSupport.registrant(address, "public", null, null, redo);
        closing.add(() -> NacosTestSupport.shutDown(app));
        app.registerInstance(service, instance);
    }

    @ParameterizedTest
    @EnumSource(NacosTestServer.Version.class)
    void restartWithPartialState_clientsReregisteringOverSeconds_nothingLeavesTheCatalog(
            NacosTestServer.Version version) throws Exception {
        // the JumpTicker also runs on the wall clock: the default 30 s warm-up could end on its own before the clients
        // were back on a loaded machine (about 5 s of it are used on an idle one), so the warm-up here is longer than
        // any run and ends at the test's jump
        assertThat(restart(version, "warmUp: 10m")).isEmpty();
    }

    /** The same restart without the warm-up and the re-registration window: what the catalog went through before. */
    @ParameterizedTest
    @EnumSource(NacosTestServer.Version.class)
    void withoutWarmUpOrWindow_theSameRestartFlaps(NacosTestServer.Version version) throws Exception {
        assertThat(restart(version, "warmUp: 0s", "reregistrationWindow: 0s", "deletionGuard: {enabled: false}"))
                .isNotEmpty();
    }
}
