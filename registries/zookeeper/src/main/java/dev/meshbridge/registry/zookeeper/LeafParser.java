package dev.meshbridge.registry.zookeeper;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.core.dubbo.DubboEndpoints;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.dubbo.DubboUrl;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.util.Hash64;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns leaf znodes into {@link Leaf}s: Dubbo provider URLs (the znode name), curator x-discovery instances (the znode
 * data, read as plain JSON because the payload's {@code @class} names a type this process does not have) and Dubbo's
 * interface-to-application mapping. A malformed leaf is reported once on the {@link RegistryStatus} and becomes
 * {@link Leaf.Unusable#MALFORMED}; nothing here throws.
 */
final class LeafParser {

    /** The metadata key Spring Cloud ZooKeeper uses for an instance's status. */
    static final String SPRING_STATUS_KEY = "instance_status";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String DUBBO_REVISION_KEY = "dubbo.metadata.revision";

    /** The most strings {@link #share} keeps before it starts again. */
    static final int SHARED_MAX = 1 << 16;

    private final RegistryStatus status;
    private final HashMap<String, String> shared = new HashMap<>();

    LeafParser(RegistryStatus status) {
        this.status = status;
    }

    /** A provider znode under {@code .../providers}: its name is the URL-encoded provider URL. */
    Leaf provider(String path, String name) {
        DubboUrl url;
        try {
            url = DubboUrl.parseEncoded(name);
        } catch (IllegalArgumentException e) {
            return malformed(path, "provider URL: " + e.getMessage());
        }
        if (url.protocol().equals("empty")) return Leaf.Unusable.IGNORED;
        if (!url.category().equals("providers")) {
            return malformed(path, "category '" + url.category() + "' under providers");
        }
        if (url.side().equals("consumer")) return malformed(path, "a consumer URL under providers");
        if (url.host().isEmpty() || url.host().equals("0.0.0.0") || url.port() == 0) {
            return malformed(path, "provider URL has no routable host:port");
        }
        String portName = DubboNaming.portName(url.protocol());
        if (!Dns1123.isLabel(portName)) {
            return malformed(path, "protocol '" + url.protocol() + "' gives no valid port name");
        }
        Map<String, String> params = url.parameters();
        try {
            Labels.Result labels = DubboNaming.labels(params);
            report(path, labels);
            Endpoint endpoint = DubboNaming.endpoint(url.host(), share(portName), url.port(), params, interned(labels))
                    .build();
            String clamped = DubboNaming.weightOutOfRange(params);
            if (clamped != null) status.adjusted(path, clamped);
            return new Leaf.DubboProvider(
                    share(url.version()),
                    share(url.group()),
                    share(url.application()),
                    share(portName),
                    DubboNaming.protocol(url.protocol()),
                    parseLong(params.get("timestamp")),
                    endpoint,
                    Hash64.of(name),
                    ruleParams(params));
        } catch (IllegalArgumentException e) {
            return malformed(path, e.getMessage());
        }
    }

    /** Parameters too bulky or too per-process for an override rule to test: not kept. */
    private static final java.util.Set<String> NOT_RULE_PARAMS =
            java.util.Set.of("methods", "pid", "timestamp", "interface", "anyhost", "generic", "bean.name");

    /** The parameters kept for override rules: compact, keys and values shared (they repeat across providers). */
    private Map<String, String> ruleParams(Map<String, String> params) {
        TreeMap<String, String> kept = new TreeMap<>();
        params.forEach((k, v) -> {
            if (!NOT_RULE_PARAMS.contains(k) && !k.startsWith(DubboUrl.DEFAULT_PREFIX)) kept.put(share(k), share(v));
        });
        return dev.meshbridge.core.util.CompactSortedMap.copyOf(kept);
    }

    /** An x-discovery instance znode: curator's {@code ServiceInstance} JSON. */
    Leaf instance(String path, byte[] data) {
        if (data == null || data.length == 0) return malformed(path, "instance znode has no data");
        JsonNode root;
        try {
            root = JSON.readTree(data);
        } catch (IOException e) {
            return malformed(path, "instance data is not JSON: " + firstLine(e));
        }
        if (root == null || !root.isObject()) return malformed(path, "instance data is not a JSON object");
        try {
            String address = root.path("address").asText("").trim();
            if (address.isEmpty()) return malformed(path, "instance has no address");
            Integer port = port(root, "port");
            Integer sslPort = port(root, "sslPort");
            boolean enabled = root.path("enabled").asBoolean(true);
            long registeredAt = root.path("registrationTimeUTC").asLong(0);
            Map<String, String> metadata = metadata(root.path("payload").path("metadata"));
            boolean dubbo =
                    metadata.containsKey(DubboEndpoints.METADATA_KEY) || metadata.containsKey(DUBBO_REVISION_KEY);
            return dubbo
                    ? dubboInstance(path, address, port, enabled, registeredAt, metadata)
                    : springInstance(path, address, port, sslPort, enabled, registeredAt, metadata);
        } catch (IllegalArgumentException e) {
            return malformed(path, e.getMessage());
        }
    }

    private Leaf dubboInstance(
            String path, String address, Integer port, boolean enabled, long registeredAt, Map<String, String> meta) {
        List<DubboEndpoints.ProtocolPort> ports;
        String endpointsJson = meta.get(DubboEndpoints.METADATA_KEY);
        if (endpointsJson != null) {
            ports = DubboEndpoints.parse(endpointsJson);
            if (ports.isEmpty()) return malformed(path, "dubbo.endpoints lists no port");
        } else if (port != null) {
            ports = List.of(new DubboEndpoints.ProtocolPort("dubbo", port));
        } else {
            return malformed(path, "Dubbo instance has neither dubbo.endpoints nor a port");
        }
        Endpoint.Builder b = Endpoint.builder(address);
        Map<String, Protocol> protocols = new TreeMap<>();
        for (DubboEndpoints.ProtocolPort p : ports) {
            String name = DubboNaming.portName(p.protocol());
            if (!Dns1123.isLabel(name))
                return malformed(path, "protocol '" + p.protocol() + "' gives no valid port name");
            if (protocols.putIfAbsent(share(name), DubboNaming.protocol(p.protocol())) == null)
                b.port(share(name), p.port());
        }
        Map<String, String> labelSource = new LinkedHashMap<>();
        meta.forEach((k, v) -> {
            if (!k.equals(DubboEndpoints.METADATA_KEY) && !k.startsWith("dubbo.metadata-service."))
                labelSource.put(k, v);
        });
        Labels.Result labels = DubboNaming.labels(labelSource);
        report(path, labels);
        String clamped = DubboNaming.weightOutOfRange(meta);
        if (clamped != null) status.adjusted(path, clamped);
        Endpoint endpoint = b.weight(DubboNaming.weight(meta))
                .enabled(enabled && DubboNaming.enabled(meta))
                .health(Health.HEALTHY)
                .labels(interned(labels).labels())
                .build();
        return new Leaf.Instance(true, protocols, registeredAt, endpoint, Hash64.of(path));
    }

    private Leaf springInstance(
            String path,
            String address,
            Integer port,
            Integer sslPort,
            boolean enabled,
            long registeredAt,
            Map<String, String> meta) {
        Endpoint.Builder b = Endpoint.builder(address);
        Map<String, Protocol> protocols = new TreeMap<>();
        if (sslPort != null) {
            // Spring's ZookeeperServiceInstance: an instance with an sslPort is secure and is called there only
            b.port(Protocol.HTTPS.portName(), sslPort);
            protocols.put(Protocol.HTTPS.portName(), Protocol.HTTPS);
        } else if (port != null) {
            Protocol protocol = Protocol.parse(meta.get("protocol")).orElse(Protocol.HTTP);
            b.port(protocol.portName(), port);
            protocols.put(protocol.portName(), protocol);
        }
        if (protocols.isEmpty()) return malformed(path, "instance has neither port nor sslPort");
        Labels.Result labels = Labels.sanitize(meta);
        report(path, labels);
        Endpoint endpoint = b.enabled(enabled)
                .health(springHealth(meta.get(SPRING_STATUS_KEY)))
                .labels(interned(labels).labels())
                .build();
        return new Leaf.Instance(false, protocols, registeredAt, endpoint, Hash64.of(path));
    }

    /**
     * Spring Cloud ZooKeeper's {@code instance_status}, as its load balancer ({@code
     * ZookeeperServiceInstanceListSupplier}) reads it: a blank status or {@code UP} (any case) gets traffic, anything
     * else does not; {@code OUT_OF_SERVICE} is shown as draining, every other status as unhealthy.
     */
    static Health springHealth(String instanceStatus) {
        if (instanceStatus == null || instanceStatus.isBlank()) return Health.HEALTHY;
        String s = instanceStatus.trim();
        if (s.equalsIgnoreCase("UP")) return Health.HEALTHY;
        return s.equalsIgnoreCase("OUT_OF_SERVICE") ? Health.DRAINING : Health.UNHEALTHY;
    }

    /** The applications of {@code <root>/mapping/<interface>}: its data, comma-separated. */
    static List<String> mappingApps(byte[] data) {
        if (data == null) return List.of();
        List<String> apps = new ArrayList<>();
        for (String s : new String(data, StandardCharsets.UTF_8).split(",")) {
            String app = s.trim();
            if (!app.isEmpty() && !apps.contains(app)) apps.add(app.intern());
        }
        return List.copyOf(apps);
    }

    private static Integer port(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return null;
        int p;
        if (n.isIntegralNumber() && n.canConvertToInt()) {
            p = n.intValue();
        } else if (n.isTextual()) {
            try {
                p = Integer.parseInt(n.textValue().trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(field + " '" + n.textValue() + "' is not a number");
            }
        } else {
            throw new IllegalArgumentException(field + " " + n + " is not a port number");
        }
        if (p < 1 || p > 65535) throw new IllegalArgumentException(field + " " + p + " is out of 1..65535");
        return p;
    }

    private static Map<String, String> metadata(JsonNode node) {
        if (!node.isObject()) return Map.of();
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isValueNode() && !e.getValue().isNull())
                out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    /** The same labels with keys and values shared: the same few keys and values repeat on every endpoint. */
    private Labels.Result interned(Labels.Result labels) {
        TreeMap<String, String> m = new TreeMap<>();
        labels.labels().forEach((k, v) -> m.put(share(k), share(v)));
        return new Labels.Result(m, labels.dropped());
    }

    /**
     * An equal string seen before, or {@code s}, which is then kept: the keys and values of parameters and labels,
     * versions, applications and port names repeat across providers, and a million endpoints each holding its own copies
     * would cost hundreds of megabytes. The table is this parser's own (the catalog's owner thread is its only user)
     * rather than {@link String#intern}: about 40 strings per provider, and each {@code intern} is a call into the
     * VM's string table that cost more than parsing the URL. Bounded: emptied when it holds {@link #SHARED_MAX}
     * strings, which only means an equal copy may be kept twice.
     */
    private String share(String s) {
        String seen = shared.putIfAbsent(s, s);
        if (seen != null) return seen;
        if (shared.size() >= SHARED_MAX) shared.clear();
        return s;
    }

    /** How many strings {@link #share} holds now. */
    int sharedCount() {
        return shared.size();
    }

    private void report(String path, Labels.Result labels) {
        if (!labels.dropped().isEmpty()) status.droppedLabels(path, labels.dropped());
    }

    private Leaf malformed(String path, String reason) {
        status.skipped(path, reason);
        return Leaf.Unusable.MALFORMED;
    }

    private static long parseLong(String s) {
        if (s == null) return 0;
        try {
            return Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static String firstLine(IOException e) {
        String m = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
        if (m == null) return e.getClass().getSimpleName();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
