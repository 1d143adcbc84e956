package dev.meshbridge.ingress;

import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteConflict;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.WeightedDestination;
import dev.meshbridge.core.util.Hash64;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The {@code /debug/ingress} page: the served routes, TLS hosts (with a fingerprint, never the key), conflicts,
 * current issues per Ingress, refused files of the directory source, and the registries from the McpBridge. {@code ?ingress=ns/name} or {@code ?host=h}
 * narrows the routes.
 */
final class IngressDebug implements DebugSource {

    private final RouteTablePublisher publisher;
    private final IssueTracker issues;
    private final Supplier<Optional<List<RegistryConfig>>> mcpBridge;
    private final Supplier<Map<Path, List<String>>> refusedFiles;

    IngressDebug(
            RouteTablePublisher publisher,
            IssueTracker issues,
            Supplier<Optional<List<RegistryConfig>>> mcpBridge,
            Supplier<Map<Path, List<String>>> refusedFiles) {
        this.publisher = publisher;
        this.issues = issues;
        this.mcpBridge = mcpBridge;
        this.refusedFiles = refusedFiles;
    }

    @Override
    public String name() {
        return "ingress";
    }

    @Override
    public String description() {
        return "routes from Ingresses: version, routes, TLS hosts, conflicts, issues per Ingress";
    }

    @Override
    public Object debug(Map<String, String> query) {
        RouteTable table = publisher.current();
        String ingress = query.get("ingress");
        String host = query.get("host");
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("version", table.version());
        out.put("published", publisher.synced());
        List<Object> routes = new ArrayList<>();
        for (HttpRoute r : table.servedRoutes()) {
            if (ingress != null && !r.owner().key().equals(ingress)) continue;
            if (host != null && !r.match().host().equals(host)) continue;
            routes.add(route(r, table.defaultBackend().map(d -> d == r).orElse(false)));
        }
        out.put("routes", routes);
        List<Object> tls = new ArrayList<>();
        for (Map.Entry<String, TlsEntry> e : table.tls().entrySet()) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("host", e.getKey().isEmpty() ? "*" : e.getKey());
            t.put("ingress", e.getValue().owner().key());
            t.put("secret", e.getValue().secret().toString());
            t.put(
                    "certificate",
                    e.getValue()
                            .material()
                            .map(m -> Hash64.toHex(m.fingerprint()))
                            .orElse("missing"));
            tls.add(t);
        }
        out.put("tls", tls);
        out.put(
                "conflicts",
                table.conflicts().stream().map(RouteConflict::message).toList());
        Map<String, Object> byIngress = new LinkedHashMap<>();
        issues.issues()
                .forEach((ref, list) -> byIngress.put(
                        ref.source() + ":" + ref.key(),
                        list.stream().map(i -> i.reason() + ": " + i.message()).toList()));
        out.put("issues", byIngress);
        Map<String, Object> files = new LinkedHashMap<>();
        refusedFiles.get().forEach((file, problems) -> files.put(file.toString(), problems));
        if (!files.isEmpty()) out.put("refusedFiles", files);
        mcpBridge
                .get()
                .ifPresent(list -> out.put(
                        "mcpBridgeRegistries",
                        list.stream().map(c -> c.type() + ":" + c.name()).toList()));
        return out;
    }

    private static Map<String, Object> route(HttpRoute r, boolean defaultBackend) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ingress", r.owner().source() + ":" + r.owner().key());
        m.put("match", defaultBackend ? "default backend" : r.match().toString());
        List<Object> ds = new ArrayList<>();
        for (WeightedDestination wd : r.destinations()) {
            Map<String, Object> d = new LinkedHashMap<>();
            switch (wd.destination()) {
                case RegistryDestination rd -> {
                    d.put("registryService", rd.host());
                    if (rd.port() > 0) d.put("port", rd.port());
                    if (!rd.subset().isEmpty()) d.put("subset", rd.subset());
                    if (!rd.subsetLabels().isEmpty()) d.put("subsetLabels", rd.subsetLabels());
                }
                case KubernetesServiceDestination kd -> {
                    d.put("kubernetesService", kd.host());
                    d.put("port", kd.port() > 0 ? kd.port() : kd.portName());
                }
            }
            d.put("weight", wd.weight());
            ds.add(d);
        }
        m.put("destinations", ds);
        r.rewrite().ifPresent(w -> m.put("rewrite", w.toString()));
        return m;
    }
}
