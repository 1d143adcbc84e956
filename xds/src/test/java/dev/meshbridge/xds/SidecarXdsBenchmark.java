package dev.meshbridge.xds;

import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a catalog change costs a sidecar: the bytes of the outbound route configurations a change re-sends, and the
 * CPU of making them again, printed (never asserted). Run with {@code ./mvnw -q -pl xds -am verify -Dgroups=benchmark
 * -DexcludedGroups=none -Dtest=SidecarXdsBenchmark -Dsurefire.failIfNoSpecifiedTests=false}; the figures land in
 * {@code xds/target/surefire-reports/dev.meshbridge.xds.SidecarXdsBenchmark-output.txt}.
 *
 * <p>Load: 10,000 services: 6,000 Spring Cloud style HTTP services (port 80, hosts {@code svc-<i>.services.zookeeper}),
 * 2,000 Dubbo applications on Triple (port 50051, {@code app-<i>.dubbo}) and 2,000 Dubbo interfaces (port 20880,
 * {@code org.demo.service<i>.v-1-0-0.dubbo}, version 1.0.0). Sidecar listeners: the catch-all HTTP listener 15001,
 * per-port listeners 80 and 50051, the Dubbo listener 20880. A change is what the server sends when one service
 * appears: every resource whose version changed, by its serialized size (what a Delta response carries, plus about
 * 30 bytes of framing per resource; SotW sends the same for RDS and DRDS).
 */
@Tag("benchmark")
class SidecarXdsBenchmark {

    private static final int HTTP = 6_000;
    private static final int TRIPLE = 2_000;
    private static final int DUBBO = 2_000;

    private static final SidecarOptions OPTIONS =
            new SidecarOptions(true, "0.0.0.0", 15001, List.of(80, 50051), 20880, List.of());

    private static EnvoySidecarTranslator.Entry http(int i) {
        return new EnvoySidecarTranslator.Entry(
                "svc-" + i + ".services.zookeeper", List.of(new ServicePort("http", 80, Protocol.HTTP)), List.of());
    }

    private static EnvoySidecarTranslator.Entry triple(int i) {
        return new EnvoySidecarTranslator.Entry(
                "app-" + i + ".dubbo", List.of(new ServicePort("tri", 50051, Protocol.TRIPLE)), List.of());
    }

    private static EnvoySidecarTranslator.Entry dubbo(int i) {
        return new EnvoySidecarTranslator.Entry(
                "org.demo.service" + i + ".v-1-0-0.dubbo",
                List.of(new ServicePort("dubbo", 20880, Protocol.DUBBO)),
                List.of(new EnvoySidecarTranslator.DubboId("org.demo.Service" + i, "1.0.0", "")));
    }

    @Test
    void bytesAndCpuPerChange() {
        SortedMap<String, EnvoySidecarTranslator.Entry> entries = new TreeMap<>();
        for (int i = 0; i < HTTP; i++) put(entries, http(i));
        for (int i = 0; i < TRIPLE; i++) put(entries, triple(i));
        for (int i = 0; i < DUBBO; i++) put(entries, dubbo(i));
        EnvoySidecarTranslator translator = new EnvoySidecarTranslator(new EnvoyTranslator(), OPTIONS);

        SidecarResources before = translator.translate(entries);
        System.out.println("resources for " + entries.size() + " services:");
        for (XdsResource r : before.resources())
            System.out.printf("  %-5s %-16s %,10d B%n", r.type().shortName(), r.name(), r.size());

        change("a new HTTP service (port 80)", translator, entries, http(HTTP + 1));
        change("a new Triple application (port 50051)", translator, entries, triple(TRIPLE + 1));
        change("a new Dubbo interface (port 20880)", translator, entries, dubbo(DUBBO + 1));
        System.out.println("an endpoint change: 0 B of LDS, RDS and DRDS (only the service's ClusterLoadAssignment;"
                + " the entries do not change, nothing is translated)");

        // CPU of one translation of the whole sidecar set at this size (what a service appearing costs the server)
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] cpu = new long[30];
        long[] alloc = new long[30];
        for (int i = 0; i < cpu.length; i++) {
            long t0 = threads.getCurrentThreadCpuTime();
            long a0 = threads.getCurrentThreadAllocatedBytes();
            translator.translate(entries);
            cpu[i] = threads.getCurrentThreadCpuTime() - t0;
            alloc[i] = threads.getCurrentThreadAllocatedBytes() - a0;
        }
        Arrays.sort(cpu);
        Arrays.sort(alloc);
        System.out.printf(
                "one sidecar translation at %,d services: CPU p50 %.1f ms, p90 %.1f ms; allocated p50 %.1f MB%n",
                entries.size(), cpu[15] / 1e6, cpu[27] / 1e6, alloc[15] / 1e6);
    }

    private static void put(Map<String, EnvoySidecarTranslator.Entry> m, EnvoySidecarTranslator.Entry e) {
        m.put(e.host(), e);
    }

    private static void change(
            String what,
            EnvoySidecarTranslator translator,
            SortedMap<String, EnvoySidecarTranslator.Entry> entries,
            EnvoySidecarTranslator.Entry added) {
        SidecarResources before = translator.translate(entries);
        put(entries, added);
        SidecarResources after = translator.translate(entries);
        Map<String, Long> was = new HashMap<>();
        for (XdsResource r : before.resources()) was.put(r.type() + r.name(), r.versionHash());
        long bytes = 0;
        List<String> changed = new ArrayList<>();
        for (XdsResource r : after.resources()) {
            Long v = was.get(r.type() + r.name());
            if (v == null || v != r.versionHash()) {
                bytes += r.size();
                changed.add(r.type().shortName() + " " + r.name() + " (" + String.format("%,d", r.size()) + " B)");
            }
        }
        System.out.printf("%s: %,d B re-sent per sidecar: %s%n", what, bytes, changed);
        entries.remove(added.host());
    }
}
