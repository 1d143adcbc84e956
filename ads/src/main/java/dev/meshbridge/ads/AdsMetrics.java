package dev.meshbridge.ads;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The meters of one ADS server, the same vocabulary for every server, named {@code meshbridge.<server>.*} where
 * {@code <server>} is {@code xds} or {@code mcp}:
 *
 * <ul>
 *   <li>{@code pushes} (counter; tags {@code type}, {@code protocol}): responses sent;
 *   <li>{@code push.bytes} (counter; same tags): their serialized size;
 *   <li>{@code push.size} (distribution summary, bytes; tag {@code protocol}): the size of each response, so
 *       {@code rate(..._count)} is responses per second and {@code _sum / _count} bytes per response;
 *   <li>{@code pushes.paced} (counter): pushes put off by the minimum push interval (their changes went out merged
 *       into a later push);
 *   <li>{@code acks} and {@code nacks} (counters; tag {@code type}): responses clients accepted and rejected;
 *   <li>{@code clients} (gauge; tags {@code type}, {@code protocol}): streams subscribed to a type;
 *   <li>{@code streams} (gauge): open streams; {@code streams.stale} (gauge): streams with a response not acknowledged
 *       for {@link AdsServer#STALE_AFTER} or more; {@code resources} (gauge; tag {@code type}): resources served;
 *   <li>{@code holding} (gauge): 1 while first answers are held for the registries' first sync, 0 after;
 *   <li>{@code event.to.ack} (timer with histogram buckets): from a registry event to the ACK of the last client
 *       subscribed to what it changed;
 *   <li>{@code limits} (counter; tag {@code limit}): times a client reached one of {@link AdsLimits} (the tag is the
 *       limit's config key, e.g. {@code maxNamesPerSubscription}); {@code connections} (gauge): open connections;
 *       {@code subscribed.names} (gauge): (stream, name) subscriptions held.
 * </ul>
 */
final class AdsMetrics {

    /** The histogram's buckets: from what a quiet bridge does (tens of ms) to what a paced or stuck one does. */
    static final Duration[] EVENT_TO_ACK_BUCKETS = {
        Duration.ofMillis(5),
        Duration.ofMillis(10),
        Duration.ofMillis(25),
        Duration.ofMillis(50),
        Duration.ofMillis(100),
        Duration.ofMillis(250),
        Duration.ofMillis(500),
        Duration.ofSeconds(1),
        Duration.ofMillis(2500),
        Duration.ofSeconds(5),
        Duration.ofSeconds(10),
        Duration.ofSeconds(30),
        Duration.ofSeconds(60)
    };

    private final Counter[][] pushes;
    private final Counter[][] bytes;
    private final DistributionSummary[] sizes = new DistributionSummary[2];
    private final Counter[] acks;
    private final Counter[] nacks;
    private final AtomicInteger[][] clients;
    private final AtomicInteger[] resources;
    private final AtomicInteger streams = new AtomicInteger();
    private final AtomicInteger stale = new AtomicInteger();
    private final AtomicInteger holding = new AtomicInteger(1);
    private final Counter paced;
    private final Counter failedTasks;
    private final Counter callerRuns;
    private final Timer eventToAck;
    private final ResourceTypes types;
    private final MeterRegistry registry;
    private final String prefix;
    private final java.util.concurrent.ConcurrentHashMap<String, Counter> limits =
            new java.util.concurrent.ConcurrentHashMap<>();
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger subscribedNames = new AtomicInteger();

    AdsMetrics(String server, ResourceTypes types, MeterRegistry registry) {
        this.types = types;
        this.registry = registry;
        String p = "meshbridge." + server + ".";
        this.prefix = p;
        int n = types.size() + 1; // the last slot counts type URLs the server does not serve
        pushes = new Counter[n][2];
        bytes = new Counter[n][2];
        acks = new Counter[n];
        nacks = new Counter[n];
        clients = new AtomicInteger[n][2];
        resources = new AtomicInteger[types.size()];
        for (int i = 0; i < n; i++) {
            String type = i < types.size() ? types.pushOrder().get(i).name() : "unknown";
            for (AdsStream.Mode m : AdsStream.Mode.values()) {
                int j = m.ordinal();
                pushes[i][j] = Counter.builder(p + "pushes")
                        .description("responses sent")
                        .tag("type", type)
                        .tag("protocol", m.tag())
                        .register(registry);
                bytes[i][j] = Counter.builder(p + "push.bytes")
                        .description("serialized bytes of responses sent")
                        .baseUnit("bytes")
                        .tag("type", type)
                        .tag("protocol", m.tag())
                        .register(registry);
                clients[i][j] = new AtomicInteger();
                Gauge.builder(p + "clients", clients[i][j], AtomicInteger::get)
                        .description("streams subscribed to a type")
                        .tag("type", type)
                        .tag("protocol", m.tag())
                        .register(registry);
            }
            acks[i] = Counter.builder(p + "acks")
                    .description("responses accepted by clients")
                    .tag("type", type)
                    .register(registry);
            nacks[i] = Counter.builder(p + "nacks")
                    .description("responses rejected by clients")
                    .tag("type", type)
                    .register(registry);
            if (i < types.size()) {
                resources[i] = new AtomicInteger();
                Gauge.builder(p + "resources", resources[i], AtomicInteger::get)
                        .description("resources served")
                        .tag("type", type)
                        .register(registry);
            }
        }
        for (AdsStream.Mode m : AdsStream.Mode.values()) {
            sizes[m.ordinal()] = DistributionSummary.builder(p + "push.size")
                    .description("serialized size of each response")
                    .baseUnit("bytes")
                    .tag("protocol", m.tag())
                    .register(registry);
        }
        paced = Counter.builder(p + "pushes.paced")
                .description("pushes put off by the minimum push interval, merged into a later one")
                .register(registry);
        failedTasks = Counter.builder(p + "tasks.failed")
                .description("serving tasks that threw (logged); the state before each was kept")
                .register(registry);
        callerRuns = Counter.builder(p + "snapshots.caller.runs")
                .description("small snapshots applied on the aggregator's thread, the serving thread being idle")
                .register(registry);
        eventToAck = Timer.builder(p + "event.to.ack")
                .description("time from a registry event to the ACK of the last client subscribed to what it changed")
                .serviceLevelObjectives(EVENT_TO_ACK_BUCKETS)
                .minimumExpectedValue(EVENT_TO_ACK_BUCKETS[0])
                .maximumExpectedValue(EVENT_TO_ACK_BUCKETS[EVENT_TO_ACK_BUCKETS.length - 1])
                .register(registry);
        Gauge.builder(p + "streams", streams, AtomicInteger::get)
                .description("open streams")
                .register(registry);
        Gauge.builder(p + "streams.stale", stale, AtomicInteger::get)
                .description("streams with a response not acknowledged for " + AdsServer.STALE_AFTER.toSeconds()
                        + " s or more")
                .register(registry);
        Gauge.builder(p + "holding", holding, AtomicInteger::get)
                .description("1 while first answers are held until the registries' first sync")
                .register(registry);
        Gauge.builder(p + "connections", connections, AtomicInteger::get)
                .description("open client connections")
                .register(registry);
        Gauge.builder(p + "subscribed.names", subscribedNames, AtomicInteger::get)
                .description("(stream, resource name) subscriptions held")
                .register(registry);
    }

    /** A client reached a limit; {@code limit} is one of {@link AdsLimits}' config keys (a fixed, small set). */
    void limitHit(String limit) {
        limits.computeIfAbsent(
                        limit,
                        l -> Counter.builder(prefix + "limits")
                                .description("times a client reached a limit of the server")
                                .tag("limit", l)
                                .register(registry))
                .increment();
    }

    private int slot(TypeState ts) {
        return ts.unknown ? types.size() : types.ordinal(ts.type());
    }

    void pushed(TypeState ts, AdsStream.Mode mode, int size) {
        int i = slot(ts);
        pushes[i][mode.ordinal()].increment();
        bytes[i][mode.ordinal()].increment(size);
        sizes[mode.ordinal()].record(size);
    }

    void eventToAck(long nanos) {
        eventToAck.record(nanos, TimeUnit.NANOSECONDS);
    }

    void stale(int n) {
        stale.set(n);
    }

    void paced() {
        paced.increment();
    }

    void taskFailed() {
        failedTasks.increment();
    }

    void callerRan() {
        callerRuns.increment();
    }

    void ack(TypeState ts) {
        acks[slot(ts)].increment();
    }

    void nack(TypeState ts) {
        nacks[slot(ts)].increment();
    }

    void streamOpened() {
        streams.incrementAndGet();
    }

    void typeRequested(AdsStream st, TypeState ts) {
        clients[slot(ts)][st.mode.ordinal()].incrementAndGet();
    }

    void streamClosed(AdsStream st) {
        streams.decrementAndGet();
        st.forEachState(ts -> {
            if (ts.requested) clients[slot(ts)][st.mode.ordinal()].decrementAndGet();
        });
    }

    void resources(ResourceType type, int count) {
        resources[types.ordinal(type)].set(count);
    }

    void holding(boolean on) {
        holding.set(on ? 1 : 0);
    }
}
