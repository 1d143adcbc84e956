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
 * The xDS producer's own meters; the protocol's ({@code meshbridge.xds.pushes}, {@code push.bytes}, {@code push.size},
 * {@code nacks}, {@code acks}, {@code clients}, {@code streams}, {@code resources}, {@code holding}) are the ADS
 * engine's, in the vocabulary both servers share (see the ads module's README):
 *
 * <ul>
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
    private final AtomicInteger skippedNow = new AtomicInteger();
    private final Map<String, Counter> skipped = new ConcurrentHashMap<>();
    private final Timer apply;
    private final Counter ingressTranslations;
    private final AtomicInteger ingressUnavailable = new AtomicInteger();

    XdsMetrics(MeterRegistry registry) {
        this.registry = registry;
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

    void skipped(String reason) {
        skipped.computeIfAbsent(
                        reason,
                        r -> Counter.builder("meshbridge.xds.skipped")
                                .description("endpoints or resources left out because Envoy would refuse them")
                                .tag("reason", r)
                                .register(registry))
                .increment();
    }

    void applied(int skippedCount, long nanos) {
        skippedNow.set(skippedCount);
        apply.record(nanos, TimeUnit.NANOSECONDS);
    }
}
