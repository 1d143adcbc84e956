package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.ads.AdsEngine;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A burst of new services, as in a registry's first sync, arrives as many snapshots queued on the serving thread: the
 * sidecars' outbound listeners (made again from every service) are made once for the burst, not once per snapshot,
 * and what is served after the burst is exactly what applying every snapshot eagerly serves. A removal is never put
 * off, so a route never names a cluster that is gone.
 */
class SidecarBurstTest {

    /** A core whose sidecar translations cost nothing on its clock, so none is spaced out. */
    static XdsCore core() {
        return core(() -> 0L);
    }

    private static XdsCore core(java.util.function.LongSupplier clock) {
        EnvoyTranslator translator = new EnvoyTranslator();
        return new XdsCore(
                        translator,
                        null,
                        new EnvoySidecarTranslator(translator, SidecarOptions.DEFAULTS),
                        new XdsMetrics(new SimpleMeterRegistry()),
                        AdsEngine.detached(XdsType.TYPES, new SimpleMeterRegistry()))
                .nanoClock(clock);
    }

    /** What the aggregator publishes for these events: its first snapshot, then one after each event. */
    static List<MeshSnapshot> snapshotsAfter(TestCatalog catalog, List<? extends RegistryEvent> events) {
        List<MeshSnapshot> snapshots = new CopyOnWriteArrayList<>();
        catalog.aggregator().subscribe(snapshots::add).join();
        catalog.snapshot();
        for (RegistryEvent e : events) {
            catalog.aggregator().accept(e);
            catalog.snapshot();
        }
        assertThat(snapshots).hasSize(events.size() + 1);
        return snapshots;
    }

    /** Every sidecar resource served (type and name) with its content version. */
    static Map<String, Long> sidecar(XdsCore core) {
        Map<String, Long> out = new TreeMap<>();
        for (XdsResource r : core.index().sidecar().resources()) {
            out.put(r.type().shortName() + " " + r.name(), r.versionHash());
        }
        return out;
    }

    @Test
    void aBurstOfNewServicesIsTranslatedOnce_andServesWhatEagerApplyServes() {
        List<ServiceUpsert> burst = List.of(
                Upserts.springCloud(
                        "orders",
                        List.of(Upserts.springInstance("10.0.0.1", 8080).build())),
                Upserts.dubboApplication(
                        "shop",
                        List.of(Upserts.dubboAppInstance("10.0.1.1", 50051).build())),
                Upserts.dubboInterface(
                        "org.demo.Greeter",
                        "1.0.0",
                        "",
                        List.of(Upserts.dubboProvider("10.0.2.1", 20880, Map.of())
                                .build())),
                Upserts.springCloud(
                        "billing",
                        List.of(Upserts.springInstance("10.0.3.1", 8080).build())));
        List<MeshSnapshot> snapshots = new CopyOnWriteArrayList<>();
        ServiceKey orders = burst.get(0).key();
        try (TestCatalog catalog = new TestCatalog()) {
            catalog.aggregator().subscribe(snapshots::add).join();
            catalog.snapshot();
            for (ServiceUpsert u : burst) {
                catalog.aggregator().accept(u);
                catalog.snapshot();
            }
            int burstEnd = snapshots.size();
            catalog.aggregator().accept(new ServiceRemoval(orders));
            catalog.snapshot();
            assertThat(snapshots.size()).isGreaterThan(burstEnd);

            XdsCore eager = core();
            XdsCore queued = core();
            for (int i = 0; i < burstEnd; i++) {
                eager.applySnapshot(snapshots.get(i));
                // the first snapshot is made at once; each later one of the burst has another waiting behind it
                queued.applySnapshot(snapshots.get(i), i > 0 && i < burstEnd - 1);
            }
            assertThat(sidecar(queued)).isEqualTo(sidecar(eager));
            assertThat(sidecar(queued).keySet())
                    .anyMatch(k -> k.startsWith("lds outbound_"))
                    .anyMatch(k -> k.startsWith("rds outbound_"));
            assertThat(queued.sidecarTranslations()).isLessThan(eager.sidecarTranslations());
            assertThat(queued.sidecarTranslations()).isEqualTo(2);

            // a removal with later snapshots waiting is made at once
            long before = queued.sidecarTranslations();
            for (int i = burstEnd; i < snapshots.size(); i++) {
                eager.applySnapshot(snapshots.get(i));
                queued.applySnapshot(snapshots.get(i), true);
            }
            assertThat(queued.sidecarTranslations()).isGreaterThan(before);
            assertThat(sidecar(queued)).isEqualTo(sidecar(eager));
        }
    }

    /**
     * With the serving thread keeping up (no snapshot waiting), a snapshot that only adds services right after a
     * translation waits for the spacing: its service's cluster is served at once, its sidecar route once the spacing
     * has passed ({@link XdsCore#flushSidecar}), and what is served then equals eager application. A removal is never
     * spaced out.
     */
    @Test
    void additionsRightAfterATranslationWaitForTheSpacing_removalsDoNot() {
        ServiceUpsert orders = Upserts.springCloud(
                "orders", List.of(Upserts.springInstance("10.0.0.1", 8080).build()));
        ServiceUpsert billing = Upserts.springCloud(
                "billing", List.of(Upserts.springInstance("10.0.3.1", 8080).build()));
        try (TestCatalog catalog = new TestCatalog()) {
            List<MeshSnapshot> snapshots =
                    snapshotsAfter(catalog, List.of(orders, billing, new ServiceRemoval(orders.key())));

            // every reading of this clock is a millisecond later: a translation costs 1 ms, so the next one that only
            // adds waits until 4 ms after it ended
            long[] now = {0};
            XdsCore spaced = core(() -> now[0] += 1_000_000);
            XdsCore eager = core();
            for (int i = 0; i < 2; i++) {
                spaced.applySnapshot(snapshots.get(i));
                eager.applySnapshot(snapshots.get(i));
            }
            assertThat(spaced.sidecarPending())
                    .as("orders added right after the first translation")
                    .isTrue();
            String ordersHost = snapshots.get(1).changed().iterator().next();
            assertThat(spaced.index().service(ordersHost))
                    .as("its cluster served at once")
                    .isNotNull();
            assertThat(sidecar(spaced)).isNotEqualTo(sidecar(eager));
            long translations = spaced.sidecarTranslations();

            now[0] += 10_000_000;
            assertThat(spaced.sidecarDelayNanos()).isNegative();
            spaced.flushSidecar();
            assertThat(spaced.sidecarPending()).isFalse();
            assertThat(spaced.sidecarTranslations()).isEqualTo(translations + 1);
            assertThat(sidecar(spaced)).isEqualTo(sidecar(eager));
            spaced.flushSidecar();
            assertThat(spaced.sidecarTranslations()).as("nothing left to flush").isEqualTo(translations + 1);

            // billing added right after: put off; orders removed next: made at once, billing's route with it
            spaced.applySnapshot(snapshots.get(2));
            eager.applySnapshot(snapshots.get(2));
            assertThat(spaced.sidecarPending()).isTrue();
            spaced.applySnapshot(snapshots.get(3));
            eager.applySnapshot(snapshots.get(3));
            assertThat(spaced.sidecarPending()).isFalse();
            assertThat(sidecar(spaced)).isEqualTo(sidecar(eager));
        }
    }

    /** The snapshot as the aggregator would have published it with ({@code alone}) or without nothing else due. */
    private static MeshSnapshot published(MeshSnapshot s, boolean alone) {
        return new MeshSnapshot(
                s.sequence(),
                s.versionSum(),
                s.servicesMap(),
                s.changed(),
                s.removed(),
                s.endpointCount(),
                s.routes(),
                s.routesChanged(),
                s.firstEventNanos(),
                alone);
    }

    /**
     * The last snapshot of a burst of additions (published alone, none waiting behind it, after snapshots published
     * while more was due) is made at once, not after the spacing: the serving thread would otherwise idle while the
     * burst's services lack their sidecar routes (issue 22: about 10 s after an ingest of 100,000 services). One such
     * early making per spacing: a second burst ending right after waits the spacing out, and so does a trickle of lone
     * additions.
     */
    @Test
    void theEndOfABurstIsDueAtOnce_oncePerSpacing_whileATrickleWaits() {
        List<RegistryEvent> added = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            added.add(Upserts.springCloud(
                    "svc" + i,
                    List.of(Upserts.springInstance("10.0.0." + (i + 1), 8080).build())));
        }
        try (TestCatalog catalog = new TestCatalog()) {
            List<MeshSnapshot> snapshots = snapshotsAfter(catalog, added);

            // time moves only while the core makes the sidecar's resources, a millisecond per reading: a making
            // costs 1 ms and the spacing runs 4 ms past it, while applying snapshots takes no time
            long[] now = {0};
            boolean[] moving = {true};
            XdsCore spaced = core(() -> moving[0] ? now[0] += 1_000_000 : now[0]);
            Runnable flush = () -> {
                moving[0] = true;
                spaced.flushSidecar();
                moving[0] = false;
            };
            XdsCore eager = core();
            for (MeshSnapshot s : snapshots) eager.applySnapshot(s);
            spaced.applySnapshot(snapshots.get(0));
            moving[0] = false;

            // a burst: svc0 published while more was due, svc1 published alone, ending it
            spaced.applySnapshot(published(snapshots.get(1), false));
            assertThat(spaced.sidecarPending()).isTrue();
            assertThat(spaced.sidecarDelayNanos()).as("mid-burst: spaced").isPositive();
            spaced.applySnapshot(published(snapshots.get(2), true));
            assertThat(spaced.sidecarPending()).as("never made inline").isTrue();
            assertThat(spaced.sidecarDelayNanos())
                    .as("the burst ended: due at once")
                    .isZero();
            flush.run();
            assertThat(spaced.sidecarEarlyMakings()).isEqualTo(1);
            assertThat(spaced.sidecarPending()).isFalse();

            // a second burst ending right after the early making waits the spacing out
            spaced.applySnapshot(published(snapshots.get(3), false));
            spaced.applySnapshot(published(snapshots.get(4), true));
            assertThat(spaced.sidecarPending()).isTrue();
            assertThat(spaced.sidecarDelayNanos())
                    .as("one early making per spacing")
                    .isPositive();
            now[0] += 10_000_000;
            assertThat(spaced.sidecarDelayNanos()).isNegative();
            flush.run();
            assertThat(spaced.sidecarEarlyMakings())
                    .as("made once its spacing passed")
                    .isEqualTo(1);

            // a lone addition, no burst before it: spaced
            spaced.applySnapshot(published(snapshots.get(5), true));
            assertThat(spaced.sidecarPending()).isTrue();
            assertThat(spaced.sidecarDelayNanos()).as("a trickle is spaced").isPositive();
            now[0] += 10_000_000;
            flush.run();
            assertThat(spaced.sidecarEarlyMakings()).isEqualTo(1);

            // an ingest's shape: a large snapshot published while more was due, made at once (its spacing had
            // passed), then the last one alone: due at once too
            now[0] += 10_000_000;
            long made = spaced.sidecarTranslations();
            moving[0] = true;
            spaced.applySnapshot(published(snapshots.get(6), false));
            moving[0] = false;
            assertThat(spaced.sidecarTranslations()).isEqualTo(made + 1);
            spaced.applySnapshot(published(snapshots.get(7), true));
            assertThat(spaced.sidecarPending()).isTrue();
            assertThat(spaced.sidecarDelayNanos())
                    .as("the burst ended with this one")
                    .isZero();
            flush.run();
            assertThat(spaced.sidecarEarlyMakings()).isEqualTo(2);
            assertThat(sidecar(spaced)).isEqualTo(sidecar(eager));
        }
    }

    /**
     * Only a snapshot that cannot change the sidecar's routes may be applied on the aggregator's thread (with {@code
     * meshbridge.ads.callerRunsServices} on): an endpoint change, the usual lone change, may; a new or removed service,
     * or one whose ports changed, goes to the serving thread, since making the routes again takes seconds at 100,000
     * services.
     */
    @Test
    void onlySnapshotsThatCannotChangeTheSidecarRoutesMayRunOnTheAggregatorsThread() {
        ServiceUpsert orders = Upserts.springCloud(
                "orders", List.of(Upserts.springInstance("10.0.0.1", 8080).build()));
        try (TestCatalog catalog = new TestCatalog()) {
            List<MeshSnapshot> snapshots = snapshotsAfter(
                    catalog,
                    List.of(
                            orders,
                            // an endpoint moves: same service, same ports
                            Upserts.springCloud(
                                    "orders",
                                    List.of(Upserts.springInstance("10.0.0.2", 8080)
                                            .build())),
                            // the service gains a port
                            new ServiceUpsert(
                                    orders.key(),
                                    orders.host(),
                                    List.of(
                                            new ServicePort("http", 80, Protocol.HTTP),
                                            new ServicePort("grpc", 9090, Protocol.GRPC)),
                                    List.of(Upserts.springInstance("10.0.0.2", 8080)
                                            .build())),
                            new ServiceRemoval(orders.key())));
            assertThat(snapshots
                            .get(3)
                            .service(snapshots.get(3).changed().iterator().next())
                            .ports())
                    .hasSize(2);

            assertThat(XdsServer.mayChangeSidecar(snapshots.get(0), null))
                    .as("nothing handed before")
                    .isTrue();
            // each against the one before it: a new service, an endpoint change, a new port, a removal
            List<Boolean> expected = List.of(true, false, true, true);
            for (int i = 1; i < snapshots.size(); i++) {
                assertThat(XdsServer.mayChangeSidecar(
                                snapshots.get(i), snapshots.get(i - 1).servicesMap()))
                        .as("snapshot %d", i)
                        .isEqualTo(expected.get(i - 1));
            }
        }
    }
}
