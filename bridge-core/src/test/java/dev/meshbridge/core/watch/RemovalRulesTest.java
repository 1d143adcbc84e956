package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.RemovalPolicy;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.ManualTicker;
import dev.meshbridge.core.testing.RecordingSink;
import dev.meshbridge.core.testing.TableLookup;
import dev.meshbridge.core.testing.TestCatalog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The removal rules every watcher gets from the kit (re-registration window, warm-up after a reconnect, deletion
 * guard), asserted on the catalog a real aggregator publishes, with time driven through a {@link ManualTicker}.
 */
class RemovalRulesTest {

    private static final List<ServicePort> PORTS = List.of(new ServicePort("http", 80, Protocol.HTTP));
    private static final Duration WINDOW = Duration.ofMillis(500);
    private static final Duration WARM_UP = Duration.ofSeconds(60);

    private final ManualTicker ticker = new ManualTicker();
    private final RecordingSink sink = new RecordingSink();
    private final TestCatalog catalog = new TestCatalog();
    private RegistryStatus status;
    private WatcherKit kit;
    private final AtomicInteger fullReads = new AtomicInteger();

    private void start(RemovalPolicy removals) {
        start(removals, dev.meshbridge.core.config.RegistryLimits.DEFAULTS);
    }

    private void start(RemovalPolicy removals, dev.meshbridge.core.config.RegistryLimits limits) {
        RegistryConfig config = new RegistryConfig(
                "test",
                "r",
                List.of("h:1"),
                EmptyServicePolicy.DELETE,
                Duration.ofSeconds(1),
                new TreeMap<>(),
                "x",
                dev.meshbridge.core.config.HostNamePolicy.DEFAULT,
                removals,
                limits);
        status = new RegistryStatus("r", "test", ticker.clock());
        catalog.configure("r", EmptyServicePolicy.DELETE);
        kit = new WatcherKit(
                new WatcherContext(
                        config,
                        e -> {
                            sink.accept(e);
                            catalog.aggregator().accept(e);
                        },
                        status,
                        new WatcherRuntime(ticker, new TableLookup())),
                "test-loop",
                WARM_UP);
        kit.publisher().onFullRead(fullReads::incrementAndGet);
        kit.start();
    }

    @AfterEach
    void close() {
        if (kit != null) kit.close();
        catalog.close();
    }

    /** Runs on the owner thread, then lets every task it queued run too. */
    private void onLoop(Consumer<ShardPublisher> r) {
        run(() -> r.accept(kit.publisher()));
        run(() -> {});
    }

    private void run(Runnable r) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        kit.loop().execute(() -> {
            r.run();
            done.complete(null);
        });
        done.join();
    }

    private void advance(Duration d) {
        ticker.advance(d);
        run(() -> {});
        run(() -> {});
    }

    private static ServiceKey key(String name) {
        return new ServiceKey("test", "r", "", "", name, "");
    }

    private static Endpoint ep(String address) {
        return Endpoint.builder(address).port("http", 8080).build();
    }

    private static ServiceUpsert service(String name, String... addresses) {
        List<Endpoint> eps = new ArrayList<>();
        for (String a : addresses) eps.add(ep(a));
        return new ServiceUpsert(key(name), name + ".test", PORTS, eps);
    }

    private static String[] addresses(String prefix, int n) {
        String[] out = new String[n];
        for (int i = 0; i < n; i++) out[i] = prefix + (i + 1);
        return out;
    }

    private List<String> served(String name) {
        MeshService s = catalog.service(name + ".test");
        return s == null ? null : s.endpoints().stream().map(Endpoint::address).toList();
    }

    // ------------------------------------------------------------------ re-registration

    @Test
    void anInstanceRegisteredAgainWithinTheWindow_neverLeaves_oneThatStaysAwayLeavesAfterIt() {
        start(RemovalPolicy.DEFAULT.withGuard(RemovalPolicy.Guard.OFF));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1", "10.0.0.2")));
        int sent = sink.events().size();

        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        advance(Duration.ofMillis(300));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1", "10.0.0.2")));
        advance(Duration.ofSeconds(5));
        assertThat(sink.events()).hasSize(sent);
        assertThat(served("orders")).containsExactly("10.0.0.1", "10.0.0.2");

        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        advance(Duration.ofMillis(499));
        assertThat(served("orders")).containsExactly("10.0.0.1", "10.0.0.2");
        advance(Duration.ofMillis(2));
        assertThat(served("orders")).containsExactly("10.0.0.1");
    }

    /**
     * A registry at exactly its {@code maxInstances}: an instance moving to a new port is in the registry once, so the
     * move is served (the old port held for the window, then gone); a genuinely new instance is still refused.
     */
    @Test
    void atItsInstanceLimit_anInstanceMovingToANewPort_isServed_aNewInstanceIsNot() {
        start(
                RemovalPolicy.DEFAULT.withGuard(RemovalPolicy.Guard.OFF),
                new dev.meshbridge.core.config.RegistryLimits(10, 2, 10));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1", "10.0.0.2")));
        assertThat(servedWithPorts("orders")).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");

        Endpoint moved = Endpoint.builder("10.0.0.2").port("http", 8081).build();
        onLoop(p -> p.upsert(new ServiceUpsert(key("orders"), "orders.test", PORTS, List.of(ep("10.0.0.1"), moved))));
        assertThat(servedWithPorts("orders")).containsExactly("10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.2:8081");
        advance(Duration.ofMillis(501));
        assertThat(servedWithPorts("orders")).containsExactly("10.0.0.1:8080", "10.0.0.2:8081");
        assertThat(status.skippedCount()).isZero();

        onLoop(p -> p.upsert(new ServiceUpsert(
                key("orders"), "orders.test", PORTS, List.of(ep("10.0.0.1"), moved, ep("10.0.0.3")))));
        assertThat(servedWithPorts("orders")).containsExactly("10.0.0.1:8080", "10.0.0.2:8081");
        assertThat(status.skippedCount()).isEqualTo(1);
    }

    private List<String> servedWithPorts(String name) {
        MeshService s = catalog.service(name + ".test");
        return s == null
                ? null
                : s.endpoints().stream()
                        .map(e -> e.address() + ":" + e.ports().get("http"))
                        .toList();
    }

    @Test
    void theLastInstanceLeaving_keepsTheServiceWithNoEndpoints_untilTheRegistryForgetsIt() {
        start(RemovalPolicy.DEFAULT.withGuard(RemovalPolicy.Guard.OFF));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        onLoop(p -> p.upsert(service("orders")));
        advance(WINDOW.plusMillis(1));
        assertThat(served("orders")).isEmpty();
        assertThat(sink.events(ServiceRemoval.class)).isEmpty();

        onLoop(p -> p.remove(key("orders")));
        advance(WINDOW.plusMillis(1));
        assertThat(served("orders")).isNull();
    }

    @Test
    void aServiceNeverSeenWithInstances_isNotSentEmpty() {
        start(RemovalPolicy.DEFAULT);
        onLoop(p -> p.upsert(service("empty")));
        assertThat(sink.events()).isEmpty();
    }

    // ------------------------------------------------------------------ warm-up

    @Test
    void warmUp_additionsApplyAtOnce_removalsWaitForTheFullRead_thenOnlyRealOnesLeave() {
        start(RemovalPolicy.DEFAULT.withGuard(RemovalPolicy.Guard.OFF));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1", "10.0.0.2", "10.0.0.3")));
        onLoop(p -> p.upsert(service("cart", "10.0.1.1")));
        onLoop(p -> p.upsert(service("gone", "10.0.2.1")));

        run(() -> kit.reconnected("reconnected"));
        assertThat(status.warmingUntil()).isNotNull();
        // the restarted server's partial lists
        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        onLoop(p -> p.remove(key("cart")));
        onLoop(p -> p.remove(key("gone")));
        onLoop(p -> p.upsert(service("new", "10.0.3.1")));
        onLoop(ShardPublisher::synced);
        advance(Duration.ofSeconds(30));
        assertThat(served("orders")).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3");
        assertThat(served("cart")).containsExactly("10.0.1.1");
        assertThat(served("new")).containsExactly("10.0.3.1");

        // clients re-register over the period
        onLoop(p -> p.upsert(service("orders", "10.0.0.1", "10.0.0.2")));
        onLoop(p -> p.upsert(service("cart", "10.0.1.1")));
        assertThat(fullReads).hasValue(0);
        advance(Duration.ofSeconds(31));
        assertThat(fullReads).hasValue(1);
        assertThat(served("orders")).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.3");

        onLoop(ShardPublisher::synced); // the full read is done
        assertThat(status.warmingUntil()).isNull();
        assertThat(served("orders")).containsExactly("10.0.0.1", "10.0.0.2");
        assertThat(served("cart")).containsExactly("10.0.1.1");
        assertThat(served("gone")).isNull();
        assertThat(sink.events(RegistrySynced.class).getLast().services())
                .containsExactlyInAnyOrder(key("orders"), key("cart"), key("new"));
        // the instance that came back never left: no upsert of cart was sent after the first
        assertThat(sink.events(ServiceUpsert.class).stream().filter(u -> u.key().equals(key("cart"))))
                .hasSize(1);
    }

    @Test
    void warmUp_zero_changesNothing() {
        start(RemovalPolicy.DEFAULT.withWarmUp(Duration.ZERO).withGuard(RemovalPolicy.Guard.OFF));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1", "10.0.0.2")));
        run(() -> kit.reconnected("reconnected"));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        advance(WINDOW.plusMillis(1));
        assertThat(served("orders")).containsExactly("10.0.0.1");
        assertThat(fullReads).hasValue(0);
    }

    // ------------------------------------------------------------------ deletion guard

    @Test
    void guard_moreThanHalfOfTheRegistryLeavingAtOnce_isHeld_shownWithServicesAndAmounts_andReleasedByHand() {
        start(RemovalPolicy.DEFAULT.withWarmUp(Duration.ZERO));
        onLoop(p -> p.upsert(service("orders", addresses("10.0.0.", 6))));
        onLoop(p -> p.upsert(service("cart", addresses("10.0.1.", 4))));
        onLoop(p -> p.upsert(service("users", addresses("10.0.2.", 2))));

        onLoop(p -> p.remove(key("orders")));
        onLoop(p -> p.upsert(service("cart", "10.0.1.1")));
        advance(WINDOW.plusMillis(1));

        assertThat(served("orders")).hasSize(6);
        assertThat(served("cart")).hasSize(4);
        RegistryStatus.Guard g = status.guard();
        assertThat(g).isNotNull();
        assertThat(g.scope()).isEqualTo("registry");
        assertThat(g.heldEndpoints()).isEqualTo(9);
        assertThat(g.servedEndpoints()).isEqualTo(12);
        assertThat(g.services())
                .extracting(RegistryStatus.HeldService::host, RegistryStatus.HeldService::vanishing)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("orders.test", 6),
                        org.assertj.core.groups.Tuple.tuple("cart.test", 3));
        assertThat(g.services().getFirst().gone()).isTrue();
        assertThat(g.release()).contains("POST /admin/registries/r/release");
        assertThat(status.guardTrips()).isEqualTo(1);

        // another removal while held is held too
        onLoop(p -> p.upsert(service("users", "10.0.2.1")));
        advance(WINDOW.plusMillis(1));
        assertThat(served("users")).hasSize(2);

        assertThat(status.release()).isTrue();
        run(() -> {});
        run(() -> {});
        assertThat(served("orders")).isNull();
        assertThat(served("cart")).containsExactly("10.0.1.1");
        assertThat(served("users")).containsExactly("10.0.2.1");
        assertThat(status.guard()).isNull();
        assertThat(status.release()).isFalse();
    }

    @Test
    void guard_releasesByItself_onceTheRegistryWasStableForItsPeriod() {
        start(RemovalPolicy.DEFAULT.withWarmUp(Duration.ZERO));
        onLoop(p -> p.upsert(service("orders", addresses("10.0.0.", 12))));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        advance(WINDOW.plusMillis(1));
        assertThat(status.guard()).isNotNull();

        advance(Duration.ofSeconds(90));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1", "10.0.0.2"))); // a change: stable again from here
        advance(Duration.ofSeconds(119));
        assertThat(served("orders")).hasSize(12);
        advance(Duration.ofSeconds(2));
        assertThat(served("orders")).containsExactly("10.0.0.1", "10.0.0.2");
        assertThat(status.guard()).isNull();
    }

    @Test
    void guard_endpointsThatComeBack_leaveTheHeldSet_andWhenAllAreBackTheGuardClears() {
        start(RemovalPolicy.DEFAULT.withWarmUp(Duration.ZERO));
        String[] all = addresses("10.0.0.", 12);
        onLoop(p -> p.upsert(service("orders", all)));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        advance(WINDOW.plusMillis(1));
        assertThat(status.guard().heldEndpoints()).isEqualTo(11);

        onLoop(p -> p.upsert(service("orders", addresses("10.0.0.", 6))));
        assertThat(status.guard().heldEndpoints()).isEqualTo(6);
        onLoop(p -> p.upsert(service("orders", all)));
        assertThat(status.guard()).isNull();
        assertThat(served("orders")).hasSize(12);
        assertThat(sink.events(ServiceUpsert.class))
                .allSatisfy(u -> assertThat(u.endpoints()).hasSize(12));
    }

    @Test
    void guard_oneServiceLosingMostOfItsEndpoints_isHeldAlone_othersRemovalsApply() {
        start(RemovalPolicy.DEFAULT.withWarmUp(Duration.ZERO));
        onLoop(p -> p.upsert(service("orders", addresses("10.0.0.", 6))));
        onLoop(p -> p.upsert(service("cart", addresses("10.0.1.", 20))));
        onLoop(p -> p.upsert(service("orders", "10.0.0.1")));
        onLoop(p -> p.upsert(service("cart", addresses("10.0.1.", 19))));
        advance(WINDOW.plusMillis(1));

        assertThat(served("orders")).hasSize(6);
        assertThat(served("cart")).hasSize(19);
        assertThat(status.guard().scope()).isEqualTo("service");
        assertThat(status.guard().services())
                .singleElement()
                .satisfies(h -> assertThat(h.host()).isEqualTo("orders.test"));
    }

    @Test
    void guard_ordinaryChurn_isNotHeld() {
        start(RemovalPolicy.DEFAULT.withWarmUp(Duration.ZERO));
        onLoop(p -> p.upsert(service("orders", addresses("10.0.0.", 10))));
        onLoop(p -> p.upsert(service("cart", addresses("10.0.1.", 10))));
        // a rolling deployment: new instances first, then the old ones go two at a time
        onLoop(p -> p.upsert(service("orders", addresses("10.0.9.", 10))));
        for (int i = 0; i < 10; i += 2) {
            List<String> left = new ArrayList<>(List.of(addresses("10.0.9.", 10)));
            for (int j = i + 2; j < 10; j++) left.add("10.0.0." + (j + 1));
            onLoop(p -> p.upsert(service("orders", left.toArray(String[]::new))));
            advance(Duration.ofSeconds(20));
        }
        assertThat(served("orders")).hasSize(10).allMatch(a -> a.startsWith("10.0.9."));
        assertThat(status.guard()).isNull();
        assertThat(status.guardTrips()).isZero();
    }

    @Test
    void guard_afterAWarmUp_decidesOnWhatDidNotComeBack() {
        start(RemovalPolicy.DEFAULT);
        onLoop(p -> p.upsert(service("orders", addresses("10.0.0.", 8))));
        onLoop(p -> p.upsert(service("cart", addresses("10.0.1.", 8))));
        run(() -> kit.reconnected("session expired"));
        // an empty server: everything is gone, nobody comes back
        onLoop(p -> p.remove(key("orders")));
        onLoop(p -> p.remove(key("cart")));
        advance(WARM_UP.plusSeconds(1));
        onLoop(ShardPublisher::synced);

        assertThat(served("orders")).hasSize(8);
        assertThat(served("cart")).hasSize(8);
        assertThat(status.guard().heldEndpoints()).isEqualTo(16);
        assertThat(sink.events(RegistrySynced.class).getLast().services())
                .containsExactlyInAnyOrder(key("orders"), key("cart"));
    }
}
