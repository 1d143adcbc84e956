package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EnvoyTranslatorTest {

    private final TestCatalog catalog = new TestCatalog();
    private final EnvoyTranslator translator = new EnvoyTranslator();

    @AfterEach
    void close() {
        catalog.close();
    }

    private MeshService upsert(ServiceUpsert u) {
        catalog.aggregator().accept(u);
        return catalog.awaitService(
                u.host(), s -> s.version() != null && s.sources().contains(u.key()));
    }

    @Test
    void dubboApplication_becomesEdsClusterEndpointsApiListenersAndRoute() throws Exception {
        MeshService s = upsert(AdsSotwTest.shop("10.0.0.1"));

        ServiceResources r = translator.translate(s);

        assertThat(r.ofType(XdsType.CLUSTER))
                .extracting(XdsResource::name)
                .containsExactly("grpc|50051||shop.dubbo", "outbound|50051||shop.dubbo");
        assertThat(r.ofType(XdsType.ENDPOINT))
                .extracting(XdsResource::name)
                .containsExactly("grpc|50051||shop.dubbo", "outbound|50051||shop.dubbo");
        assertThat(r.ofType(XdsType.LISTENER))
                .extracting(XdsResource::name)
                .containsExactly("shop.dubbo", "shop.dubbo:50051");
        assertThat(r.ofType(XdsType.ROUTE)).extracting(XdsResource::name).containsExactly("shop.dubbo");
        assertThat(r.skipped()).isEmpty();

        Cluster c = cluster(r, "outbound|50051||shop.dubbo");
        assertThat(c.getType()).isEqualTo(Cluster.DiscoveryType.EDS);
        assertThat(c.getEdsClusterConfig().getEdsConfig().hasAds()).isTrue();
        assertThat(c.getEdsClusterConfig().getServiceName()).isEqualTo("outbound|50051||shop.dubbo");
        assertThat(c.getConnectTimeout().getSeconds()).isEqualTo(5);
        assertThat(c.getTypedExtensionProtocolOptionsMap()).containsKey(EnvoyTranslator.HTTP_PROTOCOL_OPTIONS);
        // panic mode off, as istiod sets it: Envoy never balances over endpoints sent as unhealthy
        assertThat(c.getCommonLbConfig().hasHealthyPanicThreshold()).isTrue();
        assertThat(c.getCommonLbConfig().getHealthyPanicThreshold().getValue()).isZero();
        Cluster proxyless = cluster(r, "grpc|50051||shop.dubbo");
        assertThat(proxyless.getEdsClusterConfig().getServiceName()).isEqualTo("grpc|50051||shop.dubbo");
        assertThat(proxyless.getLbPolicy()).isEqualTo(Cluster.LbPolicy.ROUND_ROBIN);
        assertThat(proxyless.hasLoadBalancingPolicy()).isFalse();

        Listener l = Listener.parseFrom(
                resource(r, XdsType.LISTENER, "shop.dubbo").any().getValue());
        HttpConnectionManager hcm = l.getApiListener().getApiListener().unpack(HttpConnectionManager.class);
        assertThat(hcm.getRds().getRouteConfigName()).isEqualTo("shop.dubbo");
        assertThat(hcm.getRds().getConfigSource().hasAds()).isTrue();
        assertThat(hcm.getHttpFilters(hcm.getHttpFiltersCount() - 1).getName()).isEqualTo("envoy.filters.http.router");

        RouteConfiguration rc = RouteConfiguration.parseFrom(
                resource(r, XdsType.ROUTE, "shop.dubbo").any().getValue());
        assertThat(rc.getVirtualHostsList()).hasSize(1);
        assertThat(rc.getVirtualHosts(0).getDomainsList()).containsExactly("shop.dubbo:50051", "shop.dubbo");
        assertThat(rc.getVirtualHosts(0).getRoutes(0).getRoute().getCluster()).isEqualTo("grpc|50051||shop.dubbo");
        assertThat(ConformanceRules.proxyless(asClientHolds(r))).isEmpty();
    }

    @Test
    void endpoints_disabledAndWeightZero_areLeftOut_restKeepTheirWeights() throws Exception {
        MeshService s = upsert(Upserts.springCloud(
                "orders",
                List.of(
                        Upserts.springInstance("10.0.0.1", 8080).weight(100).build(),
                        Upserts.springInstance("10.0.0.2", 8080).weight(0).build(),
                        Upserts.springInstance("10.0.0.3", 8080).enabled(false).build(),
                        Upserts.springInstance("10.0.0.4", 8080).weight(30).build())));

        ClusterLoadAssignment cla = loadAssignment(translator.translate(s), "outbound|80||orders.zookeeper");

        assertThat(endpoints(cla)).containsExactly("10.0.0.1:8080", "10.0.0.4:8080");
        assertThat(cla.getEndpoints(0).getLbEndpointsList())
                .extracting(e -> e.getLoadBalancingWeight().getValue())
                .containsExactly(100, 30);
        assertThat(cla.getEndpoints(0).getLoadBalancingWeight().getValue()).isEqualTo(130);
    }

    @Test
    void endpoints_groupedByLocality_eachWeighingTheSumOfItsEndpoints() throws Exception {
        Locality a = Locality.of("cn-north", "zone-a");
        Locality b = Locality.of("cn-north", "zone-b");
        MeshService s = upsert(Upserts.springCloud(
                "orders",
                List.of(
                        Upserts.springInstance("10.0.0.1", 8080)
                                .locality(b)
                                .weight(10)
                                .build(),
                        Upserts.springInstance("10.0.0.2", 8080)
                                .locality(a)
                                .weight(20)
                                .build(),
                        Upserts.springInstance("10.0.0.3", 8080)
                                .locality(a)
                                .weight(5)
                                .build())));

        ClusterLoadAssignment cla = loadAssignment(translator.translate(s), "outbound|80||orders.zookeeper");

        assertThat(cla.getEndpointsList()).hasSize(2);
        LocalityLbEndpoints first = cla.getEndpoints(0);
        assertThat(first.getLocality().getZone()).isEqualTo("zone-a");
        assertThat(first.getLocality().getRegion()).isEqualTo("cn-north");
        assertThat(first.getLoadBalancingWeight().getValue()).isEqualTo(25);
        assertThat(first.getLbEndpointsList()).hasSize(2);
        assertThat(cla.getEndpoints(1).getLocality().getZone()).isEqualTo("zone-b");
        assertThat(cla.getEndpoints(1).getLoadBalancingWeight().getValue()).isEqualTo(10);
    }

    @Test
    void everyLoadAssignment_namesALocality_emptyStringsWhereTheRegistryGivesNone() {
        // ZooKeeper gives no locality: grpc-go, grpc-js and C-core refuse a load assignment with a locality unset
        MeshService s = upsert(AdsSotwTest.shop("10.0.0.1", "10.0.0.2"));

        ServiceResources r = translator.translate(s);

        assertThat(r.ofType(XdsType.ENDPOINT)).hasSize(2).allSatisfy(x -> {
            ClusterLoadAssignment cla = ClusterLoadAssignment.parseFrom(x.any().getValue());
            assertThat(cla.getEndpointsList()).singleElement().satisfies(l -> {
                assertThat(l.hasLocality()).isTrue();
                assertThat(l.getLocality()).isEqualTo(io.envoyproxy.envoy.config.core.v3.Locality.getDefaultInstance());
            });
        });
    }

    @Test
    void grpcLoadAssignment_oneLocalityPerWeight_weighingItsEndpoints_unhealthyLeftOut() {
        Locality a = Locality.of("cn-north", "zone-a");
        Locality b = Locality.of("cn-north", "zone-b");
        MeshService s = upsert(Upserts.dubboApplication(
                "shop",
                List.of(
                        Upserts.dubboAppInstance("10.0.0.1", 50051).locality(a).build(),
                        Upserts.dubboAppInstance("10.0.0.2", 50051)
                                .locality(a)
                                .weight(50)
                                .build(),
                        Upserts.dubboAppInstance("10.0.0.3", 50051)
                                .locality(a)
                                .weight(50)
                                .build(),
                        Upserts.dubboAppInstance("10.0.0.4", 50051)
                                .locality(a)
                                .health(Health.UNHEALTHY)
                                .build(),
                        Upserts.dubboAppInstance("10.0.0.5", 50051)
                                .locality(b)
                                .weight(30)
                                .build(),
                        Upserts.dubboAppInstance("10.0.0.6", 50051)
                                .locality(b)
                                .weight(30)
                                .build())));

        ServiceResources r = translator.translate(s);
        ClusterLoadAssignment grpc = loadAssignment(r, "grpc|50051||shop.dubbo");

        // zone-a mixes 100 and 50: a locality per weight; zone-b weighs 30 throughout and stays as it is
        assertThat(grpc.getEndpointsList())
                .extracting(
                        l -> l.getLocality().getZone() + "/" + l.getLocality().getSubZone(),
                        l -> l.getLoadBalancingWeight().getValue(),
                        l -> endpoints(ClusterLoadAssignment.newBuilder()
                                .addEndpoints(l)
                                .build()))
                .containsExactly(
                        org.assertj.core.api.Assertions.tuple(
                                "zone-a/weight-50", 100, List.of("10.0.0.2:50051", "10.0.0.3:50051")),
                        org.assertj.core.api.Assertions.tuple("zone-a/weight-100", 100, List.of("10.0.0.1:50051")),
                        org.assertj.core.api.Assertions.tuple(
                                "zone-b/", 60, List.of("10.0.0.5:50051", "10.0.0.6:50051")));
        // Envoy's form keeps the registry's localities, every routable endpoint and its health
        ClusterLoadAssignment envoy = loadAssignment(r, "outbound|50051||shop.dubbo");
        assertThat(envoy.getEndpointsList())
                .extracting(
                        l -> l.getLocality().getZone(),
                        l -> l.getLoadBalancingWeight().getValue())
                .containsExactly(
                        org.assertj.core.api.Assertions.tuple("zone-a", 300),
                        org.assertj.core.api.Assertions.tuple("zone-b", 60));
        assertThat(ConformanceRules.proxyless(asClientHolds(r))).isEmpty();
    }

    @Test
    void health_unhealthyIsSentAsUnhealthy_drainingAsDraining() throws Exception {
        MeshService s = upsert(Upserts.springCloud(
                "orders",
                List.of(
                        Upserts.springInstance("10.0.0.1", 8080).build(),
                        Upserts.springInstance("10.0.0.2", 8080)
                                .health(Health.UNHEALTHY)
                                .build(),
                        Upserts.springInstance("10.0.0.3", 8080)
                                .health(Health.DRAINING)
                                .build())));

        ClusterLoadAssignment cla = loadAssignment(translator.translate(s), "outbound|80||orders.zookeeper");

        assertThat(cla.getEndpoints(0).getLbEndpointsList())
                .extracting(LbEndpoint::getHealthStatus)
                .containsExactly(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, HealthStatus.DRAINING);
    }

    @Test
    void labels_underEnvoyLbMetadata_noneByDefault_allWithStar_listedKeys_plusTheRoutesSubsetKeys() throws Exception {
        MeshService s = upsert(Upserts.dubboInterface(
                "org.demo.Greeter",
                "1.0.0",
                "blue",
                List.of(Upserts.dubboProvider(
                                "10.0.0.1",
                                20880,
                                Map.of("application", "demo-provider", "release", "3.3.6", "timestamp", "17000"))
                        .build())));
        String name = "outbound|20880||org.demo.greeter.v-1-0-0.g-blue.dubbo";

        LbEndpoint byDefault =
                loadAssignment(translator.translate(s), name).getEndpoints(0).getLbEndpoints(0);
        assertThat(byDefault.hasMetadata())
                .as("no label costs bytes on every push unless asked for")
                .isFalse();

        EnvoyTranslator star = new EnvoyTranslator(new EnvoyTranslator.Options(Duration.ofSeconds(1), true, null));
        LbEndpoint all = loadAssignment(star.translate(s), name).getEndpoints(0).getLbEndpoints(0);
        assertThat(all.getMetadata().getFilterMetadataOrThrow("envoy.lb").getFieldsMap())
                .containsOnlyKeys("application", "release")
                .hasEntrySatisfying(
                        "application", v -> assertThat(v.getStringValue()).isEqualTo("demo-provider"));

        EnvoyTranslator narrow =
                new EnvoyTranslator(new EnvoyTranslator.Options(Duration.ofSeconds(1), true, Set.of("release")));
        LbEndpoint some =
                loadAssignment(narrow.translate(s), name).getEndpoints(0).getLbEndpoints(0);
        assertThat(some.getMetadata().getFilterMetadataOrThrow("envoy.lb").getFieldsMap())
                .containsOnlyKeys("release");

        LbEndpoint withRouteKeys = loadAssignment(narrow.translate(s, null, Set.of("application", "absent")), name)
                .getEndpoints(0)
                .getLbEndpoints(0);
        assertThat(withRouteKeys
                        .getMetadata()
                        .getFilterMetadataOrThrow("envoy.lb")
                        .getFieldsMap())
                .containsOnlyKeys("release", "application");
    }

    @Test
    void dubboProtocolOnly_getsClusterAndEndpoints_butNoGrpcListener() throws Exception {
        MeshService s = upsert(Upserts.dubboInterface(
                "org.demo.Greeter",
                "",
                "",
                List.of(Upserts.dubboProvider("10.0.0.1", 20880, Map.of()).build())));

        ServiceResources r = translator.translate(s);

        assertThat(r.ofType(XdsType.CLUSTER))
                .extracting(XdsResource::name)
                .containsExactly("outbound|20880||org.demo.greeter.dubbo");
        assertThat(r.ofType(XdsType.LISTENER)).isEmpty();
        assertThat(r.ofType(XdsType.ROUTE)).isEmpty();
        assertThat(cluster(r, "outbound|20880||org.demo.greeter.dubbo").getTypedExtensionProtocolOptionsMap())
                .isEmpty();
    }

    @Test
    void severalPorts_oneClusterEach_defaultListenerGoesToTheGrpcPort() throws Exception {
        ServiceUpsert u = new ServiceUpsert(
                new ServiceKey("zookeeper", "zk1", "", "", "mixed", ""),
                "mixed.dubbo",
                List.of(
                        new ServicePort("dubbo", 20880, Protocol.DUBBO),
                        new ServicePort("http", 8080, Protocol.HTTP),
                        new ServicePort("tri", 50051, Protocol.TRIPLE)),
                List.of(Endpoint.builder("10.0.0.1")
                        .port("dubbo", 20880)
                        .port("http", 8081)
                        .port("tri", 50052)
                        .build()));
        ServiceResources r = translator.translate(upsert(u));

        assertThat(r.ofType(XdsType.CLUSTER))
                .extracting(XdsResource::name)
                .containsExactly(
                        "grpc|50051||mixed.dubbo",
                        "grpc|8080||mixed.dubbo",
                        "outbound|20880||mixed.dubbo",
                        "outbound|50051||mixed.dubbo",
                        "outbound|8080||mixed.dubbo");
        assertThat(endpoints(loadAssignment(r, "outbound|50051||mixed.dubbo"))).containsExactly("10.0.0.1:50052");
        assertThat(r.ofType(XdsType.LISTENER))
                .extracting(XdsResource::name)
                .containsExactly("mixed.dubbo", "mixed.dubbo:50051", "mixed.dubbo:8080");
        RouteConfiguration rc = RouteConfiguration.parseFrom(
                resource(r, XdsType.ROUTE, "mixed.dubbo").any().getValue());
        assertThat(rc.getVirtualHostsList())
                .anySatisfy(vh -> {
                    assertThat(vh.getDomainsList()).containsExactly("mixed.dubbo:50051", "mixed.dubbo");
                    assertThat(vh.getRoutes(0).getRoute().getCluster()).isEqualTo("grpc|50051||mixed.dubbo");
                })
                .anySatisfy(vh -> {
                    assertThat(vh.getDomainsList()).containsExactly("mixed.dubbo:8080");
                    assertThat(vh.getRoutes(0).getRoute().getCluster()).isEqualTo("grpc|8080||mixed.dubbo");
                });
    }

    @Test
    void sameCatalogContent_givesSameBytesAndVersions_inAnotherReplica() {
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 1; i <= 20; i++) {
            endpoints.add(Upserts.dubboAppInstance("10.0.1." + i, 50051)
                    .locality(Locality.of("r", i % 2 == 0 ? "a" : "b"))
                    .label("version", "v" + (i % 3))
                    .build());
        }
        MeshService here = upsert(Upserts.dubboApplication("shop", endpoints));
        List<Endpoint> reversed = new ArrayList<>(endpoints);
        java.util.Collections.reverse(reversed);
        MeshService there;
        try (TestCatalog replica = new TestCatalog()) {
            replica.aggregator().accept(Upserts.dubboApplication("shop", reversed));
            there = replica.awaitService("shop.dubbo");
        }

        ServiceResources a = translator.translate(here);
        ServiceResources b = new EnvoyTranslator().translate(there);

        assertSameResources(b.resources(), a.resources());
    }

    /** Same names, versions and bytes, in the same order. */
    static void assertSameResources(List<XdsResource> actual, List<XdsResource> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.get(i).name()).isEqualTo(expected.get(i).name());
            assertThat(actual.get(i).version()).isEqualTo(expected.get(i).version());
            assertThat(actual.get(i).any().getValue())
                    .isEqualTo(expected.get(i).any().getValue());
        }
    }

    @Test
    void oneEndpointChange_changesOnlyTheLoadAssignmentVersion() {
        MeshService before = upsert(AdsSotwTest.shop("10.0.0.1"));
        ServiceResources r1 = translator.translate(before);
        MeshService after = upsert(AdsSotwTest.shop("10.0.0.1", "10.0.0.2"));
        ServiceResources r2 = translator.translate(after);

        for (int i = 0; i < r1.resources().size(); i++) {
            XdsResource x = r1.resources().get(i);
            XdsResource y = r2.resources().get(i);
            assertThat(y.name()).isEqualTo(x.name());
            if (x.type() == XdsType.ENDPOINT) {
                assertThat(y.version()).isNotEqualTo(x.version());
            } else {
                assertThat(y.version()).as(x.name()).isEqualTo(x.version());
            }
        }
    }

    @Test
    void translateWithPrevious_reusesUnchangedResources_andEqualsAFreshTranslation() {
        MeshService one = upsert(AdsSotwTest.shop("10.0.0.1"));
        ServiceResources first = translator.translate(one);
        MeshService two = upsert(AdsSotwTest.shop("10.0.0.1", "10.0.0.2"));
        ServiceUpsert morePorts = new ServiceUpsert(
                Upserts.dubboApplication("shop", List.of()).key(),
                "shop.dubbo",
                List.of(new ServicePort("tri", 50051, Protocol.TRIPLE), new ServicePort("http", 8080, Protocol.HTTP)),
                List.of(Endpoint.builder("10.0.0.1")
                        .port("tri", 50051)
                        .port("http", 8080)
                        .build()));

        ServiceResources incremental = translator.translate(two, first);
        assertThat(incremental).isEqualTo(translator.translate(two));
        assertThat(incremental.find(XdsType.CLUSTER, "outbound|50051||shop.dubbo"))
                .isSameAs(first.find(XdsType.CLUSTER, "outbound|50051||shop.dubbo"));
        assertThat(incremental.find(XdsType.ROUTE, "shop.dubbo")).isSameAs(first.find(XdsType.ROUTE, "shop.dubbo"));

        MeshService three = upsert(morePorts);
        ServiceResources grown = translator.translate(three, incremental);
        assertThat(grown).isEqualTo(translator.translate(three));
        assertThat(grown.ofType(XdsType.CLUSTER)).hasSize(4);
        assertThat(grown.ofType(XdsType.LISTENER)).hasSize(3);
    }

    @Test
    void hostNameEndpoint_isLeftOutAndReported_othersServed() throws Exception {
        MeshService s = upsert(Upserts.springCloud(
                "orders",
                List.of(
                        Upserts.springInstance("10.0.0.1", 8080).build(),
                        Upserts.springInstance("orders-1.internal", 8080).build(),
                        Upserts.springInstance("fd00::1", 8080).build())));

        ServiceResources r = translator.translate(s);

        assertThat(endpoints(loadAssignment(r, "outbound|80||orders.zookeeper")))
                .containsExactlyInAnyOrder("10.0.0.1:8080", "fd00::1:8080");
        assertThat(r.skipped()).singleElement().satisfies(k -> {
            assertThat(k.item()).isEqualTo("orders-1.internal:8080");
            assertThat(k.reason()).isEqualTo("endpoint-address");
        });
    }

    @Test
    void sameAddressAndPortTwice_secondIsLeftOutAndReported() throws Exception {
        MeshService s = upsert(Upserts.springCloud(
                "orders",
                List.of(
                        Upserts.springInstance("10.0.0.1", 8080).label("a", "1").build(),
                        Upserts.springInstance("10.0.0.1", 8080).label("a", "2").build())));

        ServiceResources r = translator.translate(s);

        assertThat(endpoints(loadAssignment(r, "outbound|80||orders.zookeeper")))
                .containsExactly("10.0.0.1:8080");
        assertThat(r.skipped()).extracting(ServiceResources.Skipped::reason).containsExactly("duplicate-endpoint");
    }

    @Test
    void weightsAbove32Bits_leaveThePortOutAndReport() {
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < 4400; i++) {
            endpoints.add(Upserts.springInstance("10.1." + (i / 250) + "." + (i % 250 + 1), 8080)
                    .weight(Endpoint.MAX_WEIGHT)
                    .build());
        }
        MeshService s = upsert(Upserts.springCloud("huge", endpoints));

        ServiceResources r = translator.translate(s);

        assertThat(r.resources()).isEmpty();
        assertThat(r.skipped()).singleElement().satisfies(k -> {
            assertThat(k.item()).isEqualTo("outbound|80||huge.zookeeper");
            assertThat(k.reason()).isEqualTo("weight-overflow");
            assertThat(k.detail()).contains("4400000000");
        });
    }

    @Test
    void grpcListenersOff_servesOnlyClustersAndEndpoints() {
        MeshService s = upsert(AdsSotwTest.shop("10.0.0.1"));
        EnvoyTranslator t = new EnvoyTranslator(new EnvoyTranslator.Options(Duration.ofSeconds(5), false, null));

        assertThat(t.translate(s).resources())
                .extracting(XdsResource::type)
                .containsExactly(XdsType.CLUSTER, XdsType.ENDPOINT);
    }

    @Test
    void proxylessResources_areNotInWildcard_envoysClustersAndEndpointsAre() {
        MeshService s = upsert(AdsSotwTest.shop("10.0.0.1"));

        for (XdsResource r : translator.translate(s).resources()) {
            assertThat(r.wildcard()).as(r.name()).isEqualTo(r.name().startsWith("outbound|"));
        }
    }

    // ------------------------------------------------------------------ helpers

    /** What a client subscribed to every resource of a translation holds: by type, name to resource. */
    static Map<XdsType, Map<String, Any>> asClientHolds(ServiceResources r) {
        Map<XdsType, Map<String, Any>> all = new EnumMap<>(XdsType.class);
        for (XdsResource x : r.resources())
            all.computeIfAbsent(x.type(), t -> new TreeMap<>()).put(x.name(), x.any());
        return all;
    }

    static XdsResource resource(ServiceResources r, XdsType type, String name) {
        return r.ofType(type).stream()
                .filter(x -> x.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + type + " " + name + " in " + r.resources()));
    }

    @Test
    void healthyPanicThreshold_isTheConfiguredPercentOnEveryCluster() throws Exception {
        MeshService s = upsert(Upserts.springCloud(
                "orders", List.of(Upserts.springInstance("10.0.0.1", 8080).build())));
        EnvoyTranslator t = new EnvoyTranslator(new EnvoyTranslator.Options(Duration.ofSeconds(5), true, Set.of(), 50));
        Cluster c = cluster(t.translate(s), "outbound|80||orders.zookeeper");
        assertThat(c.getCommonLbConfig().getHealthyPanicThreshold().getValue()).isEqualTo(50.0);
    }

    static Cluster cluster(ServiceResources r, String name) throws InvalidProtocolBufferException {
        return Cluster.parseFrom(resource(r, XdsType.CLUSTER, name).any().getValue());
    }

    static ClusterLoadAssignment loadAssignment(ServiceResources r, String name) {
        try {
            return ClusterLoadAssignment.parseFrom(
                    resource(r, XdsType.ENDPOINT, name).any().getValue());
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    static List<String> endpoints(ClusterLoadAssignment cla) {
        List<String> out = new ArrayList<>();
        for (LocalityLbEndpoints l : cla.getEndpointsList()) {
            for (LbEndpoint e : l.getLbEndpointsList()) {
                var sa = e.getEndpoint().getAddress().getSocketAddress();
                out.add(sa.getAddress() + ":" + sa.getPortValue());
            }
        }
        return out;
    }

    static Map<String, String> sortedMap(Map<String, String> m) {
        return new TreeMap<>(m);
    }
}
