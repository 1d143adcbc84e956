package dev.meshbridge.core.aggregate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ServiceAggregatorTest {

    private static final List<ServicePort> HTTP = List.of(new ServicePort("http", 80, Protocol.HTTP));
    private final List<ServiceAggregator> opened = new ArrayList<>();

    private ServiceAggregator aggregator(Duration quiet, Duration max) {
        ServiceAggregator a = new ServiceAggregator(new ServiceAggregator.Options(quiet, max));
        opened.add(a);
        return a;
    }

    @AfterEach
    void close() {
        opened.forEach(ServiceAggregator::close);
    }

    /** An aggregator whose time is {@code clock} (nanoseconds); its timers still run on real time. */
    private ServiceAggregator aggregator(Duration quiet, Duration max, java.util.concurrent.atomic.AtomicLong clock) {
        ServiceAggregator a = new ServiceAggregator(new ServiceAggregator.Options(quiet, max), clock::get);
        opened.add(a);
        return a;
    }

    /** Waits until the aggregator thread has run everything queued before this call. */
    private static void barrier(ServiceAggregator a) {
        a.unsubscribe(s -> {}).join();
    }

    private static ServiceKey key(String registry, String name) {
        return ServiceKey.of("test", registry, name);
    }

    private static Endpoint ep(String ip) {
        return Endpoint.builder(ip).port("http", 8080).build();
    }

    private static ServiceUpsert upsert(String registry, String name, String host, Endpoint... eps) {
        return new ServiceUpsert(key(registry, name), host, HTTP, List.of(eps));
    }

    @Test
    void upsert_publishesServiceWithSortedEndpointsAndChangedSet() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.2"), ep("10.0.0.1")));
        MeshSnapshot s = a.flushNow().join();
        MeshService web = s.service("web.test");
        assertThat(web.endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.1", "10.0.0.2");
        assertThat(web.ports()).isEqualTo(HTTP);
        assertThat(s.changed()).containsExactly("web.test");
        assertThat(s.sequence()).isEqualTo(1);
        assertThat(a.registryCounts()).containsEntry("r1", new ServiceAggregator.RegistryCounts(1, 2));
    }

    /**
     * A change that comes alone is published with nothing else due, so a server may apply it on the aggregator's
     * thread; a snapshot published while events wait is not (an ingest: the servers apply it on their own threads
     * while the aggregator goes on merging).
     */
    @Test
    void aLoneChange_isPublishedAlone_aSnapshotPublishedWhileEventsWait_isNot() throws Exception {
        ServiceAggregator a = aggregator(Duration.ofMillis(10), Duration.ofMillis(50));
        List<MeshSnapshot> seen = new CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        a.subscribe(s -> {
                    seen.add(s);
                    if (!s.changed().contains("b.test")) return;
                    // holds the aggregator's thread while the test queues events behind it
                    entered.countDown();
                    try {
                        release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                })
                .join();
        a.accept(upsert("r1", "a", "a.test", ep("10.0.0.1")));
        await().until(() -> carrying(seen, "a.test") != null);
        assertThat(carrying(seen, "a.test").publishedAlone())
                .as("the first change, alone")
                .isTrue();

        a.accept(upsert("r1", "b", "b.test", ep("10.0.0.2")));
        assertThat(entered.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        a.accept(upsert("r1", "c", "c.test", ep("10.0.0.3")));
        java.util.concurrent.CompletableFuture<MeshSnapshot> flushed = a.flushNow(); // publishes c while d waits
        a.accept(upsert("r1", "d", "d.test", ep("10.0.0.4")));
        release.countDown();
        MeshSnapshot withC = flushed.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(withC.changed()).contains("c.test").doesNotContain("d.test");
        assertThat(withC.publishedAlone())
                .as("published with d's event waiting")
                .isFalse();

        // once the waiting events are merged, the last of them is published with nothing else due
        await().until(() -> carrying(seen, "d.test") != null);
        assertThat(carrying(seen, "d.test").publishedAlone()).isTrue();
    }

    private static MeshSnapshot carrying(List<MeshSnapshot> seen, String host) {
        for (MeshSnapshot s : seen) if (s.changed().contains(host)) return s;
        return null;
    }

    @Test
    void upsert_sameContentAgain_publishesNothing() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.1"), ep("10.0.0.2")));
        long seq = a.flushNow().join().sequence();
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.2"), ep("10.0.0.1")));
        assertThat(a.flushNow().join().sequence()).isEqualTo(seq);
    }

    @Test
    void upsert_emptyEndpoints_keepsTheHostWithNoEndpoints_aRemovalRemovesIt() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.1")));
        a.accept(upsert("r1", "web", "web.test"));
        MeshSnapshot s = a.flushNow().join();
        assertThat(s.service("web.test").endpoints()).isEmpty();
        assertThat(s.service("web.test").ports()).isEqualTo(HTTP);
        assertThat(s.changed()).containsExactly("web.test");
        assertThat(a.registryCounts()).containsEntry("r1", new ServiceAggregator.RegistryCounts(1, 0));

        a.accept(new ServiceRemoval(key("r1", "web")));
        s = a.flushNow().join();
        assertThat(s.service("web.test")).isNull();
        assertThat(s.removed()).containsExactly("web.test");
        assertThat(a.registryCounts()).containsEntry("r1", new ServiceAggregator.RegistryCounts(0, 0));
    }

    @Test
    void emptyUpsert_underKeepPolicy_keepsLastEndpointsForGrace_thenTheHostStaysWithNone() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.configureRegistry("r1", EmptyServicePolicy.keep(Duration.ofMillis(200)));
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.1")));
        a.accept(upsert("r1", "web", "web.test"));
        assertThat(a.flushNow().join().service("web.test").endpoints()).hasSize(1);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> a.flushNow().join().service("web.test").endpoints().isEmpty());
    }

    @Test
    void removal_underKeepPolicy_keepsLastEndpointsForGraceThenRemoves() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.configureRegistry("r1", EmptyServicePolicy.keep(Duration.ofMillis(300)));
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.1")));
        a.accept(new ServiceRemoval(key("r1", "web")));
        assertThat(a.flushNow().join().service("web.test").endpoints()).hasSize(1);
        await().atMost(Duration.ofSeconds(5)).until(() -> a.flushNow().join().service("web.test") == null);
    }

    @Test
    void removal_underKeepPolicy_instancesComingBackCancelTheExpiry() throws Exception {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.configureRegistry("r1", EmptyServicePolicy.keep(Duration.ofMillis(200)));
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.1")));
        a.accept(upsert("r1", "web", "web.test"));
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.1")));
        // the cancelled expiry would have fired by now; a marker service proves the executor ran past that time
        a.accept(upsert("r1", "marker", "marker.test", ep("10.9.9.9")));
        CopyOnWriteArrayList<MeshSnapshot> seen = new CopyOnWriteArrayList<>();
        a.subscribe(seen::add).join();
        await().pollDelay(Duration.ofMillis(400)).atMost(Duration.ofSeconds(5)).until(() -> true);
        assertThat(a.flushNow().join().service("web.test")).isNotNull();
        assertThat(seen).allSatisfy(s -> assertThat(s.removed()).doesNotContain("web.test"));
    }

    @Test
    void sameHostFromTwoRegistries_isTheUnionOfEndpoints() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("r1", "web", "web.shared", ep("10.0.0.1"), ep("10.0.0.9")));
        a.accept(upsert("r2", "web", "web.shared", ep("10.0.0.2"), ep("10.0.0.9")));
        MeshService web = a.flushNow().join().service("web.shared");
        assertThat(web.endpoints()).extracting(Endpoint::address).containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.9");
        assertThat(web.sources()).containsExactly(key("r1", "web"), key("r2", "web"));
        a.accept(new ServiceRemoval(key("r1", "web")));
        assertThat(a.flushNow().join().service("web.shared").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.2", "10.0.0.9");
    }

    @Test
    void hostsServedByTwoRegistries_areListedWithEveryShard_andCounted_untilOneLeaves() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("zk", "org.demo.Greeter", "greeter.dubbo", ep("10.0.0.1"), ep("10.0.0.2")));
        a.accept(upsert("nacos", "providers:org.demo.Greeter", "greeter.dubbo", ep("10.0.0.3")));
        a.accept(upsert("zk", "alone", "alone.dubbo", ep("10.0.0.4")));
        a.flushNow().join();

        assertThat(a.sharedHostCount()).isEqualTo(1);
        assertThat(a.sharedHosts())
                .containsOnlyKeys("greeter.dubbo")
                .extractingByKey("greeter.dubbo")
                .isEqualTo(List.of(
                        new ServiceAggregator.SourceShard(key("nacos", "providers:org.demo.Greeter"), 1),
                        new ServiceAggregator.SourceShard(key("zk", "org.demo.Greeter"), 2)));

        a.accept(new ServiceRemoval(key("nacos", "providers:org.demo.Greeter")));
        a.flushNow().join();
        assertThat(a.sharedHostCount()).isZero();
    }

    @Test
    void anAddressInTwoRegistries_theServingCopyIsKept() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        Endpoint down = Endpoint.builder("10.0.0.9")
                .port("http", 8080)
                .health(Health.UNHEALTHY)
                .build();
        a.accept(upsert("a-first", "web", "web.shared", down));
        a.accept(upsert("b-second", "web", "web.shared", ep("10.0.0.9")));
        assertThat(a.flushNow().join().service("web.shared").endpoints())
                .singleElement()
                .satisfies(e -> assertThat(e.health()).isEqualTo(Health.HEALTHY));
    }

    @Test
    void registrySynced_removesServicesTheRegistryNoLongerHas() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("r1", "a", "a.test", ep("10.0.0.1")));
        a.accept(upsert("r1", "b", "b.test", ep("10.0.0.2")));
        a.accept(upsert("r2", "c", "c.test", ep("10.0.0.3")));
        a.accept(new RegistrySynced("r1", Set.of(key("r1", "a"))));
        MeshSnapshot s = a.flushNow().join();
        assertThat(s.services().keySet()).containsExactly("a.test", "c.test");
    }

    @Test
    void removeRegistry_dropsItsServicesAtOnce() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.configureRegistry("r1", EmptyServicePolicy.keep(Duration.ofHours(1)));
        a.accept(upsert("r1", "a", "a.test", ep("10.0.0.1")));
        a.accept(upsert("r2", "c", "c.test", ep("10.0.0.3")));
        a.removeRegistry("r1");
        assertThat(a.flushNow().join().services().keySet()).containsExactly("c.test");
        assertThat(a.registryCounts()).doesNotContainKey("r1");
    }

    @Test
    void hostChange_movesTheShard() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("r1", "a", "old.test", ep("10.0.0.1")));
        a.accept(upsert("r1", "a", "new.test", ep("10.0.0.1")));
        MeshSnapshot s = a.flushNow().join();
        assertThat(s.services().keySet()).containsExactly("new.test");
    }

    @Test
    void burst_isCoalescedIntoFewSnapshots_andListenersSeeEveryChange() {
        ServiceAggregator a = aggregator(Duration.ofMillis(50), Duration.ofMillis(500));
        List<MeshSnapshot> seen = Collections.synchronizedList(new ArrayList<>());
        a.subscribe(seen::add).join();
        for (int i = 0; i < 1000; i++) {
            a.accept(upsert("r1", "s" + i, "s" + i + ".test", ep("10.0.0." + (i % 250 + 1))));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> a.current().serviceCount() == 1000);
        // the first call is the empty snapshot at subscription; the burst arrives in far fewer than 1000 snapshots
        assertThat(seen.size() - 1).isBetween(1, 20);
        Set<String> union = new java.util.HashSet<>();
        for (int i = 1; i < seen.size(); i++) {
            assertThat(seen.get(i).sequence()).isEqualTo(seen.get(i - 1).sequence() + 1);
            union.addAll(seen.get(i).changed());
        }
        assertThat(union).hasSize(1000);
    }

    @Test
    void version_dependsOnContentOnly_notOnEventOrderOrInstance() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        ServiceAggregator b = aggregator(Duration.ZERO, Duration.ZERO);
        List<ServiceUpsert> events = new ArrayList<>();
        for (int i = 0; i < 50; i++)
            events.add(upsert("r1", "s" + i, "s" + i + ".test", ep("10.0.1." + (i + 1)), ep("10.0.2." + (i + 1))));
        events.forEach(a::accept);
        List<ServiceUpsert> reversed = new ArrayList<>(events);
        Collections.reverse(reversed);
        reversed.forEach(b::accept);
        MeshSnapshot sa = a.flushNow().join();
        MeshSnapshot sb = b.flushNow().join();
        assertThat(sa.version()).isEqualTo(sb.version());
        assertThat(sa.service("s7.test").version())
                .isEqualTo(sb.service("s7.test").version());
        a.accept(upsert("r1", "s7", "s7.test", ep("10.0.1.8")));
        MeshSnapshot sa2 = a.flushNow().join();
        assertThat(sa2.version()).isNotEqualTo(sb.version());
        assertThat(sa2.changed()).containsExactly("s7.test");
        assertThat(sa2.service("s8.test")).isSameAs(sa.service("s8.test"));
    }

    private static dev.meshbridge.core.route.RouteTable routes(String path, String host) {
        var owner = new dev.meshbridge.core.route.IngressRef(
                "test", "default", "web", java.time.Instant.parse("2024-01-01T00:00:00Z"));
        var route = new dev.meshbridge.core.route.HttpRoute(
                owner,
                new dev.meshbridge.core.route.RouteMatch("", dev.meshbridge.core.route.PathType.PREFIX, path),
                List.of(new dev.meshbridge.core.route.WeightedDestination(
                        dev.meshbridge.core.route.RegistryDestination.of(host), 100)));
        return dev.meshbridge.core.route.RouteTable.merge(List.of(new dev.meshbridge.core.route.IngressRoutes(
                owner, List.of(route), java.util.Optional.empty(), List.of())));
    }

    @Test
    void setRoutes_publishesRoutesChangedWithoutTouchingServices_andSameTableIsNoOp() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.1")));
        MeshSnapshot before = a.flushNow().join();
        a.setRoutes(routes("/web", "web.test"));
        MeshSnapshot withRoutes = a.flushNow().join();
        assertThat(withRoutes.sequence()).isEqualTo(before.sequence() + 1);
        assertThat(withRoutes.routesChanged()).isTrue();
        assertThat(withRoutes.changed()).isEmpty();
        assertThat(withRoutes.routes().routes())
                .singleElement()
                .satisfies(r -> assertThat(r.match().path()).isEqualTo("/web"));
        assertThat(withRoutes.version()).isNotEqualTo(before.version());

        a.setRoutes(routes("/web", "web.test"));
        assertThat(a.flushNow().join().sequence()).isEqualTo(withRoutes.sequence());

        a.accept(upsert("r1", "web", "web.test", ep("10.0.0.2")));
        MeshSnapshot endpointOnly = a.flushNow().join();
        assertThat(endpointOnly.routesChanged()).isFalse();
        assertThat(endpointOnly.routes()).isSameAs(withRoutes.routes());
        assertThat(endpointOnly.changed()).containsExactly("web.test");
    }

    @Test
    void endpointFlags_arePreservedForTranslators() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert(
                "r1",
                "web",
                "web.test",
                Endpoint.builder("10.0.0.1").port("http", 8080).build(),
                Endpoint.builder("10.0.0.2").port("http", 8080).weight(0).build(),
                Endpoint.builder("10.0.0.3").port("http", 8080).enabled(false).build(),
                Endpoint.builder("10.0.0.4")
                        .port("http", 8080)
                        .health(Health.UNHEALTHY)
                        .build()));
        MeshService web = a.flushNow().join().service("web.test");
        assertThat(web.endpoints()).hasSize(4);
        assertThat(web.routableEndpoints()).extracting(Endpoint::address).containsExactly("10.0.0.1", "10.0.0.4");
    }

    @Test
    void twoServicesOfOneRegistryOnOneHost_theSecondIsRefusedAndReported_neverMerged() {
        ServiceAggregator a = aggregator(Duration.ZERO, Duration.ZERO);
        a.accept(upsert("zk", "org.bad.Case", "org.bad.case.dubbo", ep("10.0.0.1")));
        a.flushNow().join();
        a.accept(upsert("zk", "org.bad.CASE", "org.bad.case.dubbo", ep("10.0.0.2")));
        MeshSnapshot s = a.flushNow().join();

        assertThat(s.service("org.bad.case.dubbo").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.1");
        assertThat(s.service("org.bad.case.dubbo").sources()).containsExactly(key("zk", "org.bad.Case"));
        assertThat(a.hostConflicts()).containsExactly(entry("org.bad.case.dubbo", List.of(key("zk", "org.bad.CASE"))));
        assertThat(a.hostConflictCount()).isEqualTo(1);

        // the first one changes: it came first still (an update keeps its arrival), though the other sorts before it
        a.accept(upsert("zk", "org.bad.Case", "org.bad.case.dubbo", ep("10.0.0.3")));
        s = a.flushNow().join();
        assertThat(s.service("org.bad.case.dubbo").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.3");
        assertThat(a.hostConflicts()).containsExactly(entry("org.bad.case.dubbo", List.of(key("zk", "org.bad.CASE"))));

        // the first one leaves: the other one is the host's only service now, and served
        a.accept(new ServiceRemoval(key("zk", "org.bad.Case")));
        s = a.flushNow().join();
        assertThat(s.service("org.bad.case.dubbo").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.2");
        assertThat(a.hostConflicts()).isEmpty();
    }

    @Test
    void afterALargePublish_everyLaterChangeIsPublishedAlone_andNoneIsLost() {
        // a first sync marks hundreds of hosts dirty at once; the set that held them is replaced, not cleared. A quiet
        // period of an hour: only flushNow publishes (and the very first change, on the leading edge), so the burst
        // below is one snapshot however slowly this machine runs the test
        ServiceAggregator a = aggregator(Duration.ofHours(1), Duration.ofHours(1));
        List<MeshSnapshot> seen = new CopyOnWriteArrayList<>();
        a.subscribe(seen::add).join();
        for (int i = 0; i < 300; i++) a.accept(upsert("r1", "s" + i, "s" + i + ".test", ep("10.0.1." + (i % 250))));
        MeshSnapshot first = a.flushNow().join();
        assertThat(first.serviceCount()).isEqualTo(300);
        for (int i = 0; i < 100; i++) {
            int s = (i * 7) % 300;
            a.accept(upsert("r1", "s" + s, "s" + s + ".test", ep("10.0.2." + (i % 250)), ep("10.0.3." + (i % 250))));
            MeshSnapshot next = a.flushNow().join();
            assertThat(next.changed()).containsExactly("s" + s + ".test");
            assertThat(next.removed()).isEmpty();
            assertThat(next.service("s" + s + ".test").endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.2." + (i % 250), "10.0.3." + (i % 250));
        }
        // then a burst of 200 changes arriving before one publish: every one of them is in it
        for (int i = 0; i < 200; i++) a.accept(upsert("r1", "s" + i, "s" + i + ".test", ep("10.0.4." + (i % 250))));
        MeshSnapshot burst = a.flushNow().join();
        assertThat(burst.changed()).hasSize(200);
        a.accept(upsert("r1", "s299", "s299.test", ep("10.0.5.1")));
        assertThat(a.flushNow().join().changed()).containsExactly("s299.test");
        await().untilAsserted(() -> assertThat(seen.get(seen.size() - 1).sequence())
                .isEqualTo(a.current().sequence()));
        // listeners saw every snapshot, in order
        for (int i = 1; i < seen.size(); i++)
            assertThat(seen.get(i).sequence()).isEqualTo(seen.get(i - 1).sequence() + 1);
    }

    @Test
    void aLoneChange_afterAQuietSpell_isPublishedAtOnce_theChangesRightAfterItAreCoalesced() {
        // quiet period and maximum delay of an hour: a snapshot that appears was published on the leading edge (or by
        // flushNow), never by a timer
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000_000_000L);
        ServiceAggregator a = aggregator(Duration.ofHours(1), Duration.ofHours(1), clock);
        List<MeshSnapshot> seen = new CopyOnWriteArrayList<>();
        a.subscribe(seen::add).join();
        a.accept(upsert("r1", "a", "a.test", ep("10.0.0.1")));
        await().atMost(Duration.ofSeconds(30)).until(() -> a.current().sequence() == 1);
        assertThat(a.current().changed()).containsExactly("a.test");
        assertThat(a.current().service("a.test").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.1");

        // within the quiet period of that change: held, and published together
        clock.addAndGet(Duration.ofMinutes(1).toNanos());
        a.accept(upsert("r1", "b", "b.test", ep("10.0.0.2")));
        clock.addAndGet(Duration.ofMinutes(1).toNanos());
        a.accept(upsert("r1", "c", "c.test", ep("10.0.0.3")));
        barrier(a);
        assertThat(a.current().sequence()).isEqualTo(1);
        assertThat(a.current().service("b.test")).isNull();
        MeshSnapshot both = a.flushNow().join();
        assertThat(both.sequence()).isEqualTo(2);
        assertThat(both.changed()).containsExactlyInAnyOrder("b.test", "c.test");

        // a quiet period after the last change: the next is published at once again
        clock.addAndGet(Duration.ofMinutes(61).toNanos());
        a.accept(upsert("r1", "a", "a.test", ep("10.0.0.4")));
        await().atMost(Duration.ofSeconds(30)).until(() -> a.current().sequence() == 3);
        assertThat(a.current().changed()).containsExactly("a.test");
        assertThat(a.current().service("a.test").endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.4");
        // a change that changes nothing is no change: it neither publishes nor starts a quiet period
        a.accept(upsert("r1", "a", "a.test", ep("10.0.0.4")));
        barrier(a);
        assertThat(a.current().sequence()).isEqualTo(3);
        await().atMost(Duration.ofSeconds(30)).until(() -> seen.size() == 4);
        assertThat(seen).extracting(MeshSnapshot::sequence).containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void theEventsQueuedWithTheFirstChangeOfABurst_joinItsSnapshot_theRestAreCoalesced() throws Exception {
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000_000_000L);
        ServiceAggregator a = aggregator(Duration.ofHours(1), Duration.ofHours(1), clock);
        List<MeshSnapshot> seen = new CopyOnWriteArrayList<>();
        // hold the aggregator thread (a listener's first call runs on it) while a watcher's batch is queued
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        var subscribed = a.subscribe(s -> {
            if (s.sequence() == 0) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            seen.add(s);
        });
        for (int i = 0; i < 10; i++) a.accept(upsert("r1", "s" + i, "s" + i + ".test", ep("10.0.1." + (i + 1))));
        release.countDown();
        subscribed.join();
        await().atMost(Duration.ofSeconds(30)).until(() -> a.current().sequence() == 1);
        assertThat(a.current().serviceCount()).isEqualTo(10);
        assertThat(a.current().changed()).hasSize(10);

        // a registry resync storm right after: coalesced on the trailing edge, into one snapshot here
        for (int i = 0; i < 1000; i++) {
            clock.addAndGet(1_000_000);
            a.accept(upsert("r1", "s" + i, "s" + i + ".test", ep("10.0.2." + (i % 250 + 1))));
        }
        barrier(a);
        assertThat(a.current().sequence()).isEqualTo(1);
        MeshSnapshot storm = a.flushNow().join();
        assertThat(storm.sequence()).isEqualTo(2);
        assertThat(storm.serviceCount()).isEqualTo(1000);
        assertThat(storm.changed()).hasSize(1000);
        await().atMost(Duration.ofSeconds(30)).until(() -> seen.size() == 3);
    }

    @Test
    void theChangesAfterTheLeadingEdge_arePublishedByTheMaximumDelay_whileChangesKeepComing() {
        // timers on real time (the quiet period's 200 ms), decisions on the injected clock: a timer that fires before
        // the clock reaches a deadline only schedules the next look
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000_000_000L);
        long start = clock.get();
        ServiceAggregator a = aggregator(Duration.ofMillis(200), Duration.ofSeconds(1), clock);
        a.accept(upsert("r1", "a", "a.test", ep("10.0.0.1")));
        await().atMost(Duration.ofSeconds(30)).until(() -> a.current().sequence() == 1);
        // every change within the quiet period of the one before, for longer than the maximum delay
        long[] at = {1, 150, 300, 450, 600, 750, 900, 1000};
        for (int i = 0; i < at.length; i++) {
            clock.set(start + Duration.ofMillis(at[i]).toNanos());
            a.accept(upsert("r1", "s" + i, "s" + i + ".test", ep("10.0.3." + (i + 1))));
            barrier(a);
            assertThat(a.current().sequence()).isEqualTo(1);
        }
        // the oldest unpublished change (at 1 ms) is a maximum delay old; the newest (1,000 ms) is not a quiet period
        clock.set(start + Duration.ofMillis(1002).toNanos());
        await().atMost(Duration.ofSeconds(30)).until(() -> a.current().sequence() == 2);
        assertThat(a.current().changed()).hasSize(at.length);
    }
}
