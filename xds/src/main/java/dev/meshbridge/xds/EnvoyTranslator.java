package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.Value;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.IpAddresses;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.Http2ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.ApiListener;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.envoyproxy.envoy.type.v3.Percent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Translates one catalog service into Envoy v3 resources: a pure, deterministic function (same service content, same
 * bytes, same versions, in every bridge replica).
 *
 * <p>What a service becomes (names in {@link XdsNames}):
 *
 * <ol>
 *   <li>per service port, a Cluster of type EDS whose endpoints come over ADS, and its ClusterLoadAssignment:
 *       routable endpoints (enabled, weight >= 1) grouped by locality (always set, empty strings where the registry
 *       gives none), each with its weight, its health (unhealthy as UNHEALTHY, draining as DRAINING) and the labels
 *       {@link Options#lbLabels()} and the routes' subsets name under the {@code envoy.lb} filter metadata; each
 *       locality weighs the sum of its endpoints' weights. Envoy splits traffic by the endpoints' weights;
 *   <li>HTTP/2 upstreams (gRPC, Triple, HTTP/2 ports) get explicit HTTP/2 protocol options, so Envoy speaks h2 to them;
 *   <li>for proxyless gRPC, when the service has an HTTP-family port: API listeners named {@code <host>} and {@code
 *       <host>:<port>} whose HttpConnectionManager routes over RDS (router filter last) to a RouteConfiguration
 *       {@code <host>} with one virtual host per port, whose route goes to the port's proxyless cluster {@code
 *       grpc|<port>||<host>}. Its load assignment holds the healthy endpoints in localities of one weight each (see
 *       {@link #grpcLoadAssignment}), so gRPC's locality-weighted pick follows the registry's weights. Only the
 *       proxyless routes name these clusters, and wildcard subscriptions leave them out (and the API listeners and
 *       their routes): an Envoy never gets them, and a gRPC client gets only them, whatever its node says;
 *   <li>what a client would refuse ({@link ConformanceRules}) is left out and reported, never sent: an endpoint whose
 *       address is not an IP literal (EDS needs IPs), a second endpoint with the same address and port, and a port
 *       whose weights overflow 32-bit sums or whose resources break a rule (its clusters and endpoints go, with its
 *       routes).
 * </ol>
 */
public final class EnvoyTranslator {

    /** The filter metadata namespace Envoy's subset load balancer reads. */
    public static final String LB_METADATA = "envoy.lb";

    /** The filter metadata namespace the bridge describes a cluster's origin in. */
    public static final String BRIDGE_METADATA = "meshbridge";

    static final String ROUTER_FILTER = "envoy.filters.http.router";
    static final String HTTP_PROTOCOL_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

    static final ConfigSource ADS = ConfigSource.newBuilder()
            .setAds(AggregatedConfigSource.getDefaultInstance())
            .setResourceApiVersion(ApiVersion.V3)
            .build();
    private static final long MAX_UINT32 = 0xFFFF_FFFFL;

    /**
     * Translation options.
     *
     * @param connectTimeout the clusters' connect timeout
     * @param grpcListeners whether to make API listeners and routes for proxyless gRPC clients
     * @param lbLabels label keys copied into {@code envoy.lb} metadata on every endpoint; null copies every label. The
     *     keys routes select subsets on are copied on the services they select, whatever this says
     * @param healthyPanicThreshold every EDS cluster's {@code common_lb_config.healthy_panic_threshold}, in percent:
     *     below this share of healthy endpoints Envoy balances over all of them, dead ones included. 0 (the default,
     *     as istiod sets for the same case) turns panic mode off, so traffic only goes to healthy endpoints
     */
    public record Options(
            Duration connectTimeout, boolean grpcListeners, Set<String> lbLabels, double healthyPanicThreshold) {
        public static final double DEFAULT_HEALTHY_PANIC_THRESHOLD = 0;
        public static final Options DEFAULTS =
                new Options(Duration.ofSeconds(5), true, Set.of(), DEFAULT_HEALTHY_PANIC_THRESHOLD);

        public Options {
            Objects.requireNonNull(connectTimeout, "connectTimeout");
            if (connectTimeout.isNegative() || connectTimeout.isZero()) {
                throw new IllegalArgumentException("connectTimeout must be positive");
            }
            lbLabels = lbLabels == null ? null : Set.copyOf(lbLabels);
            if (!(healthyPanicThreshold >= 0 && healthyPanicThreshold <= 100)) {
                throw new IllegalArgumentException(
                        "healthyPanicThreshold must be in 0..100, got " + healthyPanicThreshold);
            }
        }

        /** Options with the default panic threshold (0). */
        public Options(Duration connectTimeout, boolean grpcListeners, Set<String> lbLabels) {
            this(connectTimeout, grpcListeners, lbLabels, DEFAULT_HEALTHY_PANIC_THRESHOLD);
        }
    }

    private final Options options;
    private final com.google.protobuf.Duration connectTimeout;
    private final Any routerFilter;
    private final Any http2Options;
    private final Cluster.CommonLbConfig commonLbConfig;
    /** What every resource of a fixed shape shares, as bytes, and whether that shape keeps every rule. */
    private final Shapes shapes;

    public EnvoyTranslator(Options options) {
        this(options, true);
    }

    /**
     * A translator; {@code byShape} false makes every resource as a message and checks it by every rule (the reference
     * the tests compare the bytes written by shape with).
     */
    EnvoyTranslator(Options options, boolean byShape) {
        this.options = Objects.requireNonNull(options, "options");
        this.connectTimeout = com.google.protobuf.Duration.newBuilder()
                .setSeconds(options.connectTimeout().getSeconds())
                .setNanos(options.connectTimeout().getNano())
                .build();
        this.routerFilter =
                pack(Router.getDefaultInstance(), "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router");
        this.http2Options = pack(
                HttpProtocolOptions.newBuilder()
                        .setExplicitHttpConfig(HttpProtocolOptions.ExplicitHttpConfig.newBuilder()
                                .setHttp2ProtocolOptions(Http2ProtocolOptions.getDefaultInstance()))
                        .build(),
                "type.googleapis.com/" + HTTP_PROTOCOL_OPTIONS);
        this.commonLbConfig = Cluster.CommonLbConfig.newBuilder()
                .setHealthyPanicThreshold(Percent.newBuilder().setValue(options.healthyPanicThreshold()))
                .build();
        this.shapes = new Shapes(byShape);
    }

    /** Every EDS cluster's {@code common_lb_config}: the healthy panic threshold. */
    Cluster.CommonLbConfig commonLbConfig() {
        return commonLbConfig;
    }

    public EnvoyTranslator() {
        this(Options.DEFAULTS);
    }

    public Options options() {
        return options;
    }

    com.google.protobuf.Duration connectTimeout() {
        return connectTimeout;
    }

    /** The router filter's config, packed once. */
    Any routerFilter() {
        return routerFilter;
    }

    /** Explicit HTTP/2 upstream options, packed once. */
    Any http2Options() {
        return http2Options;
    }

    /** Translates one service; never throws for any valid {@link MeshService}. */
    public ServiceResources translate(MeshService service) {
        return translate(service, null);
    }

    /**
     * Translates one service, reusing from {@code previous} (its last translation, or null) the clusters, listeners and
     * routes when its ports are unchanged: they depend on nothing else, so an endpoint change builds and serializes
     * only load assignments. The result is the same as without {@code previous}.
     */
    public ServiceResources translate(MeshService service, ServiceResources previous) {
        return translate(service, previous, Set.of());
    }

    /**
     * Translates one service as {@link #translate(MeshService, ServiceResources)} does, with {@code routeLabelKeys}
     * (the label keys routes select subsets of this service on) put under {@code envoy.lb} in addition to
     * {@link Options#lbLabels()}.
     */
    public ServiceResources translate(MeshService service, ServiceResources previous, Set<String> routeLabelKeys) {
        String host = service.host();
        boolean reuse = previous != null
                && previous.host().equals(host)
                && previous.ports().equals(service.ports());
        List<XdsResource> out = new ArrayList<>();
        List<ServiceResources.Skipped> skipped = new ArrayList<>();
        List<ServicePort> grpcServed = new ArrayList<>();
        // each endpoint's address, made once for every port (an IPv4 address is a new string at each call)
        String[] addresses = new String[service.endpoints().size()];
        for (ServicePort port : service.ports()) {
            List<Served> endpoints = endpoints(service, port, addresses, skipped);
            String name = XdsNames.cluster(host, port.number());
            // by shape when no weight sum can overflow; else the message, checked by every rule
            boolean byShape = shapes.endpointsKeepRules(endpoints);
            Assignment envoy = byShape ? envoyLoadAssignmentBytes(name, endpoints, routeLabelKeys) : null;
            byte[] envoyBytes = envoy == null ? null : envoy.bytes();
            if (!add(
                    out,
                    skipped,
                    host,
                    name,
                    null,
                    previous,
                    reuse,
                    port,
                    envoyBytes == null ? envoyLoadAssignment(name, endpoints, routeLabelKeys) : null,
                    envoyBytes)) continue;
            if (options.grpcListeners() && port.protocol().isHttp()) {
                String grpcName = XdsNames.grpcCluster(host, port.number());
                byte[] grpcBytes = !byShape
                        ? null
                        : envoy.proxylessBody()
                                ? XdsResource.renamed(envoyBytes, name, grpcName)
                                : grpcLoadAssignmentBytes(grpcName, endpoints);
                if (add(
                        out,
                        skipped,
                        host,
                        grpcName,
                        name,
                        previous,
                        reuse,
                        port,
                        grpcBytes == null ? grpcLoadAssignment(grpcName, endpoints) : null,
                        grpcBytes)) grpcServed.add(port);
            }
        }
        if (options.grpcListeners()) {
            if (reuse && grpcServed.equals(grpcServedPorts(previous))) {
                for (XdsResource r : previous.resources()) {
                    if (r.type() == XdsType.LISTENER || r.type() == XdsType.ROUTE) out.add(r);
                }
                for (ServiceResources.Skipped k : previous.skipped()) {
                    if (k.item().equals(XdsNames.route(host))) skipped.add(k);
                }
            } else {
                grpcResources(host, grpcServed, out, skipped);
            }
        }
        out.sort((a, b) ->
                a.type() != b.type() ? a.type().compareTo(b.type()) : a.name().compareTo(b.name()));
        return new ServiceResources(host, service.version(), service.ports(), out, skipped);
    }

    /**
     * Adds the cluster {@code name} of a port (reused from {@code previous} when {@code reuse}) and its load
     * assignment, when both keep every {@link ConformanceRules rule}; otherwise reports them and adds nothing. The
     * proxyless form ({@code grpc|...}, given with the name of its {@code sidecar} cluster, null for the sidecar form
     * itself) is left out of wildcard subscriptions: only the proxyless routes name it.
     */
    private boolean add(
            List<XdsResource> out,
            List<ServiceResources.Skipped> skipped,
            String host,
            String name,
            String sidecar,
            ServiceResources previous,
            boolean reuse,
            ServicePort port,
            ClusterLoadAssignment cla,
            byte[] claBytes) {
        boolean grpc = sidecar != null;
        XdsResource cluster = reuse ? previous.find(XdsType.CLUSTER, name) : null;
        List<String> problems = new ArrayList<>();
        Cluster c = null;
        byte[] clusterBytes = null;
        if (cluster == null) {
            boolean h2 = !grpc && http2(port.protocol());
            if (shapes.clusterKeepsRules(name, h2)) {
                clusterBytes = clusterBytes(name, host, port, h2);
            } else {
                c = cluster(name, host, port, h2);
                problems.addAll(ConformanceRules.cluster(c));
            }
        }
        if (cla != null)
            problems.addAll(grpc ? ConformanceRules.grpcLoadAssignment(cla) : ConformanceRules.loadAssignment(cla));
        if (!problems.isEmpty()) {
            String overflow = problems.stream()
                    .filter(p -> p.contains("weight sum"))
                    .findFirst()
                    .orElse(null);
            skipped.add(
                    overflow != null
                            ? new ServiceResources.Skipped(host, name, "weight-overflow", overflow)
                            : new ServiceResources.Skipped(host, name, "invalid-resource", problems.get(0)));
            return false;
        }
        if (cluster == null)
            cluster = c != null
                    ? resource(XdsType.CLUSTER, name, c, !grpc)
                    : resource(XdsType.CLUSTER, name, clusterBytes, !grpc);
        out.add(cluster);
        out.add(
                cla != null
                        ? resource(XdsType.ENDPOINT, name, cla, !grpc)
                        : grpc
                                ? loadAssignment(name, claBytes, sidecarLoadAssignment(out, sidecar))
                                : resource(XdsType.ENDPOINT, name, claBytes, !grpc));
        return true;
    }

    /** The sidecar load assignment {@code name} among the resources made so far, or null. */
    private static XdsResource sidecarLoadAssignment(List<XdsResource> out, String name) {
        for (int i = out.size() - 1; i >= 0; i--) {
            XdsResource r = out.get(i);
            if (r.type() == XdsType.ENDPOINT && r.name().equals(name)) return r;
        }
        return null;
    }

    /**
     * A proxyless load assignment from its bytes, sharing its endpoints with the sidecar one of the same port when
     * they are the same bytes: the two differ in their cluster_name only when the sidecar form carries no metadata and
     * every endpoint is healthy in one weight group, which is most services. The shared body is a {@link ByteString}
     * rope of the proxyless name and the sidecar's bytes (clients receive the same bytes); below {@link
     * #SHARED_BODY_MIN} bytes protobuf would copy the pieces into one array, so the bytes are kept as they are.
     */
    static XdsResource loadAssignment(String name, byte[] bytes, XdsResource sidecar) {
        ByteString own = UnsafeByteOperations.unsafeWrap(bytes);
        long version = version(XdsType.ENDPOINT, name, own);
        ByteString value = sidecar == null ? own : shareBody(bytes, sidecar.value());
        return new XdsResource(XdsType.ENDPOINT, name, version, value, false);
    }

    /** Pieces of a rope below this many bytes are copied by protobuf ({@code ByteString.concat}). */
    static final int SHARED_BODY_MIN = 128;

    /**
     * {@code bytes} as a rope of its first field and the same body in {@code other}, when both start with one
     * length-delimited field (a load assignment's cluster_name) and the rest is equal and at least {@link
     * #SHARED_BODY_MIN} bytes; else {@code bytes} itself.
     */
    static ByteString shareBody(byte[] bytes, ByteString other) {
        ByteString own = UnsafeByteOperations.unsafeWrap(bytes);
        int head = firstFieldEnd(own);
        int otherHead = firstFieldEnd(other);
        int body = bytes.length - head;
        if (head < 0 || otherHead < 0 || body < SHARED_BODY_MIN || body != other.size() - otherHead) return own;
        ByteString shared = other.substring(otherHead);
        if (!shared.equals(own.substring(head))) return own;
        return UnsafeByteOperations.unsafeWrap(Arrays.copyOf(bytes, head)).concat(shared);
    }

    /** Where the first field ends when it is a length-delimited field with a one-byte tag; -1 otherwise. */
    private static int firstFieldEnd(ByteString b) {
        if (b.isEmpty() || (b.byteAt(0) & 0x87) != 2) return -1;
        int len = 0;
        int i = 1;
        for (int shift = 0; i < b.size() && shift < 32; shift += 7) {
            int x = b.byteAt(i++);
            len |= (x & 0x7f) << shift;
            if ((x & 0x80) == 0) return len >= 0 && i + len <= b.size() ? i + len : -1;
        }
        return -1;
    }

    /** The ports of a translated service that got a cluster (a port can be left out, see the class comment). */
    static List<ServicePort> servedPorts(ServiceResources r) {
        List<ServicePort> served = new ArrayList<>();
        for (ServicePort p : r.ports()) {
            if (r.find(XdsType.CLUSTER, XdsNames.cluster(r.host(), p.number())) != null) served.add(p);
        }
        return served;
    }

    /** The ports of a translated service that got a proxyless gRPC cluster. */
    static List<ServicePort> grpcServedPorts(ServiceResources r) {
        List<ServicePort> served = new ArrayList<>();
        for (ServicePort p : r.ports()) {
            if (r.find(XdsType.CLUSTER, XdsNames.grpcCluster(r.host(), p.number())) != null) served.add(p);
        }
        return served;
    }

    // ------------------------------------------------------------------ clusters and endpoints

    private Cluster cluster(String name, String host, ServicePort port, boolean http2) {
        Cluster.Builder b = Cluster.newBuilder()
                .setName(name)
                .setType(Cluster.DiscoveryType.EDS)
                .setEdsClusterConfig(
                        Cluster.EdsClusterConfig.newBuilder().setEdsConfig(ADS).setServiceName(name))
                .setConnectTimeout(connectTimeout)
                .setCommonLbConfig(commonLbConfig)
                .setMetadata(Metadata.newBuilder()
                        .putFilterMetadata(
                                BRIDGE_METADATA,
                                Struct.newBuilder()
                                        .putFields("host", string(host))
                                        .putFields("port", string(port.name()))
                                        .putFields(
                                                "protocol",
                                                string(port.protocol().portName()))
                                        .build()));
        if (http2) b.putTypedExtensionProtocolOptions(HTTP_PROTOCOL_OPTIONS, http2Options);
        return b.build();
    }

    static boolean http2(Protocol p) {
        return p == Protocol.GRPC || p == Protocol.TRIPLE || p == Protocol.HTTP2;
    }

    /**
     * An endpoint as served on one port, with its address and weight made once (as messages or as bytes, when asked
     * for) for both load assignments (Envoy's and the proxyless one) that carry it.
     */
    private static final class Served {
        final Endpoint endpoint;
        final String address;
        final int port;
        private io.envoyproxy.envoy.config.endpoint.v3.Endpoint host;
        private UInt32Value weight;
        private byte[] hostField;

        Served(Endpoint endpoint, String address, int port) {
            this.endpoint = endpoint;
            this.address = address;
            this.port = port;
        }

        Endpoint endpoint() {
            return endpoint;
        }

        io.envoyproxy.envoy.config.endpoint.v3.Endpoint host() {
            if (host == null)
                host = io.envoyproxy.envoy.config.endpoint.v3.Endpoint.newBuilder()
                        .setAddress(Address.newBuilder()
                                .setSocketAddress(SocketAddress.newBuilder()
                                        .setAddress(address)
                                        .setPortValue(port)))
                        .build();
            return host;
        }

        UInt32Value weight() {
            if (weight == null) weight = UInt32Value.of(endpoint.weight());
            return weight;
        }

        /** The LbEndpoint's {@code endpoint} field, as bytes: the nested messages' sizes first, then one writer. */
        byte[] hostField() {
            if (hostField == null) {
                byte[] text = address.getBytes(StandardCharsets.UTF_8);
                int socket =
                        (text.length == 0 ? 0 : ProtoWriter.fieldSize(SocketAddress.ADDRESS_FIELD_NUMBER, text.length))
                                + ProtoWriter.varintFieldSize(SocketAddress.PORT_VALUE_FIELD_NUMBER, port);
                int address = ProtoWriter.fieldSize(Address.SOCKET_ADDRESS_FIELD_NUMBER, socket);
                int host = ProtoWriter.fieldSize(
                        io.envoyproxy.envoy.config.endpoint.v3.Endpoint.ADDRESS_FIELD_NUMBER, address);
                ProtoWriter w = new ProtoWriter(ProtoWriter.fieldSize(LbEndpoint.ENDPOINT_FIELD_NUMBER, host))
                        .head(LbEndpoint.ENDPOINT_FIELD_NUMBER, host)
                        .head(io.envoyproxy.envoy.config.endpoint.v3.Endpoint.ADDRESS_FIELD_NUMBER, address)
                        .head(Address.SOCKET_ADDRESS_FIELD_NUMBER, socket);
                if (text.length > 0) w.message(SocketAddress.ADDRESS_FIELD_NUMBER, text);
                hostField =
                        w.varint(SocketAddress.PORT_VALUE_FIELD_NUMBER, port).toByteArray();
            }
            return hostField;
        }
    }

    private record AddressPort(String address, int port) {}

    /**
     * The endpoints of a port that can be served: routable, with this port, an IP address, and not a second one with
     * the same address and port; the others are reported in {@code skipped}.
     */
    private static List<Served> endpoints(
            MeshService service, ServicePort port, String[] addresses, List<ServiceResources.Skipped> skipped) {
        List<Served> out = new ArrayList<>(addresses.length);
        // the address and port of every endpoint served, made once the addresses come out of order (see duplicate)
        Set<AddressPort> seen = null;
        // endpoints mostly share their ports' map (the catalog interns it): its port looked up once
        Map<String, Integer> lastPorts = null;
        int lastNumber = 0;
        int i = -1;
        for (Endpoint e : service.endpoints()) {
            i++;
            if (!e.routable()) continue;
            int number;
            if (e.ports() == lastPorts) {
                number = lastNumber;
            } else {
                number = e.port(port.name());
                lastPorts = e.ports();
                lastNumber = number;
            }
            if (number == 0) continue;
            String address = addresses[i];
            if (address == null) addresses[i] = address = e.address();
            // an address held as IPv4 bits is a canonical dotted IPv4 address, which isBare accepts
            if (!e.isIpv4() && !IpAddresses.isBare(address)) {
                skipped.add(new ServiceResources.Skipped(
                        service.host(),
                        address + ":" + number,
                        "endpoint-address",
                        "address '" + address + "' is not an IP address, and EDS endpoints need one"));
                continue;
            }
            if (seen == null && !inOrder(out, address)) {
                seen = new HashSet<>();
                for (Served s : out) seen.add(new AddressPort(s.address, s.port));
            }
            if (seen != null ? !seen.add(new AddressPort(address, number)) : duplicate(out, address, number)) {
                skipped.add(new ServiceResources.Skipped(
                        service.host(),
                        address + ":" + number,
                        "duplicate-endpoint",
                        "a second endpoint with the same address and port in "
                                + XdsNames.endpoints(service.host(), port.number()) + " is left out"));
                continue;
            }
            out.add(new Served(e, address, number));
        }
        return out;
    }

    /** Whether {@code address} sorts at or after the last endpoint served (MeshService keeps its endpoints sorted). */
    private static boolean inOrder(List<Served> out, String address) {
        return out.isEmpty() || address.compareTo(out.get(out.size() - 1).address) >= 0;
    }

    /**
     * Whether an endpoint with this address and port is served already, when every address so far came {@linkplain
     * #inOrder in order}: then those equal to {@code address} are the last ones served, and no other can be it.
     */
    private static boolean duplicate(List<Served> out, String address, int port) {
        for (int k = out.size() - 1; k >= 0 && out.get(k).address.equals(address); k--) {
            if (out.get(k).port == port) return true;
        }
        return false;
    }

    /**
     * Envoy's load assignment: the endpoints grouped by their locality, each with its weight, health and {@code
     * envoy.lb} labels; each locality weighs the sum of its endpoints' weights.
     */
    private ClusterLoadAssignment envoyLoadAssignment(String name, List<Served> endpoints, Set<String> routeKeys) {
        TreeMap<Locality, List<LbEndpoint>> byLocality = new TreeMap<>();
        for (Served s : endpoints) {
            LbEndpoint.Builder lb =
                    lbEndpoint(s).setHealthStatus(health(s.endpoint().health()));
            Struct labels = labels(s.endpoint(), routeKeys);
            if (labels != null) lb.setMetadata(Metadata.newBuilder().putFilterMetadata(LB_METADATA, labels));
            byLocality
                    .computeIfAbsent(s.endpoint().locality(), l -> new ArrayList<>())
                    .add(lb.build());
        }
        ClusterLoadAssignment.Builder cla = ClusterLoadAssignment.newBuilder().setClusterName(name);
        byLocality.forEach((l, lbs) -> cla.addEndpoints(locality(locality(l), lbs)));
        return cla.build();
    }

    /**
     * The proxyless gRPC clients' load assignment. gRPC's {@code round_robin} ignores endpoint weights and its
     * {@code xds_wrr_locality} picks a locality by weight (A27, A52), so the healthy endpoints of a locality are
     * grouped by weight: a locality whose endpoints weigh the same stays as it is; otherwise each weight {@code w}
     * gets a locality of its own, sub zone {@code <sub zone>/weight-<w>}, weighing {@code w} times its endpoints.
     * Unhealthy and draining endpoints are left out (gRPC would not call them, and their weight would count), and
     * so are the {@code envoy.lb} labels (gRPC has no subset load balancer).
     */
    private static ClusterLoadAssignment grpcLoadAssignment(String name, List<Served> endpoints) {
        ClusterLoadAssignment.Builder cla = ClusterLoadAssignment.newBuilder().setClusterName(name);
        grpcGroups(endpoints).forEach((l, byWeight) -> {
            io.envoyproxy.envoy.config.core.v3.Locality base = locality(l);
            for (Map.Entry<Integer, List<Served>> w : byWeight.entrySet()) {
                io.envoyproxy.envoy.config.core.v3.Locality named = byWeight.size() == 1
                        ? base
                        : base.toBuilder()
                                .setSubZone(grpcSubZone(l, byWeight, w.getKey()))
                                .build();
                List<LbEndpoint> lbs = new ArrayList<>(w.getValue().size());
                for (Served s : w.getValue())
                    lbs.add(lbEndpoint(s).setHealthStatus(HealthStatus.HEALTHY).build());
                cla.addEndpoints(locality(named, lbs));
            }
        });
        return cla.build();
    }

    /** The healthy endpoints of the proxyless form, by locality, then by weight. */
    private static TreeMap<Locality, TreeMap<Integer, List<Served>>> grpcGroups(List<Served> endpoints) {
        TreeMap<Locality, TreeMap<Integer, List<Served>>> byLocality = new TreeMap<>();
        for (Served s : endpoints) {
            if (s.endpoint().health() != Health.HEALTHY) continue;
            byLocality
                    .computeIfAbsent(s.endpoint().locality(), l -> new TreeMap<>())
                    .computeIfAbsent(s.endpoint().weight(), w -> new ArrayList<>())
                    .add(s);
        }
        return byLocality;
    }

    /** The sub zone of a proxyless locality: the registry's, or {@code <sub zone>/weight-<w>} when weights differ. */
    private static String grpcSubZone(Locality l, Map<Integer, ?> byWeight, int weight) {
        return byWeight.size() == 1
                ? l.subZone()
                : (l.subZone().isEmpty() ? "" : l.subZone() + "/") + "weight-" + weight;
    }

    private static LbEndpoint.Builder lbEndpoint(Served s) {
        return LbEndpoint.newBuilder().setEndpoint(s.host()).setLoadBalancingWeight(s.weight());
    }

    /**
     * A locality and its endpoints, weighing their sum. The locality is always set, with empty strings where the
     * registry gives none: grpc-go, grpc-js and C-core refuse a load assignment with a locality missing.
     */
    private static LocalityLbEndpoints locality(io.envoyproxy.envoy.config.core.v3.Locality l, List<LbEndpoint> lbs) {
        long sum = 0;
        for (LbEndpoint e : lbs) sum += e.getLoadBalancingWeight().getValue();
        // a sum above 32 bits is left at 0 here and refused by the rules, which recompute it
        return LocalityLbEndpoints.newBuilder()
                .setLocality(l)
                .addAllLbEndpoints(lbs)
                .setLoadBalancingWeight(UInt32Value.of(sum > MAX_UINT32 ? 0 : (int) sum))
                .build();
    }

    private static io.envoyproxy.envoy.config.core.v3.Locality locality(Locality l) {
        return io.envoyproxy.envoy.config.core.v3.Locality.newBuilder()
                .setRegion(l.region())
                .setZone(l.zone())
                .setSubZone(l.subZone())
                .build();
    }

    private static HealthStatus health(Health h) {
        return switch (h) {
            case HEALTHY -> HealthStatus.HEALTHY;
            case UNHEALTHY -> HealthStatus.UNHEALTHY;
            case DRAINING -> HealthStatus.DRAINING;
        };
    }

    private Struct labels(Endpoint e, Set<String> routeKeys) {
        if (e.labels().isEmpty()) return null;
        Set<String> keys = options.lbLabels();
        if (keys != null && keys.isEmpty() && routeKeys.isEmpty()) return null;
        Struct.Builder s = null;
        for (Map.Entry<String, String> l : e.labels().entrySet()) {
            if (keys != null && !keys.contains(l.getKey()) && !routeKeys.contains(l.getKey())) continue;
            if (s == null) s = Struct.newBuilder();
            s.putFields(l.getKey(), string(l.getValue()));
        }
        return s == null ? null : s.build();
    }

    static Value string(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }

    // ------------------------------------------------------------------ proxyless gRPC

    private void grpcResources(
            String host, List<ServicePort> http, List<XdsResource> out, List<ServiceResources.Skipped> skipped) {
        if (http.isEmpty()) return;
        if (!shapes.grpcKeepsRules(host, http)) {
            grpcResourcesChecked(host, http, out, skipped);
            return;
        }
        String routeName = XdsNames.route(host);
        out.add(resource(XdsType.ROUTE, routeName, routeBytes(host, routeName, http, defaultGrpcPort(http)), false));
        String name = XdsNames.listener(host);
        out.add(resource(XdsType.LISTENER, name, apiListenerBytes(name, routeName), false));
        for (ServicePort p : http) {
            name = XdsNames.listener(host, p.number());
            out.add(resource(XdsType.LISTENER, name, apiListenerBytes(name, routeName), false));
        }
    }

    /** The proxyless route and API listeners made as messages, each checked by every rule. */
    private void grpcResourcesChecked(
            String host, List<ServicePort> http, List<XdsResource> out, List<ServiceResources.Skipped> skipped) {
        ServicePort defaultPort = defaultGrpcPort(http);
        String routeName = XdsNames.route(host);
        RouteConfiguration.Builder rc = RouteConfiguration.newBuilder().setName(routeName);
        for (ServicePort p : http) {
            VirtualHost.Builder vh = VirtualHost.newBuilder()
                    .setName(XdsNames.virtualHost(host, p.number()))
                    .addDomains(host + ":" + p.number());
            if (p == defaultPort) vh.addDomains(host);
            vh.addRoutes(Route.newBuilder()
                    .setMatch(RouteMatch.newBuilder().setPrefix("/"))
                    .setRoute(RouteAction.newBuilder().setCluster(XdsNames.grpcCluster(host, p.number()))));
            rc.addVirtualHosts(vh);
        }
        RouteConfiguration route = rc.build();
        List<Listener> listeners = new ArrayList<>();
        listeners.add(apiListener(XdsNames.listener(host), routeName));
        for (ServicePort p : http) listeners.add(apiListener(XdsNames.listener(host, p.number()), routeName));
        List<String> problems = new ArrayList<>(ConformanceRules.route(route));
        for (Listener l : listeners) problems.addAll(ConformanceRules.listener(l));
        if (!problems.isEmpty()) {
            skipped.add(new ServiceResources.Skipped(host, routeName, "invalid-resource", problems.get(0)));
            return;
        }
        out.add(resource(XdsType.ROUTE, routeName, route, false));
        for (Listener l : listeners) out.add(resource(XdsType.LISTENER, l.getName(), l, false));
    }

    /** The port {@code xds:///<host>} goes to: the first gRPC, Triple, HTTP/2, HTTP, then HTTPS port. */
    static ServicePort defaultGrpcPort(List<ServicePort> httpPorts) {
        Protocol[] preference = {Protocol.GRPC, Protocol.TRIPLE, Protocol.HTTP2, Protocol.HTTP, Protocol.HTTPS};
        for (Protocol want : preference) {
            for (ServicePort p : httpPorts) {
                if (p.protocol() == want) return p;
            }
        }
        return httpPorts.get(0);
    }

    private Listener apiListener(String name, String routeName) {
        HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                .setStatPrefix(name)
                .setRds(Rds.newBuilder().setConfigSource(ADS).setRouteConfigName(routeName))
                .addHttpFilters(HttpFilter.newBuilder().setName(ROUTER_FILTER).setTypedConfig(routerFilter))
                .build();
        return Listener.newBuilder()
                .setName(name)
                .setApiListener(ApiListener.newBuilder()
                        .setApiListener(pack(
                                hcm,
                                "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3"
                                        + ".HttpConnectionManager")))
                .build();
    }

    // ------------------------------------------------------------------ resources of a fixed shape, as bytes

    /**
     * The parts every EDS cluster, API listener and proxyless route configuration share, serialized once, and whether
     * each shape keeps every {@link ConformanceRules rule}: checked here, once, on a resource made the message way
     * (the API listener's HttpConnectionManager parsed back as a client would). Per resource only what depends on the
     * service is left to check, and a resource outside the shape (a name the rules look at, a wildcard host, a port
     * twice) is made and checked the message way, so it is reported as before.
     */
    private final class Shapes {
        final byte[] ads = bytes(ADS);
        final byte[] connectTimeout = bytes(EnvoyTranslator.this.connectTimeout);
        final byte[] commonLbConfig = bytes(EnvoyTranslator.this.commonLbConfig);
        /** The {@code typed_extension_protocol_options} map entry of an HTTP/2 upstream. */
        final byte[] http2Entry = new ProtoWriter(128)
                .stringAlways(1, HTTP_PROTOCOL_OPTIONS)
                .message(2, bytes(http2Options))
                .toByteArray();
        /** The HttpConnectionManager's {@code http_filters}: the router alone. */
        final byte[] routerOnly = bytes(HttpFilter.newBuilder()
                .setName(ROUTER_FILTER)
                .setTypedConfig(routerFilter())
                .build());

        final byte[] matchAll = bytes(RouteMatch.newBuilder().setPrefix("/").build());
        final boolean cluster;
        final boolean http2Cluster;
        final boolean grpc;

        Shapes(boolean byShape) {
            cluster = byShape && shapeKeepsRules(false);
            http2Cluster = byShape && shapeKeepsRules(true);
            String host = "shape.meshbridge.invalid";
            List<ServicePort> ports =
                    List.of(new ServicePort("grpc", 1, Protocol.GRPC), new ServicePort("http", 65535, Protocol.HTTP));
            List<XdsResource> out = new ArrayList<>();
            List<ServiceResources.Skipped> skipped = new ArrayList<>();
            grpcResourcesChecked(host, ports, out, skipped);
            grpc = byShape && skipped.isEmpty();
        }

        private boolean shapeKeepsRules(boolean http2) {
            String name = XdsNames.cluster("shape.meshbridge.invalid", 1);
            return ConformanceRules.cluster(
                            cluster(name, "shape.meshbridge.invalid", new ServicePort("p", 1, Protocol.TCP), http2))
                    .isEmpty();
        }

        /**
         * Whether the load assignments of these endpoints keep every rule by construction, so that they can be written
         * as bytes: {@link #endpoints} left out what is not an IP, a second address and port, and what is not
         * routable (so every endpoint weighs at least 1, and so does every locality); localities are grouped (each
         * once, priority 0, always set); ports are 1..65535 ({@link Endpoint}). What is left is the 32-bit sums: all
         * the weights together fit, so no locality's or priority's sum overflows. (The proxyless form checks its
         * localities once more, see {@link #grpcLoadAssignmentBytes}.)
         */
        boolean endpointsKeepRules(List<Served> endpoints) {
            if (!cluster) return false;
            long sum = 0;
            for (Served s : endpoints) sum += s.endpoint().weight();
            return sum <= MAX_UINT32;
        }

        /** The rules on a cluster's name: set, and no {@code xdstp:} name (which would need more checks). */
        boolean clusterKeepsRules(String name, boolean http2) {
            return (http2 ? http2Cluster : cluster) && !name.isEmpty() && !name.startsWith("xdstp:");
        }

        /**
         * The rules on the names of a service's proxyless route and listeners: every name set, and each domain in
         * one virtual host without a wildcard (ports of distinct numbers, a host without {@code *}).
         */
        boolean grpcKeepsRules(String host, List<ServicePort> http) {
            if (!grpc || host.isEmpty() || host.indexOf('*') >= 0) return false;
            for (int i = 0; i < http.size(); i++) {
                for (int k = i + 1; k < http.size(); k++) {
                    if (http.get(i).number() == http.get(k).number()) return false;
                }
            }
            return true;
        }
    }

    /**
     * A load assignment's bytes, and whether after the cluster_name they are the proxyless form's ({@link
     * #grpcLoadAssignmentBytes}) too: every endpoint healthy (none left out of the proxyless form, each written
     * HEALTHY), without metadata (the proxyless form has none), and the endpoints of each locality of one weight (the
     * proxyless form keeps such a locality as it is, weighing their sum). Then both write the same localities, in
     * locality order, each with its endpoints in the order given, field for field.
     */
    private record Assignment(byte[] bytes, boolean proxylessBody) {}

    /**
     * {@link #envoyLoadAssignment} as bytes (when {@link Shapes#endpointsKeepRules}): the sizes of every endpoint and
     * locality first, then every field into one writer.
     */
    private Assignment envoyLoadAssignmentBytes(String name, List<Served> endpoints, Set<String> routeKeys) {
        List<List<Served>> groups = byLocality(endpoints);
        byte[][] metadata = new byte[endpoints.size()][];
        int[] lbSizes = new int[endpoints.size()];
        byte[][] localities = new byte[groups.size()][];
        byte[][] sums = new byte[groups.size()][];
        int[] lleSizes = new int[groups.size()];
        // the metadata of the last label map: the endpoints of a service mostly share one (the catalog interns them)
        Map<String, String> lastLabels = null;
        byte[] lastMetadata = null;
        boolean proxylessBody = true;
        int total = 0;
        int i = 0;
        for (int g = 0; g < groups.size(); g++) {
            Locality locality = groups.get(g).get(0).endpoint().locality();
            localities[g] = localityBytes(locality, locality.subZone());
            int lle = ProtoWriter.fieldSize(LocalityLbEndpoints.LOCALITY_FIELD_NUMBER, localities[g].length);
            long sum = 0;
            int groupWeight = groups.get(g).get(0).endpoint().weight();
            for (Served s : groups.get(g)) {
                if (lastMetadata == null || s.endpoint().labels() != lastLabels) {
                    lastLabels = s.endpoint().labels();
                    lastMetadata = metadataBytes(s.endpoint(), routeKeys);
                }
                metadata[i] = lastMetadata;
                int weight = s.endpoint().weight();
                proxylessBody &=
                        lastMetadata.length == 0 && s.endpoint().health() == Health.HEALTHY && weight == groupWeight;
                int lb = s.hostField().length
                        + ProtoWriter.varintFieldSize(
                                LbEndpoint.HEALTH_STATUS_FIELD_NUMBER,
                                health(s.endpoint().health()).getNumber())
                        + lastMetadata.length
                        + ProtoWriter.fieldSize(
                                LbEndpoint.LOAD_BALANCING_WEIGHT_FIELD_NUMBER,
                                ProtoWriter.varintFieldSize(UInt32Value.VALUE_FIELD_NUMBER, weight));
                lbSizes[i++] = lb;
                lle += ProtoWriter.fieldSize(LocalityLbEndpoints.LB_ENDPOINTS_FIELD_NUMBER, lb);
                sum += weight;
            }
            sums[g] = uint32(sum);
            lle += ProtoWriter.fieldSize(LocalityLbEndpoints.LOAD_BALANCING_WEIGHT_FIELD_NUMBER, sums[g].length);
            lleSizes[g] = lle;
            total += ProtoWriter.fieldSize(ClusterLoadAssignment.ENDPOINTS_FIELD_NUMBER, lle);
        }
        ProtoWriter cla = new ProtoWriter(16 + 3 * name.length() + total)
                .string(ClusterLoadAssignment.CLUSTER_NAME_FIELD_NUMBER, name);
        i = 0;
        for (int g = 0; g < groups.size(); g++) {
            cla.head(ClusterLoadAssignment.ENDPOINTS_FIELD_NUMBER, lleSizes[g])
                    .message(LocalityLbEndpoints.LOCALITY_FIELD_NUMBER, localities[g]);
            for (Served s : groups.get(g)) {
                int weight = s.endpoint().weight();
                cla.head(LocalityLbEndpoints.LB_ENDPOINTS_FIELD_NUMBER, lbSizes[i])
                        .raw(s.hostField())
                        .varint(
                                LbEndpoint.HEALTH_STATUS_FIELD_NUMBER,
                                health(s.endpoint().health()).getNumber())
                        .raw(metadata[i++])
                        .head(
                                LbEndpoint.LOAD_BALANCING_WEIGHT_FIELD_NUMBER,
                                ProtoWriter.varintFieldSize(UInt32Value.VALUE_FIELD_NUMBER, weight))
                        .varint(UInt32Value.VALUE_FIELD_NUMBER, weight);
            }
            cla.message(LocalityLbEndpoints.LOAD_BALANCING_WEIGHT_FIELD_NUMBER, sums[g]);
        }
        return new Assignment(cla.toByteArray(), proxylessBody);
    }

    /** The endpoints by locality, in locality order, each in the order given. */
    private static List<List<Served>> byLocality(List<Served> endpoints) {
        if (endpoints.isEmpty()) return List.of();
        Locality first = endpoints.get(0).endpoint().locality();
        boolean one = true;
        for (Served s : endpoints) {
            if (!s.endpoint().locality().equals(first)) {
                one = false;
                break;
            }
        }
        if (one) return List.of(endpoints);
        TreeMap<Locality, List<Served>> byLocality = new TreeMap<>();
        for (Served s : endpoints) {
            byLocality
                    .computeIfAbsent(s.endpoint().locality(), l -> new ArrayList<>())
                    .add(s);
        }
        return new ArrayList<>(byLocality.values());
    }

    /** An LbEndpoint's {@code metadata} field with the endpoint's {@code envoy.lb} labels; empty without any. */
    private byte[] metadataBytes(Endpoint e, Set<String> routeKeys) {
        ProtoWriter labels = labelBytes(e, routeKeys);
        return labels == null
                ? new byte[0]
                : new ProtoWriter(160)
                        .message(
                                LbEndpoint.METADATA_FIELD_NUMBER,
                                new ProtoWriter(160)
                                        .message(
                                                Metadata.FILTER_METADATA_FIELD_NUMBER,
                                                new ProtoWriter(160)
                                                        .stringAlways(1, LB_METADATA)
                                                        .message(2, labels)))
                        .toByteArray();
    }

    /**
     * {@link #grpcLoadAssignment} as bytes (when {@link Shapes#endpointsKeepRules}); null when two of its localities
     * would be the same (a registry sub zone named like a weight's), which the message path reports.
     */
    private static byte[] grpcLoadAssignmentBytes(String name, List<Served> endpoints) {
        TreeMap<Locality, TreeMap<Integer, List<Served>>> byLocality = grpcGroups(endpoints);
        ProtoWriter cla = new ProtoWriter(64 + 96 * endpoints.size())
                .string(ClusterLoadAssignment.CLUSTER_NAME_FIELD_NUMBER, name);
        Set<Locality> seen = new HashSet<>();
        for (Map.Entry<Locality, TreeMap<Integer, List<Served>>> l : byLocality.entrySet()) {
            Locality base = l.getKey();
            for (Map.Entry<Integer, List<Served>> w : l.getValue().entrySet()) {
                String subZone = grpcSubZone(base, l.getValue(), w.getKey());
                if (!seen.add(new Locality(base.region(), base.zone(), subZone))) return null;
                ProtoWriter lle = new ProtoWriter(48 + 96 * w.getValue().size())
                        .message(LocalityLbEndpoints.LOCALITY_FIELD_NUMBER, localityBytes(base, subZone));
                byte[] weight = uint32(w.getKey());
                int rest =
                        ProtoWriter.varintFieldSize(LbEndpoint.HEALTH_STATUS_FIELD_NUMBER, HealthStatus.HEALTHY_VALUE)
                                + ProtoWriter.fieldSize(LbEndpoint.LOAD_BALANCING_WEIGHT_FIELD_NUMBER, weight.length);
                for (Served s : w.getValue()) {
                    lle.head(LocalityLbEndpoints.LB_ENDPOINTS_FIELD_NUMBER, s.hostField().length + rest)
                            .raw(s.hostField())
                            .varint(LbEndpoint.HEALTH_STATUS_FIELD_NUMBER, HealthStatus.HEALTHY_VALUE)
                            .message(LbEndpoint.LOAD_BALANCING_WEIGHT_FIELD_NUMBER, weight);
                }
                lle.message(
                        LocalityLbEndpoints.LOAD_BALANCING_WEIGHT_FIELD_NUMBER,
                        uint32((long) w.getKey() * w.getValue().size()));
                cla.message(ClusterLoadAssignment.ENDPOINTS_FIELD_NUMBER, lle);
            }
        }
        return cla.toByteArray();
    }

    private static byte[] localityBytes(Locality l, String subZone) {
        return new ProtoWriter(8 + l.region().length() + l.zone().length() + subZone.length())
                .string(io.envoyproxy.envoy.config.core.v3.Locality.REGION_FIELD_NUMBER, l.region())
                .string(io.envoyproxy.envoy.config.core.v3.Locality.ZONE_FIELD_NUMBER, l.zone())
                .string(io.envoyproxy.envoy.config.core.v3.Locality.SUB_ZONE_FIELD_NUMBER, subZone)
                .toByteArray();
    }

    /** A UInt32Value's bytes. */
    private static byte[] uint32(long value) {
        return new ProtoWriter(8).varint(UInt32Value.VALUE_FIELD_NUMBER, value).toByteArray();
    }

    /** {@link #labels} as a Struct's bytes (fields sorted by key, as deterministic serialization writes a map). */
    private ProtoWriter labelBytes(Endpoint e, Set<String> routeKeys) {
        if (e.labels().isEmpty()) return null;
        Set<String> keys = options.lbLabels();
        if (keys != null && keys.isEmpty() && routeKeys.isEmpty()) return null;
        Map<String, String> labels = e.labels().comparator() == null ? e.labels() : new TreeMap<>(e.labels());
        ProtoWriter s = null;
        for (Map.Entry<String, String> l : labels.entrySet()) {
            if (keys != null && !keys.contains(l.getKey()) && !routeKeys.contains(l.getKey())) continue;
            if (s == null) s = new ProtoWriter(32 * labels.size());
            structString(s, l.getKey(), l.getValue());
        }
        return s;
    }

    /** An EDS cluster as {@link #cluster} makes it, as bytes. */
    private byte[] clusterBytes(String name, String host, ServicePort port, boolean http2) {
        ProtoWriter eds = new ProtoWriter(32 + 2 * name.length())
                .message(Cluster.EdsClusterConfig.EDS_CONFIG_FIELD_NUMBER, shapes.ads)
                .string(Cluster.EdsClusterConfig.SERVICE_NAME_FIELD_NUMBER, name);
        // Struct fields are a map: entries sorted by key, each with its key and value; a Value's string is a oneof
        ProtoWriter fields = new ProtoWriter(64 + host.length());
        structString(fields, "host", host);
        structString(fields, "port", port.name());
        structString(fields, "protocol", port.protocol().portName());
        ProtoWriter metadata = new ProtoWriter(96 + host.length())
                .message(
                        Metadata.FILTER_METADATA_FIELD_NUMBER,
                        new ProtoWriter(96 + host.length())
                                .stringAlways(1, BRIDGE_METADATA)
                                .message(2, fields));
        ProtoWriter w = new ProtoWriter(256 + 2 * name.length() + host.length())
                .string(Cluster.NAME_FIELD_NUMBER, name)
                .varint(Cluster.TYPE_FIELD_NUMBER, Cluster.DiscoveryType.EDS_VALUE)
                .message(Cluster.EDS_CLUSTER_CONFIG_FIELD_NUMBER, eds)
                .message(Cluster.CONNECT_TIMEOUT_FIELD_NUMBER, shapes.connectTimeout)
                .message(Cluster.METADATA_FIELD_NUMBER, metadata)
                .message(Cluster.COMMON_LB_CONFIG_FIELD_NUMBER, shapes.commonLbConfig);
        if (http2) w.message(Cluster.TYPED_EXTENSION_PROTOCOL_OPTIONS_FIELD_NUMBER, shapes.http2Entry);
        return w.toByteArray();
    }

    private static void structString(ProtoWriter fields, String key, String value) {
        fields.message(
                Struct.FIELDS_FIELD_NUMBER,
                new ProtoWriter(16 + value.length())
                        .stringAlways(1, key)
                        .message(
                                2,
                                new ProtoWriter(8 + value.length())
                                        .stringAlways(Value.STRING_VALUE_FIELD_NUMBER, value)));
    }

    /** An API listener as {@link #apiListener} makes it, as bytes. */
    private byte[] apiListenerBytes(String name, String routeName) {
        ProtoWriter hcm = new ProtoWriter(160 + name.length() + routeName.length())
                .string(HttpConnectionManager.STAT_PREFIX_FIELD_NUMBER, name)
                .message(
                        HttpConnectionManager.RDS_FIELD_NUMBER,
                        new ProtoWriter(32 + routeName.length())
                                .message(Rds.CONFIG_SOURCE_FIELD_NUMBER, shapes.ads)
                                .string(Rds.ROUTE_CONFIG_NAME_FIELD_NUMBER, routeName))
                .message(HttpConnectionManager.HTTP_FILTERS_FIELD_NUMBER, shapes.routerOnly);
        ProtoWriter any = new ProtoWriter(256 + name.length() + routeName.length())
                .string(Any.TYPE_URL_FIELD_NUMBER, ConformanceRules.HCM_TYPE)
                .message(Any.VALUE_FIELD_NUMBER, hcm);
        return new ProtoWriter(272 + 2 * name.length() + routeName.length())
                .string(Listener.NAME_FIELD_NUMBER, name)
                .message(
                        Listener.API_LISTENER_FIELD_NUMBER,
                        new ProtoWriter(264 + name.length() + routeName.length())
                                .message(ApiListener.API_LISTENER_FIELD_NUMBER, any))
                .toByteArray();
    }

    /** The proxyless route configuration as {@link #grpcResources} makes it, as bytes. */
    private byte[] routeBytes(String host, String routeName, List<ServicePort> http, ServicePort defaultPort) {
        ProtoWriter rc = new ProtoWriter(64 + http.size() * (96 + 4 * host.length()))
                .string(RouteConfiguration.NAME_FIELD_NUMBER, routeName);
        for (ServicePort p : http) {
            String cluster = XdsNames.grpcCluster(host, p.number());
            ProtoWriter vh = new ProtoWriter(64 + 4 * host.length())
                    .string(VirtualHost.NAME_FIELD_NUMBER, XdsNames.virtualHost(host, p.number()))
                    .string(VirtualHost.DOMAINS_FIELD_NUMBER, host + ":" + p.number());
            if (p == defaultPort) vh.string(VirtualHost.DOMAINS_FIELD_NUMBER, host);
            vh.message(
                    VirtualHost.ROUTES_FIELD_NUMBER,
                    new ProtoWriter(32 + cluster.length())
                            .message(Route.MATCH_FIELD_NUMBER, shapes.matchAll)
                            .message(
                                    Route.ROUTE_FIELD_NUMBER,
                                    new ProtoWriter(8 + cluster.length())
                                            .string(RouteAction.CLUSTER_FIELD_NUMBER, cluster)));
            rc.message(RouteConfiguration.VIRTUAL_HOSTS_FIELD_NUMBER, vh);
        }
        return rc.toByteArray();
    }

    /** A message's deterministic bytes. */
    static byte[] bytes(Message message) {
        return pack(message, "").getValue().toByteArray();
    }

    // ------------------------------------------------------------------ serialization and versions

    static XdsResource resource(XdsType type, String name, Message message, boolean wildcard) {
        ByteString value = pack(message, type.typeUrl()).getValue();
        return new XdsResource(type, name, version(type, name, value), value, wildcard);
    }

    /** A resource from its bytes (the array is the resource's from now on). */
    static XdsResource resource(XdsType type, String name, byte[] bytes, boolean wildcard) {
        ByteString value = UnsafeByteOperations.unsafeWrap(bytes);
        return new XdsResource(type, name, version(type, name, value), value, wildcard);
    }

    /** Serializes deterministically (map fields sorted by key) into an Any. */
    static Any pack(Message message, String typeUrl) {
        byte[] bytes = new byte[message.getSerializedSize()];
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.useDeterministicSerialization();
        try {
            message.writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.checkNoSpaceLeft();
        return Any.newBuilder()
                .setTypeUrl(typeUrl)
                .setValue(UnsafeByteOperations.unsafeWrap(bytes))
                .build();
    }

    /** Each type's URL, hashed once: every version of the type starts with it. */
    private static final Hash64[] TYPE_URL_HASHES = Arrays.stream(XdsType.values())
            .map(t -> new Hash64().putString(t.typeUrl()))
            .toArray(Hash64[]::new);

    /** The content version of a resource: a hash of its type, name and bytes, never 0 or {@code Long.MIN_VALUE}. */
    static long version(XdsType type, String name, ByteString value) {
        Hash64 h = TYPE_URL_HASHES[type.ordinal()].copy().putString(name);
        putBytes(h, value);
        long v = h.finish();
        // 0 and Long.MIN_VALUE mean "absent" and "unknown" to the server
        return v == 0 || v == Long.MIN_VALUE ? 1 : v;
    }

    /** Feeds bytes into a hash, eight at a time. */
    static Hash64 putBytes(Hash64 h, ByteString value) {
        ByteBuffer bytes = value.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(bytes.remaining());
        while (bytes.remaining() >= 8) h.putLong(bytes.getLong());
        while (bytes.hasRemaining()) h.putInt(bytes.get());
        return h;
    }
}
