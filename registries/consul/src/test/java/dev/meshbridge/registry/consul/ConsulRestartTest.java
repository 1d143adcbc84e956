package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.Flaps;
import dev.meshbridge.core.testing.JumpTicker;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.model.agent.ImmutableRegistration;
import org.kiwiproject.consul.model.agent.Registration;

/**
 * A Consul whose servers come back without their catalog (and with an index that went back) under the watcher, the
 * agent registering its services again one by one over seconds, as its anti-entropy does. Applications register with
 * the real kiwiproject client, as Spring Cloud Consul's heartbeat mode does (TTL checks); the watcher's time is a
 * {@link JumpTicker}.
 */
class ConsulRestartTest {

    private static final List<String> HOSTS = List.of("web.dc1.consul", "single.dc1.consul", "pay.dc1.consul");

    private static List<String> restart(String... fields) throws Exception {
        try (TestServerEnvironment env = new TestServerEnvironment();
                TestCatalog catalog = new TestCatalog();
                JumpTicker ticker = new JumpTicker()) {
            register(env, "web", "web-1", "10.30.0.1");
            register(env, "web", "web-2", "10.30.0.2");
            register(env, "web", "web-3", "10.30.0.3");
            register(env, "single", "single-1", "10.30.1.1");
            register(env, "pay", "pay-1", "10.30.2.1");
            register(env, "pay", "pay-2", "10.30.2.2");

            StringBuilder yaml = new StringBuilder("registries:\n  - type: consul\n    name: c-restart\n")
                    .append("    addresses: [")
                    .append(env.address())
                    .append("]\n    consulToken: ")
                    .append(env.managementToken())
                    .append('\n');
            for (String f : fields) yaml.append("    ").append(f).append('\n');
            ConfigNode root = ConfigNode.parse("bridge.yaml", yaml.toString());
            ConsulRegistryProvider provider = new ConsulRegistryProvider();
            RegistryConfig config = RegistriesConfig.parse(root, Map.of(provider.type(), provider))
                    .get(0);
            root.finish();
            RecordingSink events = new RecordingSink();
            WatcherContext base = catalog.context(config);
            RegistryStatus status = base.status();
            RegistryWatcher watcher = provider.create(
                    config,
                    new WatcherContext(
                            config,
                            e -> {
                                events.accept(e);
                                base.events().accept(e);
                            },
                            status,
                            new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM)));
            try (watcher) {
                watcher.start();
                catalog.awaitService("web.dc1.consul", s -> s.endpoints().size() == 3);
                catalog.awaitService("single.dc1.consul", s -> s.endpoints().size() == 1);
                catalog.awaitService("pay.dc1.consul", s -> s.endpoints().size() == 2);
                await().atMost(TestCatalog.TIMEOUT).until(status::hasSynced);
                MeshSnapshot before = catalog.snapshot();
                int mark = events.events().size();

                // the agent registers one of web's three instances again, and the rest only once the watcher has been
                // back long enough to read that partial catalog, whatever its reconnect timing on a loaded machine
                CompletableFuture<Void> refill = new CompletableFuture<>();
                env.server().restartLosingCatalog(Duration.ofSeconds(1), Duration.ofMillis(400), 1, refill);
                await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
                await().atMost(TestCatalog.TIMEOUT)
                        .ignoreExceptions()
                        .until(() -> status.state() == RegistryStatus.State.UP
                                && env.client()
                                                .healthClient()
                                                .getAllServiceInstances("web")
                                                .getResponse()
                                                .size()
                                        == 1);
                Flaps.awaitWhilePartial(fields.length == 0, events::events, mark);
                refill.complete(null);
                // the agent has registered everything again, and the watcher reads it
                await().atMost(TestCatalog.TIMEOUT)
                        .ignoreExceptions()
                        .until(() -> env.client()
                                                .healthClient()
                                                .getAllServiceInstances("web")
                                                .getResponse()
                                                .size()
                                        == 3
                                && env.client()
                                                .healthClient()
                                                .getAllServiceInstances("pay")
                                                .getResponse()
                                                .size()
                                        == 2
                                && status.state() == RegistryStatus.State.UP);
                catalog.awaitService("web.dc1.consul", s -> s.endpoints().size() == 3);
                catalog.awaitService("pay.dc1.consul", s -> s.endpoints().size() == 2);

                int syncs = events.events(RegistrySynced.class).size();
                ticker.jump(ConsulWatcher.DEFAULT_WARM_UP.plusSeconds(1));
                if (!config.removals().warmUpOr(Duration.ofSeconds(1)).isZero()) {
                    await().atMost(TestCatalog.TIMEOUT)
                            .until(() -> events.events(RegistrySynced.class).size() > syncs);
                }
                ticker.jump(Duration.ofSeconds(1));
                catalog.awaitService("single.dc1.consul", s -> true);
                List<String> flaps = Flaps.since(events.events(), mark);
                if (flaps.isEmpty()) {
                    MeshSnapshot after = catalog.snapshot();
                    for (String host : HOSTS) {
                        assertThat(after.service(host).endpoints())
                                .extracting(Endpoint::address)
                                .containsExactlyElementsOf(before.service(host).endpoints().stream()
                                        .map(Endpoint::address)
                                        .toList());
                    }
                }
                System.out.printf(
                        "Consul restart losing its catalog, agent refilling it over seconds, options %s: %d"
                                + " transient removals %s%n",
                        List.of(fields), flaps.size(), flaps);
                return flaps;
            }
        }
    }

    /** As Spring Cloud Consul registers in heartbeat mode: a TTL check, passed at once. */
    private static void register(TestServerEnvironment env, String service, String id, String address)
            throws Exception {
        env.client()
                .agentClient()
                .register(ImmutableRegistration.builder()
                        .id(id)
                        .name(service)
                        .address(address)
                        .port(8080)
                        .check(Registration.RegCheck.ttl(60))
                        .build());
        env.client().agentClient().pass(id);
    }

    @Test
    void restartLosingTheCatalog_agentRefillingItOverSeconds_nothingLeavesTheCatalog() throws Exception {
        assertThat(restart()).isEmpty();
    }

    /** The same restart without the warm-up and the re-registration window: what the catalog went through before. */
    @Test
    void withoutWarmUpOrWindow_theSameRestartFlaps() throws Exception {
        assertThat(restart("warmUp: 0s", "reregistrationWindow: 0s", "deletionGuard: {enabled: false}"))
                .isNotEmpty();
    }
}
