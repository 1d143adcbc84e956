package dev.meshbridge.registry.consul;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.naming.HostTemplate;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The options of one {@code type: consul} registry entry, shaped like Higress's McpBridge consul fields ({@code
 * consulDatacenter}, {@code consulServiceTag}, {@code consulNamespace}, {@code consulRefreshInterval}) plus what
 * Higress lacks. Immutable, with value equality: the reconciler restarts a watcher exactly when these change.
 *
 * @param datacenters datacenters to watch; empty means the datacenter of the agent the bridge talks to
 * @param token ACL token, sent as {@code X-Consul-Token}; empty for none
 * @param namespace Consul Enterprise namespace, passed through as {@code X-Consul-Namespace}; empty for none
 * @param partition Consul Enterprise admin partition, passed through as {@code X-Consul-Partition}; empty for none
 * @param serviceTags only services and instances carrying one of these tags (case-insensitive); empty for all
 * @param allowServices glob patterns a service name must match one of; empty allows every name
 * @param denyServices glob patterns that exclude a service name (checked after {@code allowServices})
 * @param blockingWait how long one blocking query may wait for a change before Consul answers unchanged
 * @param consistency Consul read consistency of every query
 * @param warning what a {@code warning} health check means for traffic
 * @param bareTags what a tag without {@code =} becomes
 * @param hostTemplate host naming scheme
 * @param defaultProtocol protocol of instances whose meta names none
 * @param zoneMetaKey service meta key whose value becomes the locality zone
 * @param tls TLS to Consul, or empty for plain HTTP
 */
public record ConsulOptions(
        List<String> datacenters,
        Optional<Secret> token,
        String namespace,
        String partition,
        List<String> serviceTags,
        List<String> allowServices,
        List<String> denyServices,
        Duration blockingWait,
        Consistency consistency,
        WarningHealth warning,
        BareTags bareTags,
        HostTemplate hostTemplate,
        Protocol defaultProtocol,
        String zoneMetaKey,
        Optional<ConsulTls> tls) {

    /** Higress's host form: {@code <service>.<datacenter>.consul}. */
    public static final String DEFAULT_HOST_TEMPLATE = "{service}.{datacenter}.consul";

    /** Variables a host template may use. */
    public static final Set<String> HOST_VARIABLES =
            Set.of("service", "datacenter", "namespace", "partition", "registry");

    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(60);
    public static final Duration MIN_WAIT = Duration.ofSeconds(1);
    /** Consul caps a blocking query's wait at ten minutes. */
    public static final Duration MAX_WAIT = Duration.ofMinutes(10);

    /** Consul's own {@code consul} service (its servers' RPC port) is left out unless the user lists it. */
    public static final List<String> DEFAULT_DENY = List.of("consul");

    /** Read consistency of Consul queries. */
    public enum Consistency {
        /** Consul's default: read from the leader, which may briefly lag after a leader change. */
        DEFAULT,
        /** Any server answers, even a lagging one: spreads load across servers. */
        STALE,
        /** The leader confirms its leadership before answering: slower, never stale. */
        CONSISTENT
    }

    /** What a {@code warning} health status means. */
    public enum WarningHealth {
        /** Keeps traffic, weighted with Consul's {@code Weights.Warning} (as Consul's DNS interface does). */
        HEALTHY,
        /** No traffic, as for {@code critical}. */
        UNHEALTHY
    }

    /** What a tag without {@code =} becomes. */
    public enum BareTags {
        /** A label {@code <tag>: "true"}. */
        LABEL,
        /** Nothing. */
        DROP
    }

    public ConsulOptions {
        datacenters = List.copyOf(datacenters);
        Objects.requireNonNull(token, "token");
        namespace = Objects.requireNonNullElse(namespace, "");
        partition = Objects.requireNonNullElse(partition, "");
        serviceTags = List.copyOf(serviceTags);
        allowServices = List.copyOf(allowServices);
        denyServices = List.copyOf(denyServices);
        Objects.requireNonNull(blockingWait, "blockingWait");
        Objects.requireNonNull(consistency, "consistency");
        Objects.requireNonNull(warning, "warning");
        Objects.requireNonNull(bareTags, "bareTags");
        Objects.requireNonNull(hostTemplate, "hostTemplate");
        Objects.requireNonNull(defaultProtocol, "defaultProtocol");
        zoneMetaKey = Objects.requireNonNullElse(zoneMetaKey, "");
        Objects.requireNonNull(tls, "tls");
    }

    /** Options with every default: the agent's datacenter, no token, no filter. */
    public static ConsulOptions defaults() {
        return new ConsulOptions(
                List.of(),
                Optional.empty(),
                "",
                "",
                List.of(),
                List.of(),
                DEFAULT_DENY,
                DEFAULT_WAIT,
                Consistency.DEFAULT,
                WarningHealth.HEALTHY,
                BareTags.LABEL,
                HostTemplate.parse(DEFAULT_HOST_TEMPLATE, HOST_VARIABLES),
                Protocol.HTTP,
                "zone",
                Optional.empty());
    }

    /** Parses the consul fields of one {@code registries[]} entry; problems are recorded on {@code entry}. */
    static ConsulOptions parse(ConfigNode entry) {
        ConsulOptions d = defaults();
        List<String> datacenters = entry.strings("consulDatacenter");
        for (String dc : datacenters) {
            if (dc.isBlank() || !dc.matches("[A-Za-z0-9_.-]+")) {
                entry.problem("consulDatacenter", "'" + dc + "' is not a Consul datacenter name");
            }
        }
        if (datacenters.size() != datacenters.stream().distinct().count()) {
            entry.problem("consulDatacenter", "a datacenter is listed twice");
        }
        if (entry.has("authSecretName")) {
            entry.problem(
                    "authSecretName",
                    "is read from an McpBridge resource only; in bridge.yaml write consulToken: {secret: {name: NAME,"
                            + " key: consulToken}} (with ingress.kubernetes.enabled), {file: /path} or {env: NAME}");
        }
        Optional<Secret> token = entry.secret("consulToken");
        String namespace = entry.string("consulNamespace", "").trim();
        String partition = entry.string("consulPartition", "").trim();
        List<String> tags = entry.strings("consulServiceTag");
        List<String> allow = entry.strings("serviceAllowlist");
        List<String> deny = entry.has("serviceDenylist") ? entry.strings("serviceDenylist") : d.denyServices();
        if (allow.stream().anyMatch(String::isBlank)) entry.problem("serviceAllowlist", "a service pattern is empty");
        if (deny.stream().anyMatch(String::isBlank)) entry.problem("serviceDenylist", "a service pattern is empty");
        Duration wait = entry.duration("consulRefreshInterval", d.blockingWait(), ChronoUnit.NANOS);
        if (wait.compareTo(MIN_WAIT) < 0 || wait.compareTo(MAX_WAIT) > 0) {
            entry.problem(
                    "consulRefreshInterval",
                    "must be between 1s and 10m (it is the blocking query's wait), got " + wait);
            wait = d.blockingWait();
        }
        Consistency consistency = entry.enumValue("consistency", Consistency.class, d.consistency());
        WarningHealth warning = entry.enumValue("warningHealth", WarningHealth.class, d.warning());
        BareTags bareTags = entry.enumValue("bareTags", BareTags.class, d.bareTags());
        HostTemplate template = d.hostTemplate();
        if (entry.has("hostTemplate")) {
            try {
                template = HostTemplate.parse(entry.string("hostTemplate", DEFAULT_HOST_TEMPLATE), HOST_VARIABLES);
            } catch (IllegalArgumentException e) {
                entry.problem("hostTemplate", e.getMessage());
            }
        }
        Protocol protocol = d.defaultProtocol();
        if (entry.has("defaultProtocol")) {
            String p = entry.string("defaultProtocol", "http");
            protocol = Protocol.parse(p).orElse(null);
            if (protocol == null) {
                entry.problem("defaultProtocol", "unknown protocol '" + p + "'; use http, https, http2, grpc or tcp");
                protocol = d.defaultProtocol();
            }
        }
        String zoneKey = entry.string("zoneMetaKey", d.zoneMetaKey()).trim();
        Optional<ConsulTls> tls = entry.child("tls").map(ConsulTls::parse).filter(t -> t.enabled());
        return new ConsulOptions(
                datacenters,
                token,
                namespace,
                partition,
                tags,
                allow,
                deny,
                wait,
                consistency,
                warning,
                bareTags,
                template,
                protocol,
                zoneKey,
                tls);
    }
}
