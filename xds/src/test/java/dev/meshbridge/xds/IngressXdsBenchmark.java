package dev.meshbridge.xds;

import static dev.meshbridge.xds.XdsBenchmark.THREADS;
import static dev.meshbridge.xds.XdsBenchmark.kb;
import static dev.meshbridge.xds.XdsBenchmark.mean;
import static dev.meshbridge.xds.XdsBenchmark.micros;
import static dev.meshbridge.xds.XdsBenchmark.percentile;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.ads.AdsEngine;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.testing.TestCatalog;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The cost of serving Ingress routes, printed (never asserted as timings). Run with {@code ./mvnw -q -pl xds -am
 * verify -Dgroups=benchmark -DexcludedGroups=none -Dtest=IngressXdsBenchmark -Dsurefire.failIfNoSpecifiedTests=false};
 * the figures land in {@code xds/target/surefire-reports/dev.meshbridge.xds.IngressXdsBenchmark-output.txt}.
 *
 * <p>Load: {@link XdsBenchmark}'s 10,000 services of 10 endpoints, and 1,000 Ingresses of 5 routes each (5,000
 * routes on 1,000 hosts), every tenth route split 90/10 between two label subsets, one TLS Secret per 10 Ingresses.
 */
@Tag("benchmark")
class IngressXdsBenchmark {

    static final int INGRESSES = 1_000;
    static final int PATHS = 5;

    static RouteTable table(int weightVariant) {
        List<IngressRoutes> all = new ArrayList<>();
        for (int i = 0; i < INGRESSES; i++) {
            IngressRef ref = IngressTables.ref("ns-" + (i % 20), "ing-" + i, i);
            String host = "h-" + i + ".example.com";
            List<HttpRoute> routes = new ArrayList<>();
            for (int j = 0; j < PATHS; j++) {
                String service = XdsBenchmark.name((i * PATHS + j) % XdsBenchmark.SERVICES) + ".dubbo";
                HttpRoute r = (i * PATHS + j) % 10 == 0
                        ? IngressTables.route(
                                ref,
                                host,
                                PathType.PREFIX,
                                "/p" + j,
                                IngressTables.subset(service, 90 - (i == 0 ? weightVariant : 0), "version", "v0"),
                                IngressTables.subset(service, 10, "version", "v1"))
                        : IngressTables.route(
                                ref,
                                host,
                                j == 0 ? PathType.EXACT : PathType.PREFIX,
                                "/p" + j,
                                IngressTables.registry(service, 100));
                routes.add(r);
            }
            List<TlsEntry> tls = i % 10 == 0 ? List.of(IngressTables.tls(ref, "tls-" + i, true, host)) : List.of();
            all.add(new IngressRoutes(ref, routes, java.util.Optional.empty(), tls));
        }
        return RouteTable.merge(all);
    }

    @Test
    void routesTranslation_andOneInstanceChange_with5000RoutesOver100kEndpoints() throws Exception {
        int warm = 2000;
        int measured = 2000;
        RouteTable table = table(0);
        List<MeshSnapshot> changes = new ArrayList<>();
        MeshSnapshot full;
        try (TestCatalog catalog = new TestCatalog()) {
            XdsBenchmark.load(catalog);
            catalog.aggregator().setRoutes(table);
            catalog.snapshot();
            LinkedBlockingQueue<MeshSnapshot> published = new LinkedBlockingQueue<>();
            catalog.aggregator().subscribe(published::add).join();
            full = published.take();
            int[] variant = new int[XdsBenchmark.SERVICES];
            Random random = new Random(7);
            for (int k = 0; k < warm + measured; k++) {
                int i = random.nextInt(XdsBenchmark.SERVICES);
                variant[i] ^= 1;
                catalog.aggregator().accept(XdsBenchmark.service(i, variant[i]));
            }
            catalog.snapshot();
            published.drainTo(changes);
        }
        assertThat(full.routes().routes()).hasSize(INGRESSES * PATHS);

        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        XdsCore core = new XdsCore(
                new EnvoyTranslator(),
                new XdsMetrics(meters),
                AdsEngine.detached(XdsType.TYPES, new SimpleMeterRegistry()));
        core.applySnapshot(full);
        IngressResources served = core.index().ingress();
        assertThat(served.unavailable()).isEmpty();

        // one translation of the whole table: what a route table change (any Ingress edited) costs
        EnvoyIngressTranslator translator =
                new EnvoyIngressTranslator(new EnvoyTranslator(), XdsOptions.Ingress.DEFAULTS);
        RouteTable edited = table(1);
        int rounds = 30;
        long[][] translation = measure(
                10,
                rounds,
                k -> translator.translate(k % 2 == 0 ? table : edited, h -> {
                    ServiceResources r = core.index().service(h);
                    return r == null ? null : EnvoyTranslator.servedPorts(r);
                }));
        long[] cpu = translation[0];
        long[] alloc = translation[1];

        double translations =
                meters.counter("meshbridge.xds.ingress.translations").count();
        long[][] change = measure(warm, measured, k -> core.applySnapshot(changes.get(k)));
        long[] changeCpu = change[0];
        long[] changeAlloc = change[1];
        assertThat(meters.counter("meshbridge.xds.ingress.translations").count())
                .as("endpoint changes translate no route")
                .isEqualTo(translations);

        // a route table change through the server's core: translation, the validation rules check, the index diff
        MeshSnapshot last = changes.get(changes.size() - 1);
        long[][] apply = measure(
                10,
                rounds,
                k -> core.applySnapshot(new MeshSnapshot(
                        last.sequence() + 1 + k,
                        last.versionSum(),
                        last.servicesMap(),
                        java.util.Set.of(),
                        java.util.Set.of(),
                        last.endpointCount(),
                        k % 2 == 0 ? edited : table,
                        true)));
        long[] applyCpu = apply[0];
        long[] applyAlloc = apply[1];
        assertThat(core.index().ingress().routesVersion()).isEqualTo(table.version());

        int routeBytes = served.find(XdsType.ROUTE, XdsNames.INGRESS_ROUTE).size();
        int listenerBytes = served.resources().stream()
                .filter(r -> r.type() == XdsType.LISTENER)
                .mapToInt(XdsResource::size)
                .sum();
        System.out.printf(
                "%n== Ingress routes: %,d Ingresses, %,d routes on %,d hosts, %,d TLS hosts; %,d services, %,d"
                        + " endpoints ==%n",
                INGRESSES, INGRESSES * PATHS, INGRESSES, table.tls().size(), full.serviceCount(), full.endpointCount());
        System.out.printf(
                "resources for the routes: %d (RouteConfiguration %s, listeners %s)%n",
                served.resources().size(), kb(routeBytes), kb(listenerBytes));
        System.out.printf(
                "translating the whole route table (a route table change), %d rounds: CPU p50 %s p99 %s; allocated"
                        + " mean %s%n",
                rounds, micros(percentile(cpu, 50)), micros(percentile(cpu, 99)), kb(mean(alloc)));
        System.out.printf(
                "a route table change applied by the server (translate, check the validation rules, diff), %d rounds:"
                        + " CPU p50 %s p99 %s; allocated mean %s%n",
                rounds, micros(percentile(applyCpu, 50)), micros(percentile(applyCpu, 99)), kb(mean(applyAlloc)));
        System.out.printf(
                "one single-instance change with those routes in the snapshot, %d changes: CPU p50 %s p99 %s mean %s;"
                        + " allocated p50 %s mean %s; route translations during them: 0%n",
                measured,
                micros(percentile(changeCpu, 50)),
                micros(percentile(changeCpu, 99)),
                micros(mean(changeCpu)),
                kb(percentile(changeAlloc, 50)),
                kb(mean(changeAlloc)));
    }

    /**
     * Runs {@code step} for {@code warm + measured} rounds (round number given) on this thread; returns the CPU time
     * and the bytes allocated of each measured round.
     */
    static long[][] measure(int warm, int measured, java.util.function.IntConsumer step) {
        long tid = Thread.currentThread().threadId();
        long[][] out = new long[2][measured];
        for (int k = 0; k < warm + measured; k++) {
            long c = THREADS.getCurrentThreadCpuTime();
            long a = THREADS.getThreadAllocatedBytes(tid);
            step.accept(k);
            if (k >= warm) {
                out[0][k - warm] = THREADS.getCurrentThreadCpuTime() - c;
                out[1][k - warm] = THREADS.getThreadAllocatedBytes(tid) - a;
            }
        }
        return out;
    }
}
