package dev.meshbridge.registry.nacos;

import com.alibaba.nacos.api.naming.pojo.Instance;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.dubbo.DubboEndpoints;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.dubbo.DubboOverrides;
import dev.meshbridge.core.dubbo.DubboUrl;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.watch.Duplicates;
import dev.meshbridge.core.watch.ServicePorts;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns the instance list Nacos gives for one service into the full endpoint list of one catalog shard. Pure: the
 * same instances give the same upsert.
 *
 * <p>Three kinds of Nacos services:
 *
 * <ol>
 *   <li>Dubbo interface-level, named {@code providers:<interface>:<version>:<group>}: host and endpoint parameters
 *       through {@link DubboNaming}, exactly as for a Dubbo interface found in ZooKeeper; the port name is the Dubbo
 *       protocol from the {@code protocol} metadata; the weight is Dubbo's {@code weight} parameter when the provider
 *       set one (Dubbo consumers read that, not the Nacos weight), else the Nacos weight;
 *   <li>Dubbo 3 application-level, recognized by {@code dubbo.endpoints} or {@code dubbo.metadata.revision} in the
 *       metadata: the application host, one port per protocol of {@code dubbo.endpoints};
 *   <li>everything else (Spring Cloud Alibaba, plain Nacos clients): the {@link NacosOptions#hostTemplate()} host and
 *       one port named after the {@code protocol} metadata ({@code http} when absent, {@code https} when
 *       {@code secure=true}).
 * </ol>
 *
 * <p>Instance semantics, for every kind: a Nacos weight {@code w} becomes {@code round(w * 100)} (1.0 is an ordinary
 * instance, {@link Endpoint#DEFAULT_WEIGHT}); a positive weight too small to round to 1 becomes 1, so it keeps a
 * little traffic; {@code enabled=false} and weight 0 give no traffic; {@code healthy=false} is {@link
 * Health#UNHEALTHY}; the Nacos cluster is the label {@value #CLUSTER_LABEL}; metadata become labels (sanitized).
 */
final class NacosServiceMapper {

    /** Label carrying the Nacos cluster of an instance. */
    static final String CLUSTER_LABEL = "nacos.io/cluster";

    private static final String DUBBO_PROVIDERS = "providers:";

    /** Application-level metadata that are structure, not labels. */
    private static final List<String> DUBBO_APPLICATION_NOT_LABELS = List.of(
            DubboEndpoints.METADATA_KEY, "dubbo.metadata.", "dubbo.metadata-service.", "dubbo.subscribed-services");

    /**
     * What mapping produced: the upsert (null when the service cannot be named), and what was left out.
     *
     * @param ruleKey for a Dubbo interface, the config data id of its override rules ({@code
     *     <iface>:<version>:<group>.configurators}), else null
     */
    record Result(
            ServiceUpsert upsert, List<Skip> skipped, Map<String, List<Labels.Dropped>> droppedLabels, String ruleKey) {
        Result(ServiceUpsert upsert, List<Skip> skipped, Map<String, List<Labels.Dropped>> droppedLabels) {
            this(upsert, skipped, droppedLabels, null);
        }
    }

    /** The override rules of a Dubbo interface in a namespace, in Dubbo's order (see {@link DubboOverrides#apply}). */
    @FunctionalInterface
    interface Rules {
        Rules NONE = (namespace, ruleKey) -> List.of();

        List<List<DubboOverrides.Rule>> of(String namespace, String ruleKey);
    }

    /** A left-out item and why. */
    record Skip(String item, String reason) {}

    private final RegistryConfig config;
    private final NacosOptions options;

    NacosServiceMapper(RegistryConfig config, NacosOptions options) {
        this.config = config;
        this.options = options;
    }

    /**
     * Maps one service.
     *
     * @param key the shard: namespace id, group and Nacos service name
     * @param instances every instance Nacos gives for it
     */
    Result map(ServiceKey key, List<Instance> instances) {
        return map(key, instances, Rules.NONE);
    }

    /**
     * Maps one service, applying the override rules of Dubbo interfaces.
     *
     * @param rules where the override rules come from
     */
    Result map(ServiceKey key, List<Instance> instances, Rules rules) {
        List<Skip> skipped = new ArrayList<>();
        Map<String, List<Labels.Dropped>> dropped = new LinkedHashMap<>();
        List<Instance> sorted = new ArrayList<>(instances);
        sorted.sort(Comparator.comparing((Instance i) -> String.valueOf(i.getIp()))
                .thenComparingInt(Instance::getPort)
                .thenComparing(i -> String.valueOf(i.getClusterName())));
        Kind kind = kind(key.name(), sorted);
        String host;
        TreeMap<String, String> serviceLabels = new TreeMap<>();
        DubboName dubboName = null;
        try {
            host = switch (kind) {
                case DUBBO_INTERFACE -> {
                    DubboName name = DubboName.parse(key.name());
                    if (name.ambiguous() != null) {
                        name = name.resolve(sorted);
                        sorted = keepMatching(key, name, sorted, skipped);
                    }
                    dubboName = name;
                    yield dubboInterfaceHost(key, name, sorted, serviceLabels);
                }
                case DUBBO_APPLICATION -> {
                    putIfValid(serviceLabels, "dubbo.application", key.name());
                    yield DubboNaming.applicationHost(
                            options.dubboApplicationTemplate(), config.name(), key.name(), environment(key));
                }
                case PLAIN ->
                    options.hostTemplate()
                            .render(Map.of(
                                    "service", key.name(),
                                    "group", key.group(),
                                    "namespace", options.namespaceInHost(key.namespace()),
                                    "namespaceId", key.namespace(),
                                    "registry", config.name()));
            };
        } catch (IllegalArgumentException e) {
            skipped.add(new Skip(describe(key), e.getMessage()));
            return new Result(null, skipped, dropped);
        }

        String ruleKey = dubboName == null
                ? null
                : DubboOverrides.ruleKey(dubboName.iface(), dubboName.version(), dubboName.group());
        List<List<DubboOverrides.Rule>> overrides = ruleKey == null ? List.of() : rules.of(key.namespace(), ruleKey);
        String serviceKey = dubboName == null
                ? null
                : DubboOverrides.serviceKey(dubboName.iface(), dubboName.group(), dubboName.version());
        List<Duplicates.Candidate> candidates = new ArrayList<>();
        Map<String, Protocol> protocols = new TreeMap<>();
        for (Instance instance : sorted) {
            String item = describe(key) + " instance " + instance.getIp() + ":" + instance.getPort()
                    + (instance.getClusterName() == null ? "" : "@" + instance.getClusterName());
            try {
                Endpoint e = switch (kind) {
                    case DUBBO_INTERFACE ->
                        dubboInterfaceEndpoint(instance, protocols, item, dropped, serviceKey, overrides);
                    case DUBBO_APPLICATION -> dubboApplicationEndpoint(instance, protocols, item, dropped);
                    case PLAIN -> plainEndpoint(instance, protocols, item, dropped);
                };
                candidates.add(new Duplicates.Candidate(e, timestamp(instance), item));
            } catch (IllegalArgumentException ex) {
                skipped.add(new Skip(item, ex.getMessage()));
            }
        }
        Duplicates.Result picked = Duplicates.pick(candidates);
        for (Duplicates.Dropped d : picked.dropped())
            skipped.add(new Skip(d.dropped().id(), d.reason()));
        List<ServicePort> ports = ServicePorts.of(config, picked.endpoints(), protocols::get);
        return new Result(
                new ServiceUpsert(key, host, ports, picked.endpoints(), serviceLabels), skipped, dropped, ruleKey);
    }

    private enum Kind {
        DUBBO_INTERFACE,
        DUBBO_APPLICATION,
        PLAIN
    }

    private static Kind kind(String name, List<Instance> instances) {
        if (name.startsWith(DUBBO_PROVIDERS)) return Kind.DUBBO_INTERFACE;
        for (Instance i : instances) {
            Map<String, String> m = i.getMetadata();
            if (m != null && (m.containsKey(DubboEndpoints.METADATA_KEY) || m.containsKey("dubbo.metadata.revision"))) {
                return Kind.DUBBO_APPLICATION;
            }
        }
        return Kind.PLAIN;
    }

    /** The protocol a port name stands for, the same whatever the instance order. */
    private static void usePort(Map<String, Protocol> protocols, String name, Protocol protocol) {
        protocols.merge(name, protocol, (a, b) -> a.compareTo(b) <= 0 ? a : b);
    }

    /** When the instance registered, when it says (Dubbo providers carry {@code timestamp}); 0 otherwise. */
    private static long timestamp(Instance instance) {
        String t = metadata(instance).get("timestamp");
        if (t == null) return 0;
        try {
            return Long.parseLong(t.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * The Dubbo identity in a Nacos service name. Dubbo 2.7.3 and later write {@code
     * providers:<interface>:<version>:<group>} with empty parts kept; Dubbo 2.7.2 and earlier (and {@code
     * register-compatible}) left empty parts out, so {@code providers:<interface>:<x>} holds a version or a group: the
     * instances' own {@code version} and {@code group} parameters say which ({@link #resolve}).
     *
     * @param ambiguous the {@code <x>} of a three-part name, else null
     */
    record DubboName(String iface, String version, String group, String ambiguous) {

        static DubboName parse(String serviceName) {
            String[] parts = serviceName.substring(DUBBO_PROVIDERS.length()).split(":", -1);
            String iface = parts[0];
            if (iface.isEmpty()) throw new IllegalArgumentException("Dubbo service name has no interface");
            if (parts.length == 2) return new DubboName(iface, "", "", parts[1]);
            return new DubboName(iface, parts.length > 1 ? parts[1] : "", parts.length > 2 ? parts[2] : "", null);
        }

        /**
         * Which of version and group the {@code <x>} is: the first instance (in address order) whose parameters carry
         * {@code <x>} as its group (and not as its version) makes it the group; one that carries it as its version makes
         * it the version; with no instance saying, it is the version (Dubbo wrote the version first).
         */
        DubboName resolve(List<Instance> instances) {
            for (Instance i : instances) {
                Map<String, String> p = DubboUrl.withDefaults(metadata(i));
                String v = p.getOrDefault("version", "");
                String g = p.getOrDefault("group", "");
                if (ambiguous.equals(g) && !ambiguous.equals(v)) return new DubboName(iface, v, ambiguous, null);
                if (ambiguous.equals(v)) return new DubboName(iface, ambiguous, g, null);
            }
            return new DubboName(iface, ambiguous, "", null);
        }

        /** True when the instance's own parameters (if it has them) say this version and group. */
        boolean matches(Instance instance) {
            Map<String, String> p = DubboUrl.withDefaults(metadata(instance));
            if (!p.containsKey("version") && !p.containsKey("group")) return true;
            return p.getOrDefault("version", "").equals(version)
                    && p.getOrDefault("group", "").equals(group);
        }
    }

    /** The instances of a three-part Dubbo name that agree with its resolved version and group; the others reported. */
    private static List<Instance> keepMatching(
            ServiceKey key, DubboName name, List<Instance> instances, List<Skip> skipped) {
        List<Instance> out = new ArrayList<>(instances.size());
        for (Instance i : instances) {
            if (name.matches(i)) {
                out.add(i);
            } else {
                Map<String, String> p = DubboUrl.withDefaults(metadata(i));
                skipped.add(new Skip(
                        describe(key) + " instance " + i.getIp() + ":" + i.getPort(),
                        "its parameters say version '" + p.getOrDefault("version", "") + "' group '"
                                + p.getOrDefault("group", "") + "', while the service's other instances say version '"
                                + name.version() + "' group '" + name.group() + "'"));
            }
        }
        return out;
    }

    /** Where a Nacos service lives, for the Dubbo host templates: its namespace and group, and whether they are home. */
    private DubboNaming.Environment environment(ServiceKey key) {
        return DubboNaming.Environment.nacos(
                options.namespaceInHost(key.namespace()),
                key.namespace().equals(options.homeNamespace()),
                key.group(),
                key.group().equals(options.homeGroup()));
    }

    private String dubboInterfaceHost(
            ServiceKey key, DubboName name, List<Instance> instances, Map<String, String> serviceLabels) {
        String iface = name.iface();
        String version = name.version();
        String group = name.group();
        String application = "";
        for (Instance i : instances) {
            String app = metadata(i).get("application");
            if (app != null && !app.isEmpty()) {
                application = app;
                break;
            }
        }
        putIfValid(serviceLabels, "dubbo.interface", iface);
        if (!version.isEmpty()) putIfValid(serviceLabels, "dubbo.version", version);
        if (!group.isEmpty()) putIfValid(serviceLabels, "dubbo.group", group);
        return DubboNaming.interfaceHost(
                options.dubboInterfaceTemplate(), config.name(), iface, version, group, application, environment(key));
    }

    private Endpoint dubboInterfaceEndpoint(
            Instance instance,
            Map<String, Protocol> ports,
            String item,
            Map<String, List<Labels.Dropped>> dropped,
            String serviceKey,
            List<List<DubboOverrides.Rule>> overrides) {
        Map<String, String> params = DubboUrl.withDefaults(metadata(instance));
        int port = checkAddress(instance);
        if (!overrides.isEmpty()) {
            Map<String, String> overridden = DubboOverrides.apply(
                    new DubboOverrides.Provider(instance.getIp(), port, serviceKey, params),
                    options.dubboConsumerApplication(),
                    overrides);
            // the labels stay the provider's own; what the rules change is whether and how much it gets traffic
            Map<String, String> traffic = new LinkedHashMap<>(params);
            for (String k : List.of("disabled", "enabled", "weight")) {
                if (overridden.containsKey(k)) traffic.put(k, overridden.get(k));
            }
            params = traffic;
        }
        String protocol = params.getOrDefault("protocol", Protocol.DUBBO.portName());
        String portName = DubboNaming.portName(protocol);
        // Dubbo's NacosRegistry adds protocol and path to the URL parameters only to rebuild the URL: not labels
        Map<String, String> labelSource = new LinkedHashMap<>(params);
        labelSource.remove("protocol");
        labelSource.remove("path");
        Labels.Result labels = withCluster(DubboNaming.labels(labelSource), instance, item, dropped);
        Endpoint.Builder b = DubboNaming.endpoint(instance.getIp(), portName, port, params, labels);
        if (!params.containsKey("weight")) b.weight(weight(instance.getWeight()));
        b.enabled(instance.isEnabled() && DubboNaming.enabled(params)).health(health(instance));
        usePort(ports, portName, DubboNaming.protocol(protocol));
        return b.build();
    }

    private Endpoint dubboApplicationEndpoint(
            Instance instance, Map<String, Protocol> ports, String item, Map<String, List<Labels.Dropped>> dropped) {
        Map<String, String> metadata = metadata(instance);
        int instancePort = checkAddress(instance);
        List<DubboEndpoints.ProtocolPort> protocolPorts;
        String endpointsJson = metadata.get(DubboEndpoints.METADATA_KEY);
        if (endpointsJson != null && !endpointsJson.isBlank()) {
            protocolPorts = DubboEndpoints.parse(endpointsJson);
            if (protocolPorts.isEmpty()) throw new IllegalArgumentException("dubbo.endpoints lists no protocol");
        } else {
            String protocol = metadata.getOrDefault("dubbo.protocol", Protocol.DUBBO.portName());
            protocolPorts = List.of(new DubboEndpoints.ProtocolPort(protocol, instancePort));
        }
        Map<String, String> labelSource = new LinkedHashMap<>();
        metadata.forEach((k, v) -> {
            if (DUBBO_APPLICATION_NOT_LABELS.stream().noneMatch(k::startsWith)) labelSource.put(k, v);
        });
        Labels.Result labels = withCluster(DubboNaming.labels(labelSource), instance, item, dropped);
        Endpoint.Builder b = Endpoint.builder(instance.getIp())
                .weight(metadata.containsKey("weight") ? DubboNaming.weight(metadata) : weight(instance.getWeight()))
                .enabled(instance.isEnabled() && DubboNaming.enabled(metadata))
                .health(health(instance))
                .labels(labels.labels());
        for (DubboEndpoints.ProtocolPort pp : protocolPorts) {
            String portName = DubboNaming.portName(pp.protocol());
            b.port(portName, pp.port());
            usePort(ports, portName, DubboNaming.protocol(pp.protocol()));
        }
        return b.build();
    }

    private Endpoint plainEndpoint(
            Instance instance, Map<String, Protocol> ports, String item, Map<String, List<Labels.Dropped>> dropped) {
        Map<String, String> metadata = metadata(instance);
        int port = checkAddress(instance);
        Protocol protocol = Protocol.parse(metadata.get("protocol"))
                .orElse("true".equalsIgnoreCase(metadata.get("secure")) ? Protocol.HTTPS : Protocol.HTTP);
        Labels.Result labels = withCluster(Labels.sanitize(metadata), instance, item, dropped);
        usePort(ports, protocol.portName(), protocol);
        return Endpoint.builder(instance.getIp())
                .port(protocol.portName(), port)
                .weight(weight(instance.getWeight()))
                .enabled(instance.isEnabled())
                .health(health(instance))
                .labels(labels.labels())
                .build();
    }

    private static Labels.Result withCluster(
            Labels.Result labels, Instance instance, String item, Map<String, List<Labels.Dropped>> dropped) {
        List<Labels.Dropped> all = new ArrayList<>(labels.dropped());
        TreeMap<String, String> out = new TreeMap<>(labels.labels());
        String cluster = instance.getClusterName();
        if (cluster != null && !cluster.isEmpty()) {
            Labels.Result c = Labels.sanitize(Map.of(CLUSTER_LABEL, cluster));
            out.putAll(c.labels());
            all.addAll(c.dropped());
        }
        if (!all.isEmpty()) dropped.put(item, all);
        return new Labels.Result(out, all);
    }

    private static int checkAddress(Instance instance) {
        if (instance.getIp() == null || instance.getIp().isBlank()) {
            throw new IllegalArgumentException("instance has no ip");
        }
        int port = instance.getPort();
        if (port < 1 || port > 65535) throw new IllegalArgumentException("port " + port + " is out of 1..65535");
        return port;
    }

    /**
     * A Nacos weight (1.0 for an ordinary instance, at most 10000) as an endpoint weight: scaled by {@link
     * Endpoint#DEFAULT_WEIGHT} and rounded; a positive weight below 0.005 becomes 1 rather than 0.
     */
    static int weight(double nacosWeight) {
        if (Double.isNaN(nacosWeight) || nacosWeight <= 0) return 0;
        double scaled = nacosWeight * Endpoint.DEFAULT_WEIGHT;
        if (scaled >= Endpoint.MAX_WEIGHT) return Endpoint.MAX_WEIGHT;
        return (int) Math.max(1, Math.round(scaled));
    }

    private static Health health(Instance instance) {
        return instance.isHealthy() ? Health.HEALTHY : Health.UNHEALTHY;
    }

    private static Map<String, String> metadata(Instance instance) {
        return instance.getMetadata() == null ? Map.of() : instance.getMetadata();
    }

    private static void putIfValid(Map<String, String> labels, String key, String value) {
        if (Labels.isValidValue(value)) labels.put(key, value);
    }

    static String describe(ServiceKey key) {
        return key.namespace() + "/" + key.group() + "/" + key.name();
    }
}
