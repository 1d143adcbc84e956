package dev.meshbridge.xds;

import dev.meshbridge.ads.TlsOptions;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.naming.IpAddresses;
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
 * @param lbMetadataLabels label keys copied into each endpoint's {@code envoy.lb} metadata; null copies all. The keys
 *     Ingress routes select subsets on are copied too, on the services they select
 * @param keepaliveTime how often the server pings an idle client connection to find dead peers (0 turns it off)
 * @param maxConnectionAge after this long a client connection is asked to reconnect, which spreads clients over
 *     replicas (0 never)
 * @param ingress the listeners Envoy gets for the Ingress routes
 * @param healthyPanicThreshold the clusters' {@code common_lb_config.healthy_panic_threshold} in percent (0, the
 *     default, turns Envoy's panic mode off: traffic never goes to endpoints sent as unhealthy)
 * @param initialSyncTimeout how long first answers are held while the registries do their first sync (the bridge
 *     lets the server answer as soon as every registry has synced or passed its own {@code syncTimeout}); 0 answers
 *     at once
 * @param nodeRoles how a client's role (gateway, sidecar, proxyless) is told from its node
 * @param limits what the server grants its clients ({@code xds.limits:})
 * @param sdsClients the clients that may receive SDS secrets (Ingress TLS keys), by address ({@code
 *     xds.sds.allowedClients}); others are answered with no secrets. Until the server authenticates clients (mTLS),
 *     the default is {@code loopback} only
 * @param sidecar the outbound listeners sidecars and egress proxies get
 * @param tls TLS and client authorization of the server ({@code xds.tls}); plaintext by default
 * @param ioThreads the threads that read and write the clients' connections; 0: half the cores, at least one
 */
public record XdsOptions(
        String bindAddress,
        int port,
        Duration connectTimeout,
        boolean grpcListeners,
        Set<String> lbMetadataLabels,
        Duration keepaliveTime,
        Duration maxConnectionAge,
        Ingress ingress,
        int healthyPanicThreshold,
        Duration initialSyncTimeout,
        NodeRoles nodeRoles,
        dev.meshbridge.ads.AdsLimits limits,
        dev.meshbridge.ads.ClientNetworks sdsClients,
        SidecarOptions sidecar,
        TlsOptions tls,
        int ioThreads) {

    public static final int DEFAULT_PORT = 15010;
    public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
    public static final XdsOptions DEFAULTS = new XdsOptions(
            DEFAULT_BIND_ADDRESS,
            DEFAULT_PORT,
            Duration.ofSeconds(5),
            true,
            Set.of(),
            Duration.ofSeconds(30),
            Duration.ZERO,
            Ingress.DEFAULTS,
            0,
            Duration.ofSeconds(30),
            NodeRoles.DEFAULTS,
            dev.meshbridge.ads.AdsLimits.DEFAULTS,
            dev.meshbridge.ads.ClientNetworks.LOOPBACK,
            SidecarOptions.DEFAULTS,
            TlsOptions.DISABLED,
            0);

    /**
     * What Envoy gets for the Ingress routes of the snapshot: the {@code xds.ingress:} section.
     *
     * @param enabled serve listeners, routes, clusters and secrets for the Ingress routes (when there are any)
     * @param bindAddress the address the listeners bind in Envoy
     * @param httpPort the HTTP listener's port; 0: no HTTP listener
     * @param httpsPort the HTTPS listener's port, served when an Ingress TLS section has a certificate; 0: no HTTPS
     *     listener, and no certificate or key leaves the bridge
     */
    public record Ingress(boolean enabled, String bindAddress, int httpPort, int httpsPort) {

        public static final Ingress DEFAULTS = new Ingress(true, DEFAULT_BIND_ADDRESS, 8080, 8443);

        public Ingress {
            Objects.requireNonNull(bindAddress, "bindAddress");
            if (!IpAddresses.isBare(bindAddress))
                throw new IllegalArgumentException("ingress bindAddress '" + bindAddress + "' is not an IP address");
            if (httpPort < 0 || httpPort > 65535 || httpsPort < 0 || httpsPort > 65535)
                throw new IllegalArgumentException("ingress ports must be in 0..65535");
            if (httpPort != 0 && httpPort == httpsPort)
                throw new IllegalArgumentException("ingress httpPort and httpsPort are both " + httpPort);
        }

        static Ingress parse(ConfigNode section) {
            boolean enabled = section.bool("enabled", true);
            // Envoy binds listeners to IP addresses only
            String bind = parseBindAddress(section, "bindAddress", false);
            int http = section.integer("httpPort", DEFAULTS.httpPort(), 0, 65535);
            int https = section.integer("httpsPort", DEFAULTS.httpsPort(), 0, 65535);
            if (http != 0 && http == https) {
                section.problem("httpsPort", "must differ from httpPort (" + http + ")");
                https = http == DEFAULTS.httpsPort() ? DEFAULTS.httpPort() : DEFAULTS.httpsPort();
            }
            return new Ingress(enabled, bind, http, https);
        }
    }

    public XdsOptions {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(keepaliveTime, "keepaliveTime");
        Objects.requireNonNull(maxConnectionAge, "maxConnectionAge");
        Objects.requireNonNull(ingress, "ingress");
        Objects.requireNonNull(initialSyncTimeout, "initialSyncTimeout");
        Objects.requireNonNull(nodeRoles, "nodeRoles");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(sdsClients, "sdsClients");
        Objects.requireNonNull(sidecar, "sidecar");
        Objects.requireNonNull(tls, "tls");
        if (initialSyncTimeout.isNegative())
            throw new IllegalArgumentException("initialSyncTimeout must not be negative");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port " + port + " is out of 0..65535");
        lbMetadataLabels = lbMetadataLabels == null ? null : Set.copyOf(lbMetadataLabels);
        if (healthyPanicThreshold < 0 || healthyPanicThreshold > 100)
            throw new IllegalArgumentException("healthyPanicThreshold must be in 0..100");
        if (ioThreads < 0 || ioThreads > dev.meshbridge.ads.AdsOptions.MAX_IO_THREADS)
            throw new IllegalArgumentException(
                    "ioThreads must be in 0.." + dev.meshbridge.ads.AdsOptions.MAX_IO_THREADS);
    }

    /** Defaults, on 127.0.0.1 and a free port: for tests and benchmarks. */
    public static XdsOptions loopbackEphemeral() {
        return DEFAULTS.withAddress("127.0.0.1", 0);
    }

    public XdsOptions withAddress(String bindAddress, int port) {
        return edit(e -> {
            e.bindAddress = bindAddress;
            e.port = port;
        });
    }

    public XdsOptions withLbMetadataLabels(Set<String> labels) {
        return edit(e -> e.lbMetadataLabels = labels);
    }

    public XdsOptions withInitialSyncTimeout(Duration timeout) {
        return edit(e -> e.initialSyncTimeout = timeout);
    }

    public XdsOptions withNodeRoles(NodeRoles roles) {
        return edit(e -> e.nodeRoles = roles);
    }

    public XdsOptions withIngress(Ingress ingress) {
        return edit(e -> e.ingress = ingress);
    }

    /** The same options with an 11-argument shape (no sidecar section): sidecars get the default listeners. */
    public XdsOptions(
            String bindAddress,
            int port,
            Duration connectTimeout,
            boolean grpcListeners,
            Set<String> lbMetadataLabels,
            Duration keepaliveTime,
            Duration maxConnectionAge,
            Ingress ingress,
            int healthyPanicThreshold,
            Duration initialSyncTimeout,
            NodeRoles nodeRoles) {
        this(
                bindAddress,
                port,
                connectTimeout,
                grpcListeners,
                lbMetadataLabels,
                keepaliveTime,
                maxConnectionAge,
                ingress,
                healthyPanicThreshold,
                initialSyncTimeout,
                nodeRoles,
                dev.meshbridge.ads.AdsLimits.DEFAULTS,
                dev.meshbridge.ads.ClientNetworks.LOOPBACK,
                SidecarOptions.DEFAULTS,
                TlsOptions.DISABLED,
                0);
    }

    /** A copy with {@code ioThreads} I/O threads (0: half the cores, at least one). */
    public XdsOptions withIoThreads(int ioThreads) {
        return edit(e -> e.ioThreads = ioThreads);
    }

    public XdsOptions withTls(TlsOptions tls) {
        return edit(e -> e.tls = tls);
    }

    public XdsOptions withSidecar(SidecarOptions sidecar) {
        return edit(e -> e.sidecar = sidecar);
    }

    public XdsOptions withLimits(dev.meshbridge.ads.AdsLimits limits) {
        return edit(e -> e.limits = limits);
    }

    public XdsOptions withSdsClients(dev.meshbridge.ads.ClientNetworks clients) {
        return edit(e -> e.sdsClients = clients);
    }

    /** A copy with {@code change} applied to the components the {@code with*} methods change. */
    private XdsOptions edit(java.util.function.Consumer<Edit> change) {
        Edit e = new Edit(this);
        change.accept(e);
        return new XdsOptions(
                e.bindAddress,
                e.port,
                connectTimeout,
                grpcListeners,
                e.lbMetadataLabels,
                keepaliveTime,
                maxConnectionAge,
                e.ingress,
                healthyPanicThreshold,
                e.initialSyncTimeout,
                e.nodeRoles,
                e.limits,
                e.sdsClients,
                e.sidecar,
                e.tls,
                e.ioThreads);
    }

    private static final class Edit {
        String bindAddress;
        int port;
        Set<String> lbMetadataLabels;
        Ingress ingress;
        Duration initialSyncTimeout;
        NodeRoles nodeRoles;
        dev.meshbridge.ads.AdsLimits limits;
        dev.meshbridge.ads.ClientNetworks sdsClients;
        SidecarOptions sidecar;
        TlsOptions tls;
        int ioThreads;

        Edit(XdsOptions o) {
            bindAddress = o.bindAddress;
            port = o.port;
            lbMetadataLabels = o.lbMetadataLabels;
            ingress = o.ingress;
            initialSyncTimeout = o.initialSyncTimeout;
            nodeRoles = o.nodeRoles;
            limits = o.limits;
            sdsClients = o.sdsClients;
            sidecar = o.sidecar;
            tls = o.tls;
            ioThreads = o.ioThreads;
        }
    }

    /** The translator options these give. */
    public EnvoyTranslator.Options translatorOptions() {
        return new EnvoyTranslator.Options(connectTimeout, grpcListeners, lbMetadataLabels, healthyPanicThreshold);
    }

    private static String parseBindAddress(ConfigNode section, String key, boolean localhost) {
        String bind = section.string(key, DEFAULT_BIND_ADDRESS).trim();
        if (!(localhost && bind.equals("localhost")) && !IpAddresses.isBare(bind)) {
            section.problem(key, "expected an IP address such as 0.0.0.0, 127.0.0.1 or ::, got '" + bind + "'");
            return DEFAULT_BIND_ADDRESS;
        }
        return bind;
    }

    /**
     * Parses the {@code xds:} section. Problems are recorded on the node (with line and field) and the defaults used,
     * so the root's {@code finish()} reports them all.
     */
    public static XdsOptions parse(ConfigNode section) {
        String bind = parseBindAddress(section, "bindAddress", true);
        int port = section.integer("port", DEFAULT_PORT, 0, 65535);
        Duration connectTimeout = section.duration("connectTimeout", DEFAULTS.connectTimeout());
        if (connectTimeout.isZero() || connectTimeout.isNegative()) {
            section.problem("connectTimeout", "must be positive");
            connectTimeout = DEFAULTS.connectTimeout();
        }
        boolean grpcListeners = section.bool("grpcListeners", true);
        Set<String> labels = Set.of();
        if (section.has("lbMetadataLabels")) {
            labels = null;
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
        } else if (!maxAge.isZero() && maxAge.compareTo(Duration.ofSeconds(1)) < 0) {
            section.problem("maxConnectionAge", "must be at least 1s (or 0 for never)");
            maxAge = Duration.ZERO;
        }
        Ingress ingress = Ingress.parse(section.section("ingress"));
        int panic = section.integer("healthyPanicThreshold", 0, 0, 100);
        Duration hold = section.duration("initialSyncTimeout", DEFAULTS.initialSyncTimeout());
        if (hold.isNegative()) {
            section.problem("initialSyncTimeout", "must not be negative");
            hold = DEFAULTS.initialSyncTimeout();
        }
        NodeRoles roles = NodeRoles.parse(section.section("nodeRoles"));
        dev.meshbridge.ads.AdsLimits limits = dev.meshbridge.ads.AdsLimits.parse(section.section("limits"));
        dev.meshbridge.ads.ClientNetworks sds = dev.meshbridge.ads.ClientNetworks.LOOPBACK;
        ConfigNode sdsSection = section.section("sds");
        if (sdsSection.has("allowedClients")) {
            try {
                sds = dev.meshbridge.ads.ClientNetworks.parse(sdsSection.strings("allowedClients"));
            } catch (IllegalArgumentException e) {
                sdsSection.problem("allowedClients", e.getMessage());
            }
        }
        SidecarOptions sidecar = SidecarOptions.parse(section.section("sidecar"));
        TlsOptions tls = TlsOptions.parse(section.section("tls"));
        int ioThreads = section.integer("ioThreads", 0, 0, dev.meshbridge.ads.AdsOptions.MAX_IO_THREADS);
        return new XdsOptions(
                bind,
                port,
                connectTimeout,
                grpcListeners,
                labels,
                keepalive,
                maxAge,
                ingress,
                panic,
                hold,
                roles,
                limits,
                sds,
                sidecar,
                tls,
                ioThreads);
    }
}
