package dev.meshbridge.ingress;

import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.RouteTable;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Figures for the Ingress path: translating Ingresses, merging route tables, parsing a directory file, and the time
 * from an Ingress written to the API server (fabric8's mock server, in-process) to the route table that holds it.
 * Prints its figures; not part of {@code verify}.
 */
@Tag("benchmark")
@EnableKubernetesMockClient(crud = true, https = false)
class IngressBenchmark {

    KubernetesClient client;
    KubernetesMockServer server;

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private static String ingressYaml(int i) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: app-%1$d
                  namespace: ns-%2$d
                  creationTimestamp: "2024-05-01T00:00:00Z"
                  annotations:
                    higress.io/destination: |
                      90%% app-%1$d.dubbo:20880
                      10%% app-%1$d-canary.dubbo:20880
                spec:
                  ingressClassName: meshbridge
                  tls: [{hosts: [app-%1$d.example.com], secretName: app-%1$d-tls}]
                  rules:
                  - host: app-%1$d.example.com
                    http:
                      paths:
                      - {path: /api, pathType: Prefix, backend: {resource: {apiGroup: networking.higress.io, kind: McpBridge, name: default}}}
                      - {path: /v2/api, pathType: Prefix, backend: {resource: {apiGroup: networking.higress.io, kind: McpBridge, name: default}}}
                      - {path: /health, pathType: Exact, backend: {service: {name: health, port: {number: 8080}}}}
                """.formatted(i, i % 50);
    }

    @Test
    void translateAndMerge() {
        IngressTranslator translator = new IngressTranslator("kubernetes", "cluster.local");
        for (int n : new int[] {1_000, 10_000}) {
            List<Ingress> ingresses = new ArrayList<>();
            for (int i = 0; i < n; i++) ingresses.add(SERIALIZATION.unmarshal(ingressYaml(i), Ingress.class));
            long[] translate = new long[7];
            long[] merge = new long[7];
            RouteTable table = null;
            for (int round = 0; round < translate.length; round++) {
                long t0 = System.nanoTime();
                List<IngressRoutes> contributions = new ArrayList<>(n);
                for (Ingress ing : ingresses)
                    contributions.add(translator.translate(ing).routes().orElseThrow());
                long t1 = System.nanoTime();
                table = RouteTable.merge(contributions);
                long t2 = System.nanoTime();
                translate[round] = t1 - t0;
                merge[round] = t2 - t1;
            }
            System.out.printf(
                    "ingresses=%d routes=%d: translate all %.1f ms (%.1f us/Ingress), merge + version %.1f ms (median of %d)%n",
                    n,
                    table.routes().size(),
                    median(translate) / 1e6,
                    median(translate) / 1e3 / n,
                    median(merge) / 1e6,
                    translate.length);
        }
    }

    @Test
    void directoryFileParse() throws Exception {
        int n = 1_000;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(ingressYaml(i)).append("---\n");
        String text = sb.toString();
        IngressTranslator translator = new IngressTranslator("directory", "cluster.local");
        long[] times = new long[7];
        for (int round = 0; round < times.length; round++) {
            long t0 = System.nanoTime();
            ManifestFile.parse("bench.yaml", text, translator);
            times[round] = System.nanoTime() - t0;
        }
        System.out.printf(
                "directory file of %d Ingresses (%d KB): parse + check %.1f ms (median of %d)%n",
                n, text.length() / 1024, median(times) / 1e6, times.length);
    }

    @Test
    void apiServerWriteToRouteTable() throws Exception {
        IngressOptions options = TestOptions.parse("ingress:\n  kubernetes: {enabled: true}\n");
        try (IngressController controller =
                new IngressController(options, client, new SimpleMeterRegistry(), Map.of(), r -> {}, () -> true)) {
            java.util.concurrent.BlockingQueue<RouteTable> tables = new java.util.concurrent.LinkedBlockingQueue<>();
            controller.routes().addListener(tables::add);
            controller.start();
            tables.take();
            int n = 200;
            long[] latency = new long[n];
            for (int i = 0; i < n; i++) {
                Ingress ing = SERIALIZATION.unmarshal(
                        Manifests.registryIngress("bench", "app-" + i, "app-" + i + ".example.com", "/", "app.dubbo"),
                        Ingress.class);
                long t0 = System.nanoTime();
                client.resource(ing).create();
                int expected = i + 1;
                while (true) {
                    RouteTable t = tables.poll(10, java.util.concurrent.TimeUnit.SECONDS);
                    if (t == null) throw new AssertionError("no route table for Ingress " + i);
                    if (t.routes().size() == expected) break;
                }
                latency[i] = System.nanoTime() - t0;
            }
            Arrays.sort(latency);
            System.out.printf(
                    "Ingress created on the API server -> route table published (%d Ingresses, mock API server"
                            + " in-process): p50 %.2f ms, p99 %.2f ms, max %.2f ms%n",
                    n, latency[n / 2] / 1e6, latency[n * 99 / 100] / 1e6, latency[n - 1] / 1e6);
        }
    }

    private static double median(long[] values) {
        long[] copy = values.clone();
        Arrays.sort(copy);
        return copy[copy.length / 2];
    }
}
