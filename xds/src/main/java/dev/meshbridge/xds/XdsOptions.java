package dev.meshbridge.xds;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.naming.Labels;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Options of the xDS server: the {@code xds:} section of {@code bridge.yaml}.
 *
 * @param bindAddress the address the server binds (an IP literal or {@code localhost})
 * @param port the port; 0 picks a free one, readable from {@link XdsServer#port()} after start
 * @param connectTimeout the clusters' connect timeout
 * @param grpcListeners whether to serve API listeners and routes for proxyless gRPC clients
 * @param lbMetadataLabels label keys copied into each endpoint's {@code envoy.lb} metadata; null copies all
 * @param keepaliveTime how often the server pings an idle client connection to find dead peers (0 turns it off)
 * @param maxConnectionAge after this long a client connection is asked to reconnect, which spreads clients over
 *     replicas (0 never)
 */
public record XdsOptions(
        String bindAddress,
        int port,
        Duration connectTimeout,
        boolean grpcListeners,
        Set<String> lbMetadataLabels,
        Duration keepaliveTime,
        Duration maxConnectionAge) {

    public static final int DEFAULT_PORT = 15010;
    public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
    public static final XdsOptions DEFAULTS = new XdsOptions(
            DEFAULT_BIND_ADDRESS,
            DEFAULT_PORT,
            Duration.ofSeconds(5),
            true,
            null,
            Duration.ofSeconds(30),
            Duration.ZERO);

    public XdsOptions {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(keepaliveTime, "keepaliveTime");
        Objects.requireNonNull(maxConnectionAge, "maxConnectionAge");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port " + port + " is out of 0..65535");
        lbMetadataLabels = lbMetadataLabels == null ? null : Set.copyOf(lbMetadataLabels);
    }

    /** Defaults, on 127.0.0.1 and a free port: for tests and benchmarks. */
    public static XdsOptions loopbackEphemeral() {
        return DEFAULTS.withAddress("127.0.0.1", 0);
    }

    public XdsOptions withAddress(String bindAddress, int port) {
        return new XdsOptions(
                bindAddress, port, connectTimeout, grpcListeners, lbMetadataLabels, keepaliveTime, maxConnectionAge);
    }

    public XdsOptions withLbMetadataLabels(Set<String> labels) {
        return new XdsOptions(
                bindAddress, port, connectTimeout, grpcListeners, labels, keepaliveTime, maxConnectionAge);
    }

    /** The translator options these give. */
    public EnvoyTranslator.Options translatorOptions() {
        return new EnvoyTranslator.Options(connectTimeout, grpcListeners, lbMetadataLabels);
    }

    /**
     * Parses the {@code xds:} section. Problems are recorded on the node (with line and field) and the defaults used,
     * so the root's {@code finish()} reports them all.
     */
    public static XdsOptions parse(ConfigNode section) {
        String bind = section.string("bindAddress", DEFAULT_BIND_ADDRESS).trim();
        if (!bind.equals("localhost") && !InetLiterals.isIpLiteral(bind)) {
            section.problem(
                    "bindAddress", "expected an IP address such as 0.0.0.0, 127.0.0.1 or ::, got '" + bind + "'");
            bind = DEFAULT_BIND_ADDRESS;
        }
        int port = section.integer("port", DEFAULT_PORT, 0, 65535);
        Duration connectTimeout = section.duration("connectTimeout", DEFAULTS.connectTimeout());
        if (connectTimeout.isZero() || connectTimeout.isNegative()) {
            section.problem("connectTimeout", "must be positive");
            connectTimeout = DEFAULTS.connectTimeout();
        }
        boolean grpcListeners = section.bool("grpcListeners", true);
        Set<String> labels = null;
        if (section.has("lbMetadataLabels")) {
            List<String> keys = section.strings("lbMetadataLabels");
            if (!keys.contains("*")) {
                labels = new LinkedHashSet<>();
                for (String k : keys) {
                    if (!Labels.isValidKey(k)) {
                        section.problem("lbMetadataLabels", "'" + k + "' is not a valid label key");
                    } else {
                        labels.add(k);
                    }
                }
            }
        }
        Duration keepalive = section.duration("keepaliveTime", DEFAULTS.keepaliveTime());
        if (keepalive.isNegative()) {
            section.problem("keepaliveTime", "must not be negative");
            keepalive = DEFAULTS.keepaliveTime();
        }
        Duration maxAge = section.duration("maxConnectionAge", Duration.ZERO);
        if (maxAge.isNegative()) {
            section.problem("maxConnectionAge", "must not be negative");
            maxAge = Duration.ZERO;
        }
        return new XdsOptions(bind, port, connectTimeout, grpcListeners, labels, keepalive, maxAge);
    }
}
