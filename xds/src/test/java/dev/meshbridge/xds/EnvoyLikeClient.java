package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A raw ADS client that subscribes the way Envoy does: CDS and LDS as wildcards; then, by name, the load assignments
 * of the EDS clusters it holds, the route configurations its listeners name (HTTP RDS and Dubbo DRDS) and the secrets
 * their TLS contexts name;
 * it ACKs every response and follows every change of those names, in SotW or Delta. It holds what it was sent, as
 * Envoy's config dump would show it, and the order of the responses it got.
 */
final class EnvoyLikeClient {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final XdsType[] BY_NAME = {XdsType.ENDPOINT, XdsType.ROUTE, XdsType.DUBBO_ROUTE, XdsType.SECRET};

    private final AdsClient ads;
    private final boolean delta;
    private final Map<XdsType, Map<String, Any>> held = new EnumMap<>(XdsType.class);
    private final Map<XdsType, Set<String>> subscribed = new EnumMap<>(XdsType.class);
    private final Map<XdsType, DiscoveryResponse> lastSotw = new EnumMap<>(XdsType.class);
    private final List<XdsType> received = new ArrayList<>();
    private final List<Received> log = new ArrayList<>();

    /**
     * One response as it arrived.
     *
     * @param type its type
     * @param names the resources it carried (Delta: added or changed ones)
     * @param bytes its serialized size
     */
    record Received(XdsType type, List<String> names, int bytes) {}

    EnvoyLikeClient(AdsClient ads, boolean delta) {
        this.ads = ads;
        this.delta = delta;
        for (XdsType t : XdsType.values()) {
            held.put(t, new TreeMap<>());
            subscribed.put(t, new TreeSet<>());
        }
    }

    /** Opens the stream and subscribes to every cluster and listener. */
    EnvoyLikeClient start() {
        if (delta) {
            ads.openDelta();
            ads.delta(XdsType.CLUSTER, List.of(), List.of(), Map.of());
            ads.delta(XdsType.LISTENER, List.of(), List.of(), Map.of());
        } else {
            ads.openSotw();
            ads.subscribe(XdsType.CLUSTER);
            ads.subscribe(XdsType.LISTENER);
        }
        return this;
    }

    /** Takes responses until {@code check} passes on what the client holds; fails with the last error after 20 s. */
    void await(ThrowingCheck check) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        AssertionError last = null;
        while (true) {
            try {
                check.run(this);
                return;
            } catch (AssertionError e) {
                last = e;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            if (System.nanoTime() > deadline) throw last;
            takeOne();
        }
    }

    @FunctionalInterface
    interface ThrowingCheck {
        void run(EnvoyLikeClient c) throws Exception;
    }

    private void takeOne() {
        if (delta) {
            handle(ads.nextDelta());
        } else {
            handle(ads.next());
        }
    }

    /** Takes the next response; fails when none comes within AdsClient's timeout. */
    XdsType next() {
        takeOne();
        return received.get(received.size() - 1);
    }

    /** Every response received so far, in order, with the resources it carried and its size. */
    List<Received> log() {
        return List.copyOf(log);
    }

    /** The types of every response received so far, in order. */
    List<XdsType> received() {
        return List.copyOf(received);
    }

    Map<XdsType, Map<String, Any>> held() {
        return held;
    }

    Map<String, Any> held(XdsType type) {
        return held.get(type);
    }

    RouteConfiguration routeConfiguration(String name) {
        Any a = held.get(XdsType.ROUTE).get(name);
        assertThat(a).as("route configuration %s", name).isNotNull();
        return IngressTables.unpack(a, RouteConfiguration.class);
    }

    Cluster cluster(String name) {
        Any a = held.get(XdsType.CLUSTER).get(name);
        assertThat(a).as("cluster %s", name).isNotNull();
        return IngressTables.unpack(a, Cluster.class);
    }

    Listener listener(String name) {
        Any a = held.get(XdsType.LISTENER).get(name);
        assertThat(a).as("listener %s", name).isNotNull();
        return IngressTables.unpack(a, Listener.class);
    }

    /** {@code ip:port} of every endpoint of a load assignment, sorted. */
    List<String> endpoints(String name) {
        Any a = held.get(XdsType.ENDPOINT).get(name);
        assertThat(a).as("load assignment %s", name).isNotNull();
        List<String> out = new ArrayList<>();
        ClusterLoadAssignment cla = IngressTables.unpack(a, ClusterLoadAssignment.class);
        cla.getEndpointsList()
                .forEach(l -> l.getLbEndpointsList().forEach(e -> {
                    var sa = e.getEndpoint().getAddress().getSocketAddress();
                    out.add(sa.getAddress() + ":" + sa.getPortValue());
                }));
        out.sort(null);
        return out;
    }

    /** Per endpoint ({@code address:port}), its {@code envoy.lb} metadata as {@code key=value} pairs, sorted. */
    Map<String, List<String>> lbLabels(String name) {
        Any a = held.get(XdsType.ENDPOINT).get(name);
        assertThat(a).as("load assignment %s", name).isNotNull();
        Map<String, List<String>> out = new java.util.TreeMap<>();
        ClusterLoadAssignment cla = IngressTables.unpack(a, ClusterLoadAssignment.class);
        cla.getEndpointsList()
                .forEach(l -> l.getLbEndpointsList().forEach(e -> {
                    var sa = e.getEndpoint().getAddress().getSocketAddress();
                    List<String> labels = new ArrayList<>();
                    var lb = e.getMetadata().getFilterMetadataMap().get("envoy.lb");
                    if (lb != null) lb.getFieldsMap().forEach((k, v) -> labels.add(k + "=" + v.getStringValue()));
                    labels.sort(null);
                    out.put(sa.getAddress() + ":" + sa.getPortValue(), labels);
                }));
        return out;
    }

    // ------------------------------------------------------------------ protocol

    private void handle(DiscoveryResponse r) {
        XdsType type = XdsType.ofTypeUrl(r.getTypeUrl());
        received.add(type);
        lastSotw.put(type, r);
        List<String> names = new ArrayList<>();
        for (Any a : r.getResourcesList()) names.add(name(type, a));
        log.add(new Received(type, names, r.getSerializedSize()));
        Map<String, Any> into = held.get(type);
        if (type.fullState()) into.clear();
        for (Any a : r.getResourcesList()) into.put(name(type, a), a);
        if (!type.fullState()) into.keySet().retainAll(subscribed.get(type));
        ads.ack(r, subscribed.get(type).toArray(String[]::new));
        followNames();
    }

    private void handle(DeltaDiscoveryResponse r) {
        XdsType type = XdsType.ofTypeUrl(r.getTypeUrl());
        received.add(type);
        log.add(new Received(
                type, r.getResourcesList().stream().map(Resource::getName).toList(), r.getSerializedSize()));
        Map<String, Any> into = held.get(type);
        for (Resource res : r.getResourcesList()) into.put(res.getName(), res.getResource());
        for (String gone : r.getRemovedResourcesList()) into.remove(gone);
        ads.deltaAck(r);
        followNames();
    }

    /** Subscribes to the names the held clusters and listeners need, and drops the others, as Envoy does. */
    private void followNames() {
        Map<XdsType, Set<String>> wanted = new EnumMap<>(XdsType.class);
        for (XdsType t : BY_NAME) wanted.put(t, new TreeSet<>());
        for (Any a : held.get(XdsType.CLUSTER).values()) {
            Cluster c = IngressTables.unpack(a, Cluster.class);
            if (c.getType() == Cluster.DiscoveryType.EDS) {
                String service = c.getEdsClusterConfig().getServiceName();
                wanted.get(XdsType.ENDPOINT).add(service.isEmpty() ? c.getName() : service);
            }
        }
        for (Any a : held.get(XdsType.LISTENER).values()) {
            Listener l = IngressTables.unpack(a, Listener.class);
            for (FilterChain fc : l.getFilterChainsList()) {
                for (var f : fc.getFiltersList()) {
                    if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                        var hcm = IngressTables.unpack(f.getTypedConfig(), HttpConnectionManager.class);
                        if (hcm.hasRds())
                            wanted.get(XdsType.ROUTE).add(hcm.getRds().getRouteConfigName());
                    }
                    if (f.getTypedConfig().is(DubboProxy.class)) {
                        var proxy = IngressTables.unpack(f.getTypedConfig(), DubboProxy.class);
                        if (proxy.hasDrds())
                            wanted.get(XdsType.DUBBO_ROUTE).add(proxy.getDrds().getRouteConfigName());
                    }
                }
                if (fc.hasTransportSocket()) {
                    var tls =
                            IngressTables.unpack(fc.getTransportSocket().getTypedConfig(), DownstreamTlsContext.class);
                    tls.getCommonTlsContext()
                            .getTlsCertificateSdsSecretConfigsList()
                            .forEach(s -> wanted.get(XdsType.SECRET).add(s.getName()));
                }
            }
        }
        for (XdsType t : BY_NAME) {
            Set<String> now = subscribed.get(t);
            Set<String> next = wanted.get(t);
            if (now.equals(next)) continue;
            if (delta) {
                List<String> add = next.stream().filter(n -> !now.contains(n)).toList();
                List<String> drop = now.stream().filter(n -> !next.contains(n)).toList();
                ads.delta(t, add, drop, Map.of());
            } else {
                DiscoveryResponse last = lastSotw.get(t);
                ads.request(
                        t,
                        last == null ? "" : last.getVersionInfo(),
                        last == null ? "" : last.getNonce(),
                        List.copyOf(next));
            }
            subscribed.put(t, new TreeSet<>(next));
            held.get(t).keySet().retainAll(next);
        }
    }

    private static String name(XdsType type, Any a) {
        try {
            return AdsSotwTest.name(a);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(type + " does not parse", e);
        }
    }
}
