package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.naming.NamingService;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
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
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The end of a warm-up after a Nacos restart, with a service-list round in flight at its deadline: that round started
 * before the full read was asked for and saw only nacos-client's cache, which the restarted server's late pushes still
 * leave partial; it must not end the warm-up. Only the next round, which reads every subscribed service from the server,
 * may, and nothing the server has leaves the catalog.
 */
class NacosWarmUpEndTest {

    private static final String A = "10.30.0.1";
    private static final String B = "10.30.0.2";
    private static final String C = "10.30.0.3";

    @ParameterizedTest
    @EnumSource(NacosTestServer.Version.class)
    void roundInFlightAtTheWarmUpDeadline_doesNotEndIt_theFullReadDoesAndKeepsWhatTheServerHas(
            NacosTestServer.Version version) throws Exception {
        List<AutoCloseable> closing = new ArrayList<>();
        try (NacosTestServer server = NacosTestServer.builder()
                        .version(version)
                        .pushDelay(Duration.ofMillis(20))
                        .start();
                TestCatalog catalog = new TestCatalog();
                JumpTicker ticker = new JumpTicker()) {
            String address = server.address();
            register(closing, address, springCloudInstance(A, 8080));
            register(closing, address, springCloudInstance(B, 8080));

            // the warm-up is longer than any run (the JumpTicker also runs on the wall clock): it ends at the jump
            RegistryConfig config =
                    NacosTestSupport.config("nacos-warm-up-end", address, "nacosRefreshInterval: 300ms", "warmUp: 10m");
            RecordingSink events = new RecordingSink();
            // what the server had answered to queries of "orders" (reads past nacos-client's cache) at each sync
            List<Long> queriesAtSync = new CopyOnWriteArrayList<>();
            WatcherContext context = NacosTestSupport.context(config, catalog, ticker, e -> {
                if (e instanceof RegistrySynced) queriesAtSync.add(server.serviceQueries("orders"));
                events.accept(e);
            });
            RegistryStatus status = context.status();
            NacosWatcher watcher = new NacosWatcher(config, context);
            closing.add(watcher);
            watcher.start();
            String orders = "orders.default-group.public.nacos";
            catalog.awaitService(orders, s -> s.endpoints().size() == 2);
            int mark = events.events().size();

            // the server restarts; the applications are let back only once the watcher is connected again, and B's
            // application not yet
            server.holdRegistrations(true);
            server.holdRegistrationsOf(B);
            server.restart(Duration.ofSeconds(1), Duration.ofMillis(50));
            await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
            await().atMost(TestCatalog.TIMEOUT.multipliedBy(2))
                    .until(() -> status.state() == RegistryStatus.State.UP && status.warmingUntil() != null);
            server.holdRegistrations(false);
            await().atMost(TestCatalog.TIMEOUT)
                    .until(() -> addresses(server.instances("public", "DEFAULT_GROUP", "orders"))
                            .equals(List.of(A)));
            // a new instance C: an addition applies at once, so once the catalog shows it the watcher has applied a
            // list from the server without B (B is held, the warm-up keeps it in the catalog)
            register(closing, address, springCloudInstance(C, 8080));
            catalog.awaitService(orders, s -> addresses(s.endpoints()).containsAll(List.of(A, B, C)));

            // B's application comes back, but the server pushes it late: nacos-client's cache still lacks B
            server.withholdPushes("orders", true);
            server.holdRegistrationsOf();
            await().atMost(TestCatalog.TIMEOUT)
                    .until(() -> server.instances("public", "DEFAULT_GROUP", "orders")
                                    .size()
                            == 3);

            // a listing round (built on the cache) is in flight when the warm-up ends, and answered after its end
            NacosTestServer.Gate listing = server.blockNextServiceList();
            await().atMost(TestCatalog.TIMEOUT).until(listing::arrived);
            int syncs = events.events(RegistrySynced.class).size();
            long queriesBefore = server.serviceQueries("orders");
            assertThat(status.warmingUntil())
                    .as("warming up before the deadline")
                    .isNotNull();
            ticker.jump(config.removals().warmUpOr(NacosWatcher.DEFAULT_WARM_UP).plusSeconds(1));
            // runs on the ticker's thread after the warm-up's end (due earlier) was handed to the watcher's loop
            ticker.schedule(Duration.ZERO, listing::release);

            await().atMost(TestCatalog.TIMEOUT)
                    .until(() -> events.events(RegistrySynced.class).size() > syncs && status.warmingUntil() == null);
            ticker.jump(Duration.ofSeconds(1));
            List<String> flaps = Flaps.since(events.events(), mark);
            assertThat(flaps)
                    .as("what left the catalog though the server has it (B, pushed late)")
                    .isEmpty();
            assertThat(queriesAtSync.get(syncs))
                    .as("the first sync after the deadline comes from the round that read the server")
                    .isGreaterThan(queriesBefore);
            assertThat(addresses(catalog.snapshot().service(orders).endpoints()))
                    .containsExactlyInAnyOrder(A, B, C);
            server.withholdPushes("orders", false);
        } finally {
            for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
        }
    }

    private static List<String> addresses(List<?> endpointsOrInstances) {
        return endpointsOrInstances.stream()
                .map(e -> e instanceof Endpoint ep
                        ? ep.address()
                        : ((com.alibaba.nacos.api.naming.pojo.Instance) e).getIp())
                .sorted()
                .toList();
    }

    private static void register(
            List<AutoCloseable> closing, String address, com.alibaba.nacos.api.naming.pojo.Instance instance)
            throws Exception {
        NamingService app = NacosTestSupport.registrant(address, "public", null, null, Duration.ofMillis(300));
        closing.add(() -> NacosTestSupport.shutDown(app));
        app.registerInstance("orders", instance);
    }
}
