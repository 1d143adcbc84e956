package dev.meshbridge.xds;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The xDS server's meters, all named {@code meshbridge.xds.*}:
 *
 * <ul>
 *   <li>{@code meshbridge.xds.pushes} (counter; tags {@code type}, {@code protocol}): responses sent;
 *   <li>{@code meshbridge.xds.push.bytes} (counter; same tags): their serialized size;
 *   <li>{@code meshbridge.xds.nacks} (counter; tag {@code type}): responses clients rejected;
 *   <li>{@code meshbridge.xds.clients} (gauge; tags {@code type}, {@code protocol}): streams subscribed to a type;
 *   <li>{@code meshbridge.xds.streams} (gauge): open streams;
 *   <li>{@code meshbridge.xds.resources} (gauge; tag {@code type}): resources served;
 *   <li>{@code meshbridge.xds.skipped} (counter; tag {@code reason}): endpoints or resources left out because Envoy
 *       would refuse them; {@code meshbridge.xds.skipped.current} (gauge): how many are left out now;
 *   <li>{@code meshbridge.xds.snapshot.apply} (timer): translating and indexing one catalog snapshot;
 *   <li>{@code meshbridge.xds.ingress.translations} (counter): translations of the Ingress routes (each route table
 *       change, or a change of the ports of a service they name); {@code meshbridge.xds.ingress.unavailable} (gauge):
 *       destinations of served routes that answer 503 now.
 * </ul>
 */
final class XdsMetrics {

    private final MeterRegistry registry;
    private final Counter[][] pushes = new Counter[XdsType.all().length][2];
    private final Counter[][] bytes = new Counter[XdsType.all().length][2];
    private final Counter[] nacks = new Counter[XdsType.all().length];
    private final AtomicInteger[][] clients = new AtomicInteger[XdsType.all().length][2];
    private final AtomicInteger[] resources = new AtomicInteger[XdsType.all().length];
    private final AtomicInteger streams = new AtomicInteger();
    private final AtomicInteger skippedNow = new AtomicInteger();
    private final Map<String, Counter> skipped = new ConcurrentHashMap<>();
    private final Timer apply;
    private final Counter ingressTranslations;
    private final AtomicInteger ingressUnavailable = new AtomicInteger();

    XdsMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (XdsType t : XdsType.all()) {
            int i = t.ordinal();
            for (XdsStream.Mode m : XdsStream.Mode.values()) {
                int j = m.ordinal();
                pushes[i][j] = Counter.builder("meshbridge.xds.pushes")
                        .description("xDS responses sent")
                        .tag("type", t.shortName())
                        .tag("protocol", m.tag())
                        .register(registry);
                bytes[i][j] = Counter.builder("meshbridge.xds.push.bytes")
                        .description("serialized bytes of xDS responses sent")
                        .baseUnit("bytes")
                        .tag("type", t.shortName())
                        .tag("protocol", m.tag())
                        .register(registry);
                clients[i][j] = new AtomicInteger();
                Gauge.builder("meshbridge.xds.clients", clients[i][j], AtomicInteger::get)
                        .description("xDS streams subscribed to a type")
                        .tag("type", t.shortName())
                        .tag("protocol", m.tag())
                        .register(registry);
            }
            nacks[i] = Counter.builder("meshbridge.xds.nacks")
                    .description("xDS responses rejected by clients")
                    .tag("type", t.shortName())
                    .register(registry);
            resources[i] = new AtomicInteger();
            Gauge.builder("meshbridge.xds.resources", resources[i], AtomicInteger::get)
                    .description("xDS resources served")
                    .tag("type", t.shortName())
                    .register(registry);
        }
        Gauge.builder("meshbridge.xds.streams", streams, AtomicInteger::get)
                .description("open xDS streams")
                .register(registry);
        Gauge.builder("meshbridge.xds.skipped.current", skippedNow, AtomicInteger::get)
                .description("endpoints and resources currently left out because Envoy would refuse them")
                .register(registry);
        apply = Timer.builder("meshbridge.xds.snapshot.apply")
                .description("translating and indexing one catalog snapshot")
                .register(registry);
        ingressTranslations = Counter.builder("meshbridge.xds.ingress.translations")
                .description("translations of the Ingress routes into Envoy resources")
                .register(registry);
        Gauge.builder("meshbridge.xds.ingress.unavailable", ingressUnavailable, AtomicInteger::get)
                .description("destinations of served Ingress routes that answer 503")
                .register(registry);
    }

    void ingressTranslated(int unavailable) {
        ingressTranslations.increment();
        ingressUnavailable.set(unavailable);
    }

    void pushed(XdsType type, XdsStream.Mode mode, int size) {
        pushes[type.ordinal()][mode.ordinal()].increment();
        bytes[type.ordinal()][mode.ordinal()].increment(size);
    }

    void nack(XdsType type) {
        nacks[type.ordinal()].increment();
    }

    void streamOpened(XdsStream st) {
        streams.incrementAndGet();
    }

    void typeRequested(XdsStream st, XdsType type) {
        clients[type.ordinal()][st.mode.ordinal()].incrementAndGet();
    }

    void streamClosed(XdsStream st) {
        streams.decrementAndGet();
        for (XdsType t : XdsType.all()) {
            TypeState ts = st.state(t);
            if (ts != null && ts.requested) clients[t.ordinal()][st.mode.ordinal()].decrementAndGet();
        }
    }

    void skipped(String reason) {
        skipped.computeIfAbsent(
                        reason,
                        r -> Counter.builder("meshbridge.xds.skipped")
                                .description("endpoints or resources left out because Envoy would refuse them")
                                .tag("reason", r)
                                .register(registry))
                .increment();
    }

    void applied(ResourceIndex index, int skippedCount, long nanos) {
        for (XdsType t : XdsType.all()) resources[t.ordinal()].set(index.type(t).size());
        skippedNow.set(skippedCount);
        apply.record(nanos, TimeUnit.NANOSECONDS);
    }
}
