package dev.meshbridge.registry.consul;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.watch.Duplicates;
import dev.meshbridge.core.watch.ServicePorts;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.kiwiproject.consul.model.catalog.ServiceWeights;
import org.kiwiproject.consul.model.health.HealthCheck;
import org.kiwiproject.consul.model.health.Service;
import org.kiwiproject.consul.model.health.ServiceHealth;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns Consul's health entries of one service into the bridge's model. Pure apart from reporting skipped items and
 * dropped labels; safe to call from several threads.
 *
 * <p>Mapping, per health entry (one instance on one node):
 *
 * <ol>
 *   <li>instances without a configured tag are left out ({@link ServiceFilter});
 *   <li>address: the service address, else the node address; an instance with neither, or with a port outside
 *       1..65535, is skipped and reported; a host name is resolved by the watcher kit
 *       ({@link dev.meshbridge.core.watch.ShardPublisher});
 *   <li>two instances with the same address and port are one endpoint, by the {@link Duplicates} rule: a passing
 *       instance beats a critical or maintenance one (Consul gives no registration time, so then the first by
 *       instance id and node); the other is reported;
 *   <li>protocol: service meta {@code protocol} (as in Higress), else {@code https} when the tag or meta {@code
 *       secure=true} (Spring Cloud Consul) is present, else the configured default; the port is named after it;
 *   <li>health: the aggregate of the node's and the service's checks: maintenance mode ({@code
 *       _node_maintenance}, {@code _service_maintenance:*}) is draining, any {@code critical} check is unhealthy,
 *       any {@code warning} follows {@link ConsulOptions.WarningHealth}, otherwise (or with no checks) healthy;
 *   <li>weight: Consul's {@code Weights.Passing} (or {@code Weights.Warning} for a warning instance) times {@link
 *       Endpoint#DEFAULT_WEIGHT}, so Consul's default weight of 1 is an ordinary instance; no weights means 1;
 *   <li>labels: tags {@code key=value} become a label, bare tags follow {@link ConsulOptions.BareTags}, then service
 *       meta is added (meta wins on the same key); all sanitized, dropped ones reported;
 *   <li>locality: region is the datacenter, zone the service meta named by {@code zoneMetaKey}.
 * </ol>
 */
final class ConsulServiceMapper {

    private static final Logger log = LoggerFactory.getLogger(ConsulServiceMapper.class);

    static final String TYPE = "consul";
    private static final String NODE_MAINTENANCE = "_node_maintenance";
    private static final String SERVICE_MAINTENANCE = "_service_maintenance:";

    private final RegistryConfig config;
    private final ConsulOptions options;
    private final ServiceFilter filter;
    private final RegistryStatus status;
    private final Set<String> warnedProtocols = ConcurrentHashMap.newKeySet();

    ConsulServiceMapper(RegistryConfig config, ConsulOptions options, RegistryStatus status) {
        this.config = config;
        this.options = options;
        this.filter = new ServiceFilter(options);
        this.status = status;
    }

    ServiceFilter filter() {
        return filter;
    }

    /** The shard of one service: the datacenter is the key's namespace. */
    ServiceKey key(String datacenter, String service) {
        return new ServiceKey(TYPE, config.name(), datacenter, "", service, "");
    }

    /**
     * The mesh host of a service.
     *
     * @throws IllegalArgumentException when the template gives no valid host for this name
     */
    String host(String datacenter, String service) {
        Map<String, String> values = new HashMap<>();
        values.put("service", service);
        values.put("datacenter", datacenter);
        values.put("namespace", options.namespace());
        values.put("partition", options.partition());
        values.put("registry", config.name());
        return options.hostTemplate().render(values);
    }

    /** The full endpoint list of one service (empty when no instance is usable). */
    ServiceUpsert map(ServiceKey key, String host, List<ServiceHealth> entries) {
        List<ServiceHealth> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparing((ServiceHealth e) -> e.getService().getId())
                .thenComparing(e -> e.getNode().getNode()));
        List<Duplicates.Candidate> candidates = new ArrayList<>();
        Map<String, Protocol> protocols = new HashMap<>();
        for (ServiceHealth entry : sorted) {
            Service s = entry.getService();
            String item = key.namespace() + "/" + key.name() + "/" + s.getId() + "@"
                    + entry.getNode().getNode();
            if (!filter.acceptsInstance(s.getTags())) continue;
            String address = blankToNull(s.getAddress());
            if (address == null) address = blankToNull(entry.getNode().getAddress());
            if (address == null) {
                status.skipped(item, "neither the service nor its node has an address");
                continue;
            }
            int port = s.getPort();
            if (port < 1 || port > 65535) {
                status.skipped(item, "port " + port + " is out of 1..65535");
                continue;
            }
            Map<String, String> meta = s.getMeta() == null ? Map.of() : s.getMeta();
            Protocol protocol = protocol(key, s, meta);
            String portName = protocol.portName();
            Labels.Result labels = labels(s.getTags(), meta);
            if (!labels.dropped().isEmpty()) status.droppedLabels(item, labels.dropped());
            String zone = options.zoneMetaKey().isEmpty() ? "" : meta.getOrDefault(options.zoneMetaKey(), "");
            Health health = health(entry.getChecks());
            Endpoint endpoint = Endpoint.builder(address)
                    .port(portName, port)
                    .health(health)
                    .weight(weight(s.getWeights(), entry.getChecks()))
                    .labels(labels.labels())
                    .locality(Locality.of(key.namespace(), zone))
                    .build();
            candidates.add(new Duplicates.Candidate(endpoint, 0, item));
            protocols.merge(portName, protocol, (a, b) -> a.compareTo(b) <= 0 ? a : b);
        }
        Duplicates.Result picked = Duplicates.pick(candidates);
        for (Duplicates.Dropped d : picked.dropped()) status.skipped(d.dropped().id(), d.reason());
        return new ServiceUpsert(
                key, host, ServicePorts.of(config, picked.endpoints(), protocols::get), picked.endpoints());
    }

    private Protocol protocol(ServiceKey key, Service s, Map<String, String> meta) {
        String named = meta.get("protocol");
        if (named != null && !named.isBlank()) {
            Optional<Protocol> p = Protocol.parse(named);
            if (p.isPresent()) return p.get();
            if (warnedProtocols.add(key + "\n" + named)) {
                log.warn(
                        "registry={} service={} meta protocol={} is not a known protocol; using {}",
                        config.name(),
                        key,
                        named,
                        options.defaultProtocol().portName());
            }
            return options.defaultProtocol();
        }
        if ("true".equalsIgnoreCase(meta.get("secure")) || s.getTags().contains("secure=true")) return Protocol.HTTPS;
        return options.defaultProtocol();
    }

    Labels.Result labels(List<String> tags, Map<String, String> meta) {
        Map<String, String> raw = new LinkedHashMap<>();
        for (String tag : tags) {
            if (tag == null || tag.isBlank()) continue;
            int eq = tag.indexOf('=');
            if (eq > 0) {
                raw.put(tag.substring(0, eq).trim(), tag.substring(eq + 1).trim());
            } else if (eq < 0 && options.bareTags() == ConsulOptions.BareTags.LABEL) {
                raw.put(tag.trim(), "true");
            }
        }
        raw.putAll(meta);
        return Labels.sanitize(raw);
    }

    /** Consul's aggregate status of an instance's checks, in the bridge's terms. */
    Health health(List<HealthCheck> checks) {
        String aggregate = aggregate(checks);
        return switch (aggregate) {
            case "maintenance" -> Health.DRAINING;
            case "critical" -> Health.UNHEALTHY;
            case "warning" ->
                options.warning() == ConsulOptions.WarningHealth.HEALTHY ? Health.HEALTHY : Health.UNHEALTHY;
            default -> Health.HEALTHY;
        };
    }

    private int weight(Optional<ServiceWeights> weights, List<HealthCheck> checks) {
        int passing = weights.map(ServiceWeights::getPassing).orElse(1);
        int warning = weights.map(ServiceWeights::getWarning).orElse(1);
        boolean warn = "warning".equals(aggregate(checks)) && options.warning() == ConsulOptions.WarningHealth.HEALTHY;
        long w = (long) (warn ? warning : Math.max(1, passing)) * Endpoint.DEFAULT_WEIGHT;
        return (int) Math.max(0, Math.min(Endpoint.MAX_WEIGHT, w));
    }

    /** maintenance > critical > warning > passing, as Consul's own {@code AggregatedStatus}. */
    static String aggregate(List<HealthCheck> checks) {
        boolean critical = false;
        boolean warning = false;
        for (HealthCheck c : checks) {
            String id = c.getCheckId();
            if (NODE_MAINTENANCE.equals(id) || (id != null && id.startsWith(SERVICE_MAINTENANCE))) return "maintenance";
            String st = c.getStatus() == null ? "" : c.getStatus().toLowerCase(Locale.ROOT);
            if (st.equals("critical")) critical = true;
            else if (st.equals("warning")) warning = true;
        }
        if (critical) return "critical";
        return warning ? "warning" : "passing";
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }
}
