package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sidecar's outbound listeners, route configurations and Dubbo routes, and what Envoy makes of them. */
class EnvoySidecarTranslatorTest {

    private static final String GREETER = "org.demo.Greeter";

    private final TestCatalog catalog = new TestCatalog();
    private final EnvoyTranslator base = new EnvoyTranslator();
    private final List<ServiceResources> served = new ArrayList<>();
    private final SortedMap<String, EnvoySidecarTranslator.Entry> entries = new TreeMap<>();

    @AfterEach
    void close() {
        catalog.close();
    }

    @BeforeEach
    void catalog() {
        add(Upserts.springCloud(
                "orders", List.of(Upserts.springInstance("10.0.0.1", 8080).build())));
        add(new ServiceUpsert(
                ServiceKey.of("eureka", "eu", "ORDERS"),
                "orders.eureka",
                List.of(new ServicePort("http", 80, Protocol.HTTP)),
                List.of(Endpoint.builder("10.0.0.2").port("http", 8080).build())));
        add(Upserts.dubboApplication(
                "shop", List.of(Upserts.dubboAppInstance("10.0.1.1", 50051).build())));
        add(Upserts.dubboInterface(
                GREETER,
                "1.0.0",
                "",
                List.of(Upserts.dubboProvider("10.0.2.1", 20880, Map.of()).build())));
        add(Upserts.dubboInterface(
                GREETER,
                "",
                "",
                List.of(Upserts.dubboProvider("10.0.2.2", 20880, Map.of()).build())));
        add(new ServiceUpsert(
                ServiceKey.of("consul", "dc1", "billing"),
                "billing.dc1.consul",
                List.of(
                        new ServicePort("http", 8080, Protocol.HTTP),
                        new ServicePort("grpc", 9090, Protocol.GRPC),
                        new ServicePort("https", 443, Protocol.HTTPS),
                        new ServicePort("tcp", 5432, Protocol.TCP)),
                List.of(Endpoint.builder("10.0.3.1")
                        .port("http", 8080)
                        .port("grpc", 9090)
                        .port("https", 8443)
                        .port("tcp", 5432)
                        .build())));
    }

    private void add(ServiceUpsert u) {
        catalog.aggregator().accept(u);
        MeshService s = catalog.awaitService(u.host(), x -> x.sources().contains(u.key()));
        ServiceResources r = base.translate(s);
        served.add(r);
        entries.put(s.host(), EnvoySidecarTranslator.entry(s, r));
    }

    private SidecarResources translate(SidecarOptions options) {
        return new EnvoySidecarTranslator(base, options).translate(entries);
    }

    private static final SidecarOptions ALL = new SidecarOptions(
            true,
            "0.0.0.0",
            15001,
            List.of(80),
            20880,
            List.of(
                    new SidecarOptions.TcpMapping("billing.dc1.consul", 5432, 15432),
                    new SidecarOptions.TcpMapping("missing.consul", 3306, 13306)));

    @Test
    void httpListener_routesEveryServiceByHostHostPortAndUnambiguousShortNames() throws Exception {
        SidecarResources r = translate(SidecarOptions.DEFAULTS);

        Listener l = unpack(r.find(XdsType.LISTENER, "outbound_15001"), Listener.class);
        assertThat(l.getAddress().getSocketAddress().getPortValue()).isEqualTo(15001);
        HttpConnectionManager hcm =
                l.getFilterChains(0).getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class);
        assertThat(hcm.getRds().getRouteConfigName()).isEqualTo("outbound_15001");
        assertThat(hcm.getRds().getConfigSource().hasAds()).isTrue();

        Map<String, List<String>> domains =
                domains(unpack(r.find(XdsType.ROUTE, "outbound_15001"), RouteConfiguration.class));
        Map<String, List<String>> expected = new LinkedHashMap<>();
        // HTTP is the default port of a service with HTTP and gRPC; HTTPS and TCP are not routed as HTTP
        expected.put(
                "billing.dc1.consul:8080",
                List.of(
                        "billing.dc1.consul:8080",
                        "billing.dc1.consul",
                        "billing",
                        "billing:8080",
                        "billing.dc1",
                        "billing.dc1:8080"));
        expected.put("billing.dc1.consul:9090", List.of("billing.dc1.consul:9090", "billing:9090", "billing.dc1:9090"));
        // (the Dubbo interface hosts have no HTTP port: they are on the Dubbo listener)
        // orders.eureka and orders.zookeeper both answer to "orders": it is left out of both
        expected.put("orders.eureka:80", List.of("orders.eureka:80", "orders.eureka"));
        expected.put("orders.zookeeper:80", List.of("orders.zookeeper:80", "orders.zookeeper"));
        expected.put("shop.dubbo:50051", List.of("shop.dubbo:50051", "shop.dubbo", "shop", "shop:50051"));
        assertThat(domains).containsExactlyEntriesOf(expected);
        assertThat(r.notes())
                .contains(
                        new SidecarResources.Note(
                                "ambiguous-short-name",
                                "outbound_15001: 2 short names would reach more than one service and are left out:"
                                        + " orders, orders:80"),
                        new SidecarResources.Note(
                                "https-not-routed",
                                "billing.dc1.consul:443 (HTTPS: Envoy would send plain text to it; map it as TCP to"
                                        + " reach it)"),
                        new SidecarResources.Note(
                                "tcp-not-mapped",
                                "billing.dc1.consul:5432 (no TCP listener: add it to xds.sidecar.tcp)"));

        RouteConfiguration rc = unpack(r.find(XdsType.ROUTE, "outbound_15001"), RouteConfiguration.class);
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            var action = vh.getRoutes(0).getRoute();
            assertThat(action.getCluster())
                    .isEqualTo("outbound|" + vh.getName().replaceAll(".*:", "") + "||"
                            + vh.getName().replaceAll(":.*", ""));
            // streams stay open: no route timeout
            assertThat(action.hasTimeout()).isTrue();
            assertThat(action.getTimeout().getSeconds()).isZero();
        }
    }

    @Test
    void servicePortListener_holdsOnlyTheServicesOfThatPort() throws Exception {
        SidecarResources r = translate(ALL);

        Map<String, List<String>> domains =
                domains(unpack(r.find(XdsType.ROUTE, "outbound_80"), RouteConfiguration.class));
        assertThat(domains)
                .containsOnlyKeys("orders.eureka:80", "orders.zookeeper:80")
                .containsEntry("orders.zookeeper:80", List.of("orders.zookeeper:80", "orders.zookeeper"));
    }

    @Test
    void dubboListener_routesEachInterfaceVersionAndGroup_mostSpecificFirst() throws Exception {
        SidecarResources r = translate(ALL);

        Listener l = unpack(r.find(XdsType.LISTENER, "outbound_20880"), Listener.class);
        DubboProxy proxy = l.getFilterChains(0).getFilters(0).getTypedConfig().unpack(DubboProxy.class);
        assertThat(l.getFilterChains(0).getFilters(0).getName()).isEqualTo("envoy.filters.network.dubbo_proxy");
        assertThat(proxy.getDrds().getRouteConfigName()).isEqualTo("outbound_20880");
        assertThat(proxy.getDubboFilters(0).getName()).isEqualTo("envoy.filters.dubbo.router");

        MultipleRouteConfiguration routes =
                unpack(r.find(XdsType.DUBBO_ROUTE, "outbound_20880"), MultipleRouteConfiguration.class);
        // Envoy takes the first entry that matches and an empty version matches any: 1.0.0 comes first
        assertThat(routes.getRouteConfigList())
                .extracting(c -> c.getInterface() + "|" + c.getVersion() + "|" + c.getGroup() + " -> "
                        + c.getRoutes(0).getRoute().getCluster())
                .containsExactly(
                        GREETER + "|1.0.0| -> outbound|20880||org.demo.greeter.v-1-0-0.dubbo",
                        GREETER + "|| -> outbound|20880||org.demo.greeter.dubbo");
        assertThat(routes.getRouteConfig(0)
                        .getRoutes(0)
                        .getMatch()
                        .getMethod()
                        .getName()
                        .getSafeRegex()
                        .getRegex())
                .isEqualTo(".*");
    }

    @Test
    void tcpMapping_getsATcpProxyListener_anUnknownServiceIsNoted() throws Exception {
        SidecarResources r = translate(ALL);

        TcpProxy tcp = unpack(r.find(XdsType.LISTENER, "outbound_15432"), Listener.class)
                .getFilterChains(0)
                .getFilters(0)
                .getTypedConfig()
                .unpack(TcpProxy.class);
        assertThat(tcp.getCluster()).isEqualTo("outbound|5432||billing.dc1.consul");
        assertThat(r.find(XdsType.LISTENER, "outbound_13306")).isNull();
        assertThat(r.notes())
                .contains(new SidecarResources.Note(
                        "tcp-mapping-unavailable",
                        "missing.consul:3306 -> outbound_13306 (not in the catalog: no listener until it is)"))
                .noneMatch(n -> n.kind().equals("tcp-not-mapped"));
    }

    /** What an Envoy holds (the services' resources and the sidecar's) passes Envoy's rules, and routes. */
    @Test
    void everyResource_passesEnvoysValidationRules_andEveryNameResolves() {
        SidecarResources r = translate(ALL);
        Map<XdsType, Map<String, Any>> holds = new EnumMap<>(XdsType.class);
        for (ServiceResources s : served) {
            for (XdsResource x : s.resources())
                holds.computeIfAbsent(x.type(), t -> new TreeMap<>()).put(x.name(), x.any());
        }
        for (XdsResource x : r.resources())
            holds.computeIfAbsent(x.type(), t -> new TreeMap<>()).put(x.name(), x.any());

        assertThat(EnvoyConfigCheck.check(holds)).isEmpty();
        assertThat(r.resources())
                .extracting(x -> x.type().shortName() + " " + x.name())
                .containsExactly(
                        "lds outbound_15001",
                        "lds outbound_15432",
                        "lds outbound_20880",
                        "lds outbound_80",
                        "rds outbound_15001",
                        "rds outbound_80",
                        "drds outbound_20880");
        // a gRPC client never gets these (they are not API listeners), but what it could ask for by name keeps its
        // rules too
        for (XdsResource x : r.resources()) {
            if (x.type() == XdsType.ROUTE) {
                assertThat(ConformanceRules.route(unpack(x, RouteConfiguration.class)))
                        .as(x.name())
                        .isEmpty();
            }
        }
    }

    @Test
    void sameServices_inAnotherOrder_giveTheSameBytes() {
        SidecarResources first = translate(ALL);
        List<String> hosts = new ArrayList<>(entries.keySet());
        Collections.reverse(hosts);
        SortedMap<String, EnvoySidecarTranslator.Entry> again = new TreeMap<>();
        for (String h : hosts) again.put(h, entries.get(h));
        SidecarResources second = new EnvoySidecarTranslator(base, ALL).translate(again);
        assertThat(second.resources()).isEqualTo(first.resources());
    }

    @Test
    void disabled_makesNothing() {
        assertThat(translate(SidecarOptions.DISABLED).resources()).isEmpty();
    }

    @Test
    void shortForms_areTheFirstLabel_andTheHostWithoutItsRegistrySuffix() {
        assertThat(EnvoySidecarTranslator.shortForms("orders.services.zookeeper"))
                .containsExactly("orders", "orders.services");
        assertThat(EnvoySidecarTranslator.shortForms("orders.eureka")).containsExactly("orders");
        assertThat(EnvoySidecarTranslator.shortForms("orders.default-group.public.nacos"))
                .containsExactly("orders", "orders.default-group.public");
        assertThat(EnvoySidecarTranslator.shortForms("orders")).isEmpty();
    }

    /**
     * A host that is another host's short name ({@code billing} beside {@code billing.services.zk}, as two registries'
     * host templates may give), and two hosts that differ only by case: Envoy compares domains without regard to case
     * and refuses a route configuration that has one in two virtual hosts, which would keep every sidecar on its last
     * routes. The clashing names are left out and noted; every other name still routes, and Envoy's rules pass.
     */
    @Test
    void aShortNameThatIsAnotherHost_andHostsDifferingOnlyByCase_areLeftOut_andTheRoutesStillPass() throws Exception {
        List<ServicePort> http = List.of(new ServicePort("http", 80, Protocol.HTTP));
        SortedMap<String, EnvoySidecarTranslator.Entry> clashing = new TreeMap<>();
        for (String host : List.of("billing", "billing.services.zk", "Pay.zk", "pay.zk")) {
            clashing.put(host, new EnvoySidecarTranslator.Entry(host, http, List.of()));
        }
        SidecarResources r = new EnvoySidecarTranslator(base, SidecarOptions.DEFAULTS).translate(clashing);

        for (XdsResource x : r.resources())
            assertThat(EnvoySemantics.check(x)).as(x.name()).isEmpty();
        Map<String, List<String>> expected = new LinkedHashMap<>();
        expected.put("Pay.zk:80", List.of("Pay.zk:80", "Pay.zk"));
        expected.put("billing:80", List.of("billing:80", "billing"));
        expected.put(
                "billing.services.zk:80",
                List.of("billing.services.zk:80", "billing.services.zk", "billing.services", "billing.services:80"));
        assertThat(domains(unpack(r.find(XdsType.ROUTE, "outbound_15001"), RouteConfiguration.class)))
                .containsExactlyEntriesOf(expected);
        assertThat(r.notes())
                .contains(
                        new SidecarResources.Note(
                                "ambiguous-short-name",
                                "outbound_15001: 6 short names would reach more than one service and are left out:"
                                        + " Pay, Pay:80, billing, billing:80, pay, pay:80"),
                        new SidecarResources.Note(
                                "host-differs-only-by-case",
                                "outbound_15001: 2 names differ only by case from another service's (Envoy matches"
                                        + " them as one) and are left out: pay.zk, pay.zk:80"));
    }

    private static Map<String, List<String>> domains(RouteConfiguration rc) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (VirtualHost vh : rc.getVirtualHostsList()) out.put(vh.getName(), vh.getDomainsList());
        return out;
    }

    static <T extends com.google.protobuf.Message> T unpack(XdsResource r, Class<T> type) {
        assertThat(r).isNotNull();
        try {
            return r.any().unpack(type);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }
}
