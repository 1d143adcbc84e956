package dev.meshbridge.bench.world;

import dev.meshbridge.bench.load.Catalog;
import dev.meshbridge.bench.report.Stats;
import dev.meshbridge.xds.XdsType;
import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ADS client fleet: {@code delta + sotw} streams, each on its own connection, each calling the probe service and
 * nine services drawn at random (seeded), and the analysis of when each change reached each stream subscribed to it.
 */
final class AdsFleet {

    static final int SERVICES_PER_CLIENT = 10;

    /** A change made in the window: its id, when it entered the bridge (or was written to the registry), where. */
    record Change(int id, long t0, int service) {}

    private final Catalog catalog;
    private final List<FleetStream> streams = new ArrayList<>();
    private final Map<Integer, List<FleetStream>> subscribers = new HashMap<>();
    private final AtomicInteger synced = new AtomicInteger();
    private final AtomicLong lastSynced = new AtomicLong();
    private int port;
    private int opened;
    private long firstOpen;

    AdsFleet(Catalog catalog, int delta, int sotw, long seed) {
        this.catalog = catalog;
        for (int i = 0; i < delta + sotw; i++) {
            Random random = new Random(seed * 1_000_003L + i);
            Set<Integer> services = new LinkedHashSet<>();
            services.add(catalog.probe());
            while (services.size() < Math.min(SERVICES_PER_CLIENT, catalog.services())) {
                services.add(random.nextInt(catalog.services()));
            }
            Map<XdsType, List<String>> names = new EnumMap<>(XdsType.class);
            for (XdsType t : FleetStream.TYPES) names.put(t, new ArrayList<>());
            for (int s : services) {
                Catalog.Subscription sub = catalog.subscription(s);
                names.get(XdsType.CLUSTER).addAll(sub.clusters());
                names.get(XdsType.ENDPOINT).addAll(sub.clusters());
                names.get(XdsType.LISTENER).addAll(sub.listeners());
                names.get(XdsType.ROUTE).addAll(sub.routes());
            }
            // Delta and SotW alternate, so a fleet that is only partly connected still has both
            boolean isDelta = i < 2 * Math.min(delta, sotw) ? i % 2 == 0 : delta > sotw;
            FleetStream st = new FleetStream(i, isDelta, new ArrayList<>(services), names, (s, nanos) -> {
                synced.incrementAndGet();
                lastSynced.accumulateAndGet(nanos, Math::max);
            });
            streams.add(st);
            for (int s : services)
                subscribers.computeIfAbsent(s, k -> new ArrayList<>()).add(st);
        }
    }

    int size() {
        return streams.size();
    }

    /**
     * Opens the next {@code count} streams and waits until every stream opened so far has ACKed a first response of
     * every type it subscribes to, or the time is up. The harness calls it group after group (a rolling start, so a
     * server is not asked for everything at once) and stops when its time or memory runs out; streams never opened
     * are left out of the window.
     *
     * @return {@code [millis from the first open to the last stream synced, streams synced, streams opened]}
     */
    long[] openNext(int port, int count, long timeoutMillis) {
        long now = System.nanoTime();
        if (opened == 0) {
            this.port = port;
            synced.set(0);
            lastSynced.set(0);
            firstOpen = now;
        }
        long deadline = now + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        int next = Math.min(streams.size(), opened + count);
        for (int i = opened; i < next; i++) streams.get(i).open(port);
        opened = next;
        while (synced.get() < opened && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
        }
        int n = synced.get();
        long end = n == opened ? lastSynced.get() : System.nanoTime();
        return new long[] {TimeUnit.NANOSECONDS.toMillis(end - firstOpen), n, opened};
    }

    /**
     * Every client that was opened drops its connection and comes back at once on a new one, holding no versions.
     *
     * @return {@code [millis from the first reconnect to the last stream synced, streams synced, streams reconnecting]}
     */
    long[] reconnect(long timeoutMillis) throws InterruptedException {
        List<ManagedChannel> old = new ArrayList<>();
        synced.set(0);
        lastSynced.set(0);
        long start = System.nanoTime();
        int reopened = 0;
        for (FleetStream st : streams) {
            if (!st.opened()) continue;
            ManagedChannel c = st.drop();
            if (c != null) old.add(c);
            st.open(port);
            reopened++;
        }
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (synced.get() < reopened && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
        }
        int n = synced.get();
        long end = n == reopened ? lastSynced.get() : System.nanoTime();
        for (ManagedChannel c : old) c.awaitTermination(5, TimeUnit.SECONDS);
        return new long[] {TimeUnit.NANOSECONDS.toMillis(end - start), n, reopened};
    }

    int errors() {
        int n = 0;
        for (FleetStream st : streams) if (st.error() != null) n++;
        return n;
    }

    void arm() {
        for (FleetStream st : streams) st.arm();
    }

    void close() {
        for (FleetStream st : streams) st.drop();
        for (FleetStream st : streams) st.close();
    }

    /**
     * When each change of the window reached each stream subscribed to its service: per delivery, and per change the
     * time until every subscribed stream of a protocol had it; bytes by type; what was sent that carried nothing new.
     */
    Map<String, String> report(List<Change> changes) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String p : new String[] {"delta", "sotw", "all"}) {
            List<Long> deliveries = new ArrayList<>();
            List<Long> toAll = new ArrayList<>();
            List<Long> probeToAll = new ArrayList<>();
            List<Long> probeDeliveries = new ArrayList<>();
            long undelivered = 0;
            long expected = 0;
            for (Change c : changes) {
                String cluster = catalog.subscription(c.service()).clusters().get(0);
                long worst = -1;
                boolean complete = true;
                boolean any = false;
                for (FleetStream st : subscribers.getOrDefault(c.service(), List.of())) {
                    if (!st.opened()) continue;
                    if (!p.equals("all") && st.delta != p.equals("delta")) continue;
                    any = true;
                    expected++;
                    long at = st.firstAtOrAfter(cluster, c.id());
                    if (at < 0) {
                        if (System.getProperty("bench.debug") != null && p.equals("all")) {
                            System.err.println("undelivered id=" + c.id() + " service=" + c.service() + " cluster="
                                    + cluster + " stream=" + st.index + " log=" + st.debugLog(cluster));
                        }
                        undelivered++;
                        complete = false;
                        continue;
                    }
                    long latency = at - c.t0();
                    deliveries.add(latency);
                    if (c.service() == catalog.probe()) probeDeliveries.add(latency);
                    worst = Math.max(worst, latency);
                }
                if (any && complete) {
                    toAll.add(worst);
                    if (c.service() == catalog.probe()) probeToAll.add(worst);
                }
            }
            out.put(p + ".expected", Long.toString(expected));
            out.put(p + ".undelivered", Long.toString(undelivered));
            Stats.put(out, p + ".delivery", deliveries);
            Stats.put(out, p + ".toAll", toAll);
            Stats.put(out, p + ".probeDelivery", probeDeliveries);
            Stats.put(out, p + ".probeToAll", probeToAll);
        }
        for (boolean delta : new boolean[] {true, false}) {
            String p = delta ? "delta" : "sotw";
            FleetStream.Counters sum = new FleetStream.Counters();
            int n = 0;
            for (FleetStream st : streams) {
                if (st.delta != delta) continue;
                n++;
                FleetStream.Counters c = st.counters();
                for (int t = 0; t < 4; t++) {
                    sum.bytes[t] += c.bytes[t];
                    sum.responses[t] += c.responses[t];
                }
                sum.wasteBytes += c.wasteBytes;
                sum.wasteResponses += c.wasteResponses;
                sum.edsEndpoints += c.edsEndpoints;
                sum.edsAssignments += c.edsAssignments;
                sum.edsWithinBudget += c.edsWithinBudget;
                sum.edsBudgetBytes += c.edsBudgetBytes;
            }
            out.put(p + ".streams", Integer.toString(n));
            for (XdsType t : FleetStream.TYPES) {
                out.put(p + "." + t.shortName() + ".bytes", Long.toString(sum.bytes[t.ordinal()]));
                out.put(p + "." + t.shortName() + ".responses", Long.toString(sum.responses[t.ordinal()]));
            }
            out.put(p + ".waste.bytes", Long.toString(sum.wasteBytes));
            out.put(p + ".waste.responses", Long.toString(sum.wasteResponses));
            out.put(p + ".eds.endpoints", Long.toString(sum.edsEndpoints));
            out.put(p + ".eds.assignments", Long.toString(sum.edsAssignments));
            out.put(p + ".eds.withinBudget", Long.toString(sum.edsWithinBudget));
            out.put(p + ".eds.budgetBytes", Long.toString(sum.edsBudgetBytes));
        }
        out.put("changes", Integer.toString(changes.size()));
        out.put("errors", Integer.toString(errors()));
        return out;
    }
}
