package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.UInt32Value;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.envoy.validation.EnvoyValidators;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.cluster.v3.LoadBalancingPolicy;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.ApiConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RedirectAction;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link ConformanceRules}: every resource the translator makes for generated catalogs keeps every rule, and the
 * proxyless form splits traffic as the registry's weights say; and each rule catches the resource it is about (the
 * forms the bridge once sent among them).
 */
class ConformanceRulesTest {

    private final EnvoyTranslator translator = new EnvoyTranslator();

    // ------------------------------------------------------------------ what the translator makes

    /**
     * 300 generated services (ports of every protocol, 0 to 12 endpoints in up to 3 localities, some without one,
     * weights 1 to 1000 with many repeated, every health, some disabled or weight 0): every resource keeps Envoy's
     * proto rules and every client's rules, and what a gRPC client holds lets it call every port.
     */
    @Test
    void generatedCatalogs_everyResourceKeepsEveryRule() {
        Random random = new Random(14);
        int grpcLoadAssignments = 0;
        java.util.SortedMap<String, EnvoySidecarTranslator.Entry> entries = new java.util.TreeMap<>();
        Map<XdsType, Map<String, com.google.protobuf.Any>> envoyHolds = new java.util.EnumMap<>(XdsType.class);
        for (int i = 0; i < 300; i++) {
            MeshService s = generated(random, i);
            ServiceResources r = translator.translate(s);
            entries.put(s.host(), EnvoySidecarTranslator.entry(s, r));
            for (XdsResource x : r.resources())
                envoyHolds.computeIfAbsent(x.type(), t -> new TreeMap<>()).put(x.name(), x.any());
            assertThat(r.skipped()).as(s.host()).isEmpty();
            for (XdsResource x : r.resources()) {
                assertThat(EnvoyValidators.validate(x.any())).as(x.name()).isEmpty();
            }
            assertThat(ConformanceRules.proxyless(EnvoyTranslatorTest.asClientHolds(r)))
                    .as(s.host())
                    .isEmpty();
            grpcLoadAssignments += r.ofType(XdsType.ENDPOINT).stream()
                    .filter(x -> x.name().startsWith("grpc|"))
                    .count();
        }
        assertThat(grpcLoadAssignments).as("proxyless load assignments checked").isGreaterThan(200);

        // a sidecar's outbound listeners over those 300 services, with per-port ones for the default service ports
        SidecarResources sidecar = new EnvoySidecarTranslator(
                        translator,
                        new SidecarOptions(true, "0.0.0.0", 15001, List.of(80, 443, 50051), 20880, List.of()))
                .translate(entries);
        for (XdsResource x : sidecar.resources()) {
            envoyHolds.computeIfAbsent(x.type(), t -> new TreeMap<>()).put(x.name(), x.any());
            // what a gRPC client could ask for by name keeps its rules too
            if (x.type() == XdsType.ROUTE)
                assertThat(ConformanceRules.route(EnvoySidecarTranslatorTest.unpack(
                                x, io.envoyproxy.envoy.config.route.v3.RouteConfiguration.class)))
                        .as(x.name())
                        .isEmpty();
        }
        assertThat(sidecar.resources()).hasSizeGreaterThanOrEqualTo(7);
        // Envoy's generated validators on every resource, and every name a listener or route gives resolves
        assertThat(EnvoyConfigCheck.check(envoyHolds)).isEmpty();
    }

    /**
     * The share of the calls each endpoint gets from a gRPC client, as xds_wrr_locality and round_robin pick (a
     * locality by its weight, then each endpoint in it in turn), is its weight over the sum of the healthy routable
     * endpoints' weights, in every generated service: what Envoy does with the endpoint weights.
     */
    @Test
    void generatedCatalogs_grpcShares_areTheRegistryWeights() {
        Random random = new Random(58);
        for (int i = 0; i < 300; i++) {
            MeshService s = generated(random, i);
            ServiceResources r = translator.translate(s);
            for (ServicePort p : EnvoyTranslator.grpcServedPorts(r)) {
                ClusterLoadAssignment cla =
                        EnvoyTranslatorTest.loadAssignment(r, XdsNames.grpcCluster(s.host(), p.number()));
                Map<String, Double> expected = new TreeMap<>();
                long total = 0;
                for (Endpoint e : s.routableEndpoints()) {
                    if (e.health() == Health.HEALTHY && e.port(p.name()) != 0) total += e.weight();
                }
                for (Endpoint e : s.routableEndpoints()) {
                    if (e.health() == Health.HEALTHY && e.port(p.name()) != 0)
                        expected.put(e.address() + ":" + e.port(p.name()), (double) e.weight() / total);
                }
                assertThat(grpcShares(cla)).as(cla.getClusterName()).hasSameSizeAs(expected);
                grpcShares(cla)
                        .forEach((address, share) -> assertThat(share)
                                .as(address)
                                .isCloseTo(expected.get(address), org.assertj.core.data.Offset.offset(1e-9)));
            }
        }
    }

    /** Each endpoint's share under gRPC's pick: its locality's weight over the total, shared by the locality's. */
    private static Map<String, Double> grpcShares(ClusterLoadAssignment cla) {
        long total = 0;
        for (LocalityLbEndpoints l : cla.getEndpointsList())
            total += l.getLoadBalancingWeight().getValue();
        Map<String, Double> shares = new TreeMap<>();
        for (LocalityLbEndpoints l : cla.getEndpointsList()) {
            for (LbEndpoint e : l.getLbEndpointsList()) {
                var sa = e.getEndpoint().getAddress().getSocketAddress();
                shares.put(
                        sa.getAddress() + ":" + sa.getPortValue(),
                        (double) l.getLoadBalancingWeight().getValue() / total / l.getLbEndpointsCount());
            }
        }
        return shares;
    }

    static MeshService generated(Random random, int i) {
        Protocol[] protocols = {Protocol.GRPC, Protocol.TRIPLE, Protocol.HTTP, Protocol.HTTP2, Protocol.DUBBO};
        List<ServicePort> ports = new ArrayList<>();
        int portCount = 1 + random.nextInt(2);
        for (int k = 0; k < portCount; k++) {
            Protocol p = protocols[random.nextInt(protocols.length)];
            ports.add(new ServicePort(p.portName() + k, 8000 + k, p));
        }
        Locality[] localities = {
            Locality.NONE, Locality.of("eu-west", "zone-a"), Locality.of("eu-west", "zone-b"), Locality.of("us", "")
        };
        int[] weights = {100, 100, 100, 50, 50, 1, 1000, 0, 7};
        Health[] health = {Health.HEALTHY, Health.HEALTHY, Health.HEALTHY, Health.UNHEALTHY, Health.DRAINING};
        List<Endpoint> endpoints = new ArrayList<>();
        int count = random.nextInt(13);
        for (int e = 0; e < count; e++) {
            Endpoint.Builder b = Endpoint.builder("10." + (i / 200) + "." + (i % 200) + "." + (e + 1))
                    .weight(weights[random.nextInt(weights.length)])
                    .enabled(random.nextInt(10) > 0)
                    .health(health[random.nextInt(health.length)])
                    .locality(localities[random.nextInt(localities.length)]);
            for (ServicePort p : ports) b.port(p.name(), 20000 + p.number());
            endpoints.add(b.build());
        }
        ports.sort((a, b) -> Integer.compare(a.number(), b.number()));
        return new MeshService(
                "svc-" + i + ".generated",
                ports,
                endpoints,
                new TreeMap<>(),
                new TreeSet<>(List.of(ServiceKey.of("gen", "gen", "svc-" + i))),
                "v" + i);
    }

    // ------------------------------------------------------------------ each rule catches its case

    @Test
    void loadAssignment_withoutLocality_isRefused_asGrpcGoGrpcJsAndCcoreDo() {
        // what the bridge sent before: ZooKeeper gives no locality, so none was set
        ClusterLoadAssignment cla = ClusterLoadAssignment.newBuilder()
                .setClusterName("c")
                .addEndpoints(LocalityLbEndpoints.newBuilder()
                        .addLbEndpoints(endpoint("10.0.0.1", 100))
                        .setLoadBalancingWeight(UInt32Value.of(100)))
                .build();

        assertThat(ConformanceRules.loadAssignment(cla))
                .singleElement()
                .asString()
                .contains("has no locality");
    }

    @Test
    void loadAssignment_rulesOnLocalitiesEndpointsAndPriorities() {
        assertThat(ConformanceRules.loadAssignment(cla(locality("", 0, endpoint("10.0.0.1", 100)))))
                .anySatisfy(p -> assertThat(p).contains("has no weight"));
        assertThat(ConformanceRules.loadAssignment(cla(
                        locality("a", 100, endpoint("10.0.0.1", 100)), locality("a", 100, endpoint("10.0.0.2", 100)))))
                .anySatisfy(p -> assertThat(p).contains("appears twice in priority 0"));
        assertThat(ConformanceRules.loadAssignment(cla(
                        locality("a", 100, endpoint("10.0.0.1", 100)), locality("b", 100, endpoint("10.0.0.1", 100)))))
                .anySatisfy(p -> assertThat(p).contains("10.0.0.1:50051 appears twice"));
        assertThat(ConformanceRules.loadAssignment(cla(locality("a", 0, endpoint("10.0.0.1", 0)))))
                .anySatisfy(p -> assertThat(p).contains("has no weight of at least 1"));
        assertThat(ConformanceRules.loadAssignment(cla(locality("a", 100, endpoint("orders-1.internal", 100)))))
                .anySatisfy(p -> assertThat(p).contains("is not an IP address"));
        assertThat(ConformanceRules.loadAssignment(cla(locality("a", 99, endpoint("10.0.0.1", 100)))))
                .anySatisfy(p -> assertThat(p).contains("is not its endpoints' sum 100"));
        LocalityLbEndpoints second = locality("b", 100, endpoint("10.0.0.2", 100)).toBuilder()
                .setPriority(2)
                .build();
        assertThat(ConformanceRules.loadAssignment(cla(locality("a", 100, endpoint("10.0.0.1", 100)), second)))
                .anySatisfy(p -> assertThat(p).contains("do not run from 0 without a gap"));
        assertThat(ConformanceRules.loadAssignment(cla(locality("a", 100, endpoint("10.0.0.1", 100)))))
                .isEmpty();
    }

    @Test
    void grpcLoadAssignment_mixedWeightsInOneLocality_orAnUnhealthyEndpoint_areRefused() {
        // round_robin would call these two equally, whatever their weights say
        ClusterLoadAssignment mixed = cla(locality("a", 150, endpoint("10.0.0.1", 100), endpoint("10.0.0.2", 50)));
        assertThat(ConformanceRules.loadAssignment(mixed)).isEmpty();
        assertThat(ConformanceRules.grpcLoadAssignment(mixed))
                .singleElement()
                .asString()
                .contains("endpoints of different weights");

        LbEndpoint unhealthy = endpoint("10.0.0.2", 100).toBuilder()
                .setHealthStatus(HealthStatus.UNHEALTHY)
                .build();
        assertThat(ConformanceRules.grpcLoadAssignment(cla(locality("a", 200, endpoint("10.0.0.1", 100), unhealthy))))
                .singleElement()
                .asString()
                .contains("not HEALTHY");
    }

    @Test
    void cluster_rulesOnTypeSourcePolicyAndTransport() {
        Cluster good = Cluster.newBuilder()
                .setName("c")
                .setType(Cluster.DiscoveryType.EDS)
                .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(EnvoyTranslator.ADS))
                .setConnectTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(1))
                .build();
        assertThat(ConformanceRules.cluster(good)).isEmpty();
        assertThat(ConformanceRules.cluster(good.toBuilder()
                        .setLbPolicy(Cluster.LbPolicy.LEAST_REQUEST)
                        .build()))
                .singleElement()
                .asString()
                .contains("LEAST_REQUEST");
        assertThat(ConformanceRules.cluster(good.toBuilder()
                        .setLbPolicy(Cluster.LbPolicy.RING_HASH)
                        .setRingHashLbConfig(Cluster.RingHashLbConfig.newBuilder()
                                .setHashFunction(Cluster.RingHashLbConfig.HashFunction.MURMUR_HASH_2))
                        .build()))
                .singleElement()
                .asString()
                .contains("not XX_HASH");
        assertThat(ConformanceRules.cluster(good.toBuilder()
                        .setLoadBalancingPolicy(LoadBalancingPolicy.getDefaultInstance())
                        .build()))
                .singleElement()
                .asString()
                .contains("load_balancing_policy");
        assertThat(ConformanceRules.cluster(good.toBuilder()
                        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder()
                                .setEdsConfig(ConfigSource.newBuilder()
                                        .setApiConfigSource(ApiConfigSource.getDefaultInstance())))
                        .build()))
                .singleElement()
                .asString()
                .contains("neither ADS nor self");
        assertThat(ConformanceRules.cluster(good.toBuilder()
                        .setType(Cluster.DiscoveryType.STRICT_DNS)
                        .build()))
                .singleElement()
                .asString()
                .contains("not of type EDS");
        assertThat(ConformanceRules.cluster(
                        good.toBuilder().setLrsServer(EnvoyTranslator.ADS).build()))
                .singleElement()
                .asString()
                .contains("lrs_server");
    }

    @Test
    void listener_rulesOnTheHttpConnectionManagerAndItsFilters() {
        HttpFilter router = HttpFilter.newBuilder()
                .setName("envoy.filters.http.router")
                .setTypedConfig(Any.newBuilder().setTypeUrl(ConformanceRules.ROUTER_TYPE))
                .build();
        HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                .setRds(io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds.newBuilder()
                        .setConfigSource(EnvoyTranslator.ADS)
                        .setRouteConfigName("r"))
                .addHttpFilters(router)
                .build();
        assertThat(ConformanceRules.listener(apiListener(hcm))).isEmpty();

        HttpFilter fault = HttpFilter.newBuilder()
                .setName("fault")
                .setTypedConfig(Any.newBuilder()
                        .setTypeUrl("type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault"))
                .build();
        assertThat(ConformanceRules.listener(apiListener(hcm.toBuilder()
                        .clearHttpFilters()
                        .addHttpFilters(router)
                        .addHttpFilters(fault)
                        .build())))
                .anySatisfy(p -> assertThat(p).contains("the router is not last"))
                .anySatisfy(p -> assertThat(p).contains("is not known to every gRPC client"));
        assertThat(ConformanceRules.listener(
                        apiListener(hcm.toBuilder().addHttpFilters(router).build())))
                .anySatisfy(p -> assertThat(p).contains("appears twice"));
        assertThat(ConformanceRules.listener(
                        apiListener(hcm.toBuilder().setXffNumTrustedHops(1).build())))
                .singleElement()
                .asString()
                .contains("xff_num_trusted_hops");
        assertThat(ConformanceRules.listener(
                        apiListener(hcm.toBuilder().clearHttpFilters().build())))
                .singleElement()
                .asString()
                .contains("no HTTP filter");
        assertThat(ConformanceRules.listener(apiListener(hcm).toBuilder()
                        .setUseOriginalDst(BoolValue.of(true))
                        .build()))
                .singleElement()
                .asString()
                .contains("use_original_dst");
    }

    @Test
    void route_rulesOnDomainsMatchesAndActions() {
        Route toCluster = Route.newBuilder()
                .setMatch(io.envoyproxy.envoy.config.route.v3.RouteMatch.newBuilder()
                        .setPrefix("/"))
                .setRoute(io.envoyproxy.envoy.config.route.v3.RouteAction.newBuilder()
                        .setCluster("c"))
                .build();
        RouteConfiguration good = RouteConfiguration.newBuilder()
                .setName("r")
                .addVirtualHosts(VirtualHost.newBuilder()
                        .setName("v")
                        .addDomains("shop.dubbo")
                        .addRoutes(toCluster))
                .build();
        assertThat(ConformanceRules.route(good)).isEmpty();

        Route redirect = toCluster.toBuilder()
                .setRedirect(RedirectAction.newBuilder().setHostRedirect("x"))
                .build();
        assertThat(ConformanceRules.route(withRoute(good, redirect)))
                .singleElement()
                .asString()
                .contains("is not route");
        Route noWeight = toCluster.toBuilder()
                .setRoute(io.envoyproxy.envoy.config.route.v3.RouteAction.newBuilder()
                        .setWeightedClusters(WeightedCluster.newBuilder()
                                .addClusters(WeightedCluster.ClusterWeight.newBuilder()
                                        .setName("c")
                                        .setWeight(UInt32Value.of(0)))))
                .build();
        assertThat(ConformanceRules.route(withRoute(good, noWeight)))
                .singleElement()
                .asString()
                .contains("add up to 0");
        RouteConfiguration wildcard = good.toBuilder()
                .setVirtualHosts(0, good.getVirtualHosts(0).toBuilder().setDomains(0, "shop.*.dubbo"))
                .build();
        assertThat(ConformanceRules.route(wildcard)).singleElement().asString().contains("wildcard");
    }

    @Test
    void proxylessSet_aListenerWhoseNameNoVirtualHostServes_orAMissingCluster_isReported() {
        MeshService s = generatedWithPorts();
        ServiceResources r = translator.translate(s);
        Map<XdsType, Map<String, Any>> held = EnvoyTranslatorTest.asClientHolds(r);
        assertThat(ConformanceRules.proxyless(held)).isEmpty();

        Map<XdsType, Map<String, Any>> noCluster = new HashMap<>(held);
        noCluster.put(XdsType.CLUSTER, Map.of());
        assertThat(ConformanceRules.proxyless(noCluster))
                .anySatisfy(p -> assertThat(p).contains("cluster grpc|50051||shop.dubbo is not there"));

        Map<XdsType, Map<String, Any>> renamed = new HashMap<>(held);
        Map<String, Any> listeners = new TreeMap<>(held.get(XdsType.LISTENER));
        Listener l = parse(listeners.get("shop.dubbo"));
        listeners.put(
                "other.dubbo", Any.pack(l.toBuilder().setName("other.dubbo").build(), "type.googleapis.com"));
        renamed.put(XdsType.LISTENER, listeners);
        assertThat(ConformanceRules.proxyless(renamed))
                .singleElement()
                .asString()
                .contains("no virtual host of shop.dubbo has the domain other.dubbo");
    }

    // ------------------------------------------------------------------ helpers

    private static MeshService generatedWithPorts() {
        return new MeshService(
                "shop.dubbo",
                List.of(new ServicePort("tri", 50051, Protocol.TRIPLE)),
                List.of(
                        Endpoint.builder("10.0.0.1").port("tri", 50051).build(),
                        Endpoint.builder("10.0.0.2")
                                .port("tri", 50051)
                                .weight(50)
                                .build()),
                new TreeMap<>(),
                new TreeSet<>(List.of(ServiceKey.of("gen", "gen", "shop"))),
                "v1");
    }

    private static Listener parse(Any any) {
        try {
            return Listener.parseFrom(any.getValue());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    private static RouteConfiguration withRoute(RouteConfiguration rc, Route r) {
        return rc.toBuilder()
                .setVirtualHosts(0, rc.getVirtualHosts(0).toBuilder().setRoutes(0, r))
                .build();
    }

    private static Listener apiListener(HttpConnectionManager hcm) {
        return Listener.newBuilder()
                .setName("shop.dubbo")
                .setApiListener(io.envoyproxy.envoy.config.listener.v3.ApiListener.newBuilder()
                        .setApiListener(Any.pack(hcm)))
                .build();
    }

    private static ClusterLoadAssignment cla(LocalityLbEndpoints... localities) {
        return ClusterLoadAssignment.newBuilder()
                .setClusterName("c")
                .addAllEndpoints(List.of(localities))
                .build();
    }

    private static LocalityLbEndpoints locality(String zone, int weight, LbEndpoint... endpoints) {
        return LocalityLbEndpoints.newBuilder()
                .setLocality(
                        io.envoyproxy.envoy.config.core.v3.Locality.newBuilder().setZone(zone))
                .addAllLbEndpoints(List.of(endpoints))
                .setLoadBalancingWeight(UInt32Value.of(weight))
                .build();
    }

    private static LbEndpoint endpoint(String ip, int weight) {
        return LbEndpoint.newBuilder()
                .setEndpoint(io.envoyproxy.envoy.config.endpoint.v3.Endpoint.newBuilder()
                        .setAddress(Address.newBuilder()
                                .setSocketAddress(SocketAddress.newBuilder()
                                        .setAddress(ip)
                                        .setPortValue(50051))))
                .setHealthStatus(HealthStatus.HEALTHY)
                .setLoadBalancingWeight(UInt32Value.of(weight))
                .build();
    }
}
