package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.IpAddresses;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The clusters, API listeners and proxyless routes the translator writes as bytes by shape are what the message path
 * makes and checks by every rule, byte for byte and version for version, and what a rule refuses is still refused.
 */
class ShapeBytesTest {

    static final ServiceKey KEY = new ServiceKey("nacos", "nacos-a", "public", "DEFAULT_GROUP", "orders", "");
    static final List<EnvoyTranslator.Options> OPTIONS = List.of(
            EnvoyTranslator.Options.DEFAULTS,
            new EnvoyTranslator.Options(Duration.ofMillis(1500), true, null, 50),
            new EnvoyTranslator.Options(Duration.ofSeconds(300), false, Set.of("version"), 100),
            new EnvoyTranslator.Options(Duration.ofNanos(1), true, Set.of(), 0.5));

    static MeshService service(String host, List<ServicePort> ports, int endpoints, Random random) {
        List<Endpoint> list = new ArrayList<>();
        for (int i = 0; i < endpoints; i++) {
            Endpoint.Builder b = Endpoint.builder("10.1." + (i / 250) + "." + (1 + i % 250))
                    .weight(1 + random.nextInt(200))
                    .health(Health.values()[random.nextInt(Health.values().length)])
                    .label("version", "v" + random.nextInt(3))
                    .locality(Locality.of("r" + random.nextInt(2), "z" + random.nextInt(2)));
            for (ServicePort p : ports) b.port(p.name(), 1 + random.nextInt(65535));
            list.add(b.build());
        }
        list.sort(null);
        return new MeshService(host, ports, list, new TreeMap<>(), new TreeSet<>(Set.of(KEY)), "v1");
    }

    static void assertSame(ServiceResources byShape, ServiceResources byMessage) {
        assertThat(byShape.skipped()).isEqualTo(byMessage.skipped());
        assertThat(byShape.resources()).hasSameSizeAs(byMessage.resources());
        for (int i = 0; i < byMessage.resources().size(); i++) {
            XdsResource a = byShape.resources().get(i);
            XdsResource b = byMessage.resources().get(i);
            assertThat(a.type()).isEqualTo(b.type());
            assertThat(a.name()).isEqualTo(b.name());
            assertThat(a.any()).as("%s %s", a.type(), a.name()).isEqualTo(b.any());
            assertThat(a.versionHash()).isEqualTo(b.versionHash());
            assertThat(a.wildcard()).isEqualTo(b.wildcard());
        }
    }

    @Test
    void bytesByShapeAreTheMessagesBytes() {
        Random random = new Random(22);
        Protocol[] protocols = Protocol.values();
        int listeners = 0;
        for (EnvoyTranslator.Options options : OPTIONS) {
            EnvoyTranslator byShape = new EnvoyTranslator(options, true);
            EnvoyTranslator byMessage = new EnvoyTranslator(options, false);
            for (int s = 0; s < 150; s++) {
                // host lengths across the one- and two-byte length prefixes
                String host = "svc" + s + "." + "a".repeat(random.nextInt(140)) + ".example";
                Map<Integer, ServicePort> ports = new TreeMap<>();
                int count = 1 + random.nextInt(4);
                for (int p = 0; p < count; p++) {
                    int number = 1 + random.nextInt(65535);
                    ports.put(number, new ServicePort("p" + p, number, protocols[random.nextInt(protocols.length)]));
                }
                MeshService service = service(host, new ArrayList<>(ports.values()), random.nextInt(12), random);
                ServiceResources expected = byMessage.translate(service);
                assertSame(byShape.translate(service), expected);
                listeners += expected.ofType(XdsType.LISTENER).size();
            }
        }
        assertThat(listeners).isGreaterThan(300);
    }

    @Test
    void aRouteABrokenRuleRefusesIsStillRefused() {
        // a wildcard in the middle of a domain breaks A28 (grpc-js): the shape leaves it to the message path
        MeshService wildcard =
                service("shop.*.dubbo", List.of(new ServicePort("grpc", 50051, Protocol.GRPC)), 2, new Random(1));
        ServiceResources r = new EnvoyTranslator().translate(wildcard);
        assertThat(r.ofType(XdsType.ROUTE)).isEmpty();
        assertThat(r.ofType(XdsType.LISTENER)).isEmpty();
        assertThat(r.skipped())
                .singleElement()
                .satisfies(k -> assertThat(k.detail()).contains("has a wildcard elsewhere than at one end"));
        assertSame(r, new EnvoyTranslator(EnvoyTranslator.Options.DEFAULTS, false).translate(wildcard));
    }

    @Test
    void loadAssignmentsARuleRefusesAreStillRefused() {
        ServicePort grpc = new ServicePort("grpc", 50051, Protocol.GRPC);
        // a registry sub zone named like the proxyless form's weight split: two localities would be the same
        List<Endpoint> clash = List.of(
                Endpoint.builder("10.0.0.1")
                        .port("grpc", 1)
                        .weight(5)
                        .locality(new Locality("r", "z", "a"))
                        .build(),
                Endpoint.builder("10.0.0.2")
                        .port("grpc", 1)
                        .weight(7)
                        .locality(new Locality("r", "z", "a"))
                        .build(),
                Endpoint.builder("10.0.0.3")
                        .port("grpc", 1)
                        .weight(9)
                        .locality(new Locality("r", "z", "a/weight-5"))
                        .build());
        MeshService s =
                new MeshService("clash.dubbo", List.of(grpc), clash, new TreeMap<>(), new TreeSet<>(Set.of(KEY)), "v1");
        ServiceResources r = new EnvoyTranslator().translate(s);
        assertThat(r.find(XdsType.CLUSTER, "outbound|50051||clash.dubbo")).isNotNull();
        assertThat(r.find(XdsType.CLUSTER, "grpc|50051||clash.dubbo")).isNull();
        assertThat(r.skipped())
                .singleElement()
                .satisfies(k -> assertThat(k.detail()).contains("appears twice"));
        assertSame(r, new EnvoyTranslator(EnvoyTranslator.Options.DEFAULTS, false).translate(s));

        // weights whose sum is above 32 bits: the port is refused, as before
        List<Endpoint> heavy = new ArrayList<>();
        for (int i = 0; i < 4_300; i++) {
            heavy.add(Endpoint.builder("10.2." + (i / 250) + "." + (1 + i % 250))
                    .port("grpc", 1)
                    .weight(Endpoint.MAX_WEIGHT)
                    .build());
        }
        heavy.sort(null);
        MeshService h =
                new MeshService("heavy.dubbo", List.of(grpc), heavy, new TreeMap<>(), new TreeSet<>(Set.of(KEY)), "v1");
        ServiceResources hr = new EnvoyTranslator().translate(h);
        assertThat(hr.ofType(XdsType.ENDPOINT)).isEmpty();
        assertThat(hr.skipped()).extracting(ServiceResources.Skipped::reason).containsOnly("weight-overflow");
        assertSame(hr, new EnvoyTranslator(EnvoyTranslator.Options.DEFAULTS, false).translate(h));
    }

    static MeshService plain(String host, ServicePort port, int endpoints, Health last) {
        List<Endpoint> list = new ArrayList<>();
        for (int i = 0; i < endpoints; i++) {
            list.add(Endpoint.builder("10.2.0." + (1 + i))
                    .port(port.name(), 8000 + i)
                    .health(i == endpoints - 1 ? last : Health.HEALTHY)
                    .locality(Locality.of("r" + i % 2, "z"))
                    .build());
        }
        list.sort(null);
        return new MeshService(host, List.of(port), list, new TreeMap<>(), new TreeSet<>(Set.of(KEY)), "v1");
    }

    /**
     * A service whose proxyless load assignment carries the sidecar one's endpoints: it keeps one copy of them (a rope
     * of its own cluster_name and the sidecar's body), and clients still receive the message path's bytes; where the
     * endpoints differ (an unhealthy one) or are too few for a rope to pay, each keeps its own bytes.
     */
    @Test
    void theProxylessLoadAssignment_sharesTheSidecarsEndpoints_whenTheyAreTheSameBytes() throws Exception {
        ServicePort port = new ServicePort("http", 8080, Protocol.HTTP);
        EnvoyTranslator byShape = new EnvoyTranslator(EnvoyTranslator.Options.DEFAULTS, true);
        EnvoyTranslator byMessage = new EnvoyTranslator(EnvoyTranslator.Options.DEFAULTS, false);

        MeshService same = plain("same.example", port, 10, Health.HEALTHY);
        ServiceResources r = byShape.translate(same);
        assertSame(r, byMessage.translate(same));
        XdsResource sidecar = r.find(XdsType.ENDPOINT, XdsNames.cluster("same.example", 8080));
        XdsResource proxyless = r.find(XdsType.ENDPOINT, XdsNames.grpcCluster("same.example", 8080));
        var a = io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.parseFrom(sidecar.value());
        var b = io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.parseFrom(
                proxyless.any().getValue());
        assertThat(b.getClusterName()).isEqualTo(proxyless.name());
        assertThat(b.getEndpointsList()).isEqualTo(a.getEndpointsList()).hasSize(2);
        assertThat(proxyless.value().getClass().getSimpleName())
                .as("one copy of the endpoints")
                .isEqualTo("RopeByteString");
        assertThat(proxyless.delta().toByteString())
                .isEqualTo(byMessage
                        .translate(same)
                        .find(XdsType.ENDPOINT, proxyless.name())
                        .delta()
                        .toByteString());

        assertThat(proxylessForm(byShape, byMessage, plain("unhealthy.example", port, 10, Health.UNHEALTHY)))
                .as("endpoints that differ are not shared")
                .isEqualTo("LiteralByteString");
        assertThat(proxylessForm(byShape, byMessage, plain("one.example", port, 1, Health.HEALTHY)))
                .as("below 128 bytes protobuf would copy the pieces")
                .isEqualTo("LiteralByteString");
    }

    /**
     * A proxyless load assignment made from the sidecar one's bytes (its own cluster_name, then the sidecar's body,
     * when every endpoint is healthy, without metadata, and of one weight in its locality) is the message path's, byte
     * for byte, for endpoints of every shape: healthy or not, weighed alike or not within and across localities,
     * labelled (metadata under some options), IPv6, none, a few or many, and names across the one- and two-byte length
     * prefixes. Both kinds are made: bodies the same and bodies that differ.
     */
    @Test
    void theProxylessLoadAssignmentMadeFromTheSidecarsBytes_isTheMessagePathsBytes() throws Exception {
        ServicePort port = new ServicePort("http", 8080, Protocol.HTTP);
        Map<String, Function<Integer, Endpoint.Builder>> shapes = new LinkedHashMap<>();
        shapes.put("healthy", i -> Endpoint.builder("10.4." + (i / 250) + "." + (1 + i % 250)));
        shapes.put(
                "healthy, a weight per locality",
                i -> Endpoint.builder("10.4." + (i / 250) + "." + (1 + i % 250))
                        .weight(i % 3 == 0 ? 5 : 9)
                        .locality(Locality.of("r", i % 3 == 0 ? "a" : "b")));
        shapes.put(
                "healthy, weights within a locality",
                i -> Endpoint.builder("10.4." + (i / 250) + "." + (1 + i % 250))
                        .weight(1 + i % 4)
                        .locality(Locality.of("r", "z" + i % 2)));
        for (Health h : List.of(Health.UNHEALTHY, Health.DRAINING)) {
            shapes.put(
                    "healthy and " + h,
                    i -> Endpoint.builder("10.4." + (i / 250) + "." + (1 + i % 250))
                            .health(i % 5 == 2 ? h : Health.HEALTHY));
        }
        shapes.put(
                "labelled",
                i -> Endpoint.builder("10.4." + (i / 250) + "." + (1 + i % 250))
                        .label("version", "v" + i % 2)
                        .label("app", "shapes"));
        shapes.put(
                "IPv6",
                i -> Endpoint.builder("fd00::" + Integer.toHexString(1 + i))
                        .locality(new Locality("r", "z", "s" + i % 2)));
        int same = 0;
        int differ = 0;
        for (EnvoyTranslator.Options options : OPTIONS) {
            EnvoyTranslator byShape = new EnvoyTranslator(options, true);
            EnvoyTranslator byMessage = new EnvoyTranslator(options, false);
            for (Map.Entry<String, Function<Integer, Endpoint.Builder>> shape : shapes.entrySet()) {
                for (int count : List.of(0, 1, 3, 40, 1_000)) {
                    for (String host : List.of("s.example", "s." + "b".repeat(130) + ".example")) {
                        List<Endpoint> list = new ArrayList<>();
                        for (int i = 0; i < count; i++) {
                            list.add(shape.getValue()
                                    .apply(i)
                                    .port("http", 8000 + i % 7)
                                    .build());
                        }
                        list.sort(null);
                        MeshService s = new MeshService(
                                host, List.of(port), list, new TreeMap<>(), new TreeSet<>(Set.of(KEY)), "v1");
                        ServiceResources r = byShape.translate(s);
                        assertSame(r, byMessage.translate(s));
                        XdsResource grpc = r.find(XdsType.ENDPOINT, XdsNames.grpcCluster(host, 8080));
                        if (grpc == null) continue; // no proxyless resources with these options
                        var sidecar = io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.parseFrom(
                                r.find(XdsType.ENDPOINT, XdsNames.cluster(host, 8080))
                                        .value());
                        var proxyless =
                                io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.parseFrom(grpc.value());
                        if (count > 0 && sidecar.getEndpointsList().equals(proxyless.getEndpointsList())) same++;
                        else differ++;
                    }
                }
            }
        }
        assertThat(same).isGreaterThan(50);
        assertThat(differ).isGreaterThan(50);
    }

    /** The class of the proxyless load assignment's bytes, after checking the resources against the message path. */
    private static String proxylessForm(EnvoyTranslator byShape, EnvoyTranslator byMessage, MeshService s) {
        ServiceResources r = byShape.translate(s);
        assertSame(r, byMessage.translate(s));
        return r.find(XdsType.ENDPOINT, XdsNames.grpcCluster(s.host(), 8080))
                .value()
                .getClass()
                .getSimpleName();
    }

    /**
     * A change of one endpoint among many (and of the ports, the service's labels, the endpoints' order), translated
     * with the previous translation: the same resources as a translation from scratch, and the message path's bytes;
     * what the ports alone decide is reused while they stay. The base shares one ports map across most endpoints (the
     * translator looks a port up once per map) and keeps them sorted (it finds duplicates in the run of one address
     * then), and some changes break that order.
     */
    @Test
    void oneChangeAmongMany_withThePrevious_isAFullTranslationAndTheMessagesBytes() {
        ServicePort grpc = new ServicePort("grpc", 50051, Protocol.GRPC);
        ServicePort http = new ServicePort("http", 8080, Protocol.HTTP);
        List<ServicePort> ports = List.of(http, grpc);
        Random random = new Random(5);
        List<Endpoint> base = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Endpoint.Builder b = Endpoint.builder("10.3.0." + (1 + i))
                    .weight(i % 4 == 0 ? 1 + random.nextInt(200) : 100)
                    .label("version", "v" + i % 2)
                    .label("app", "many")
                    .locality(Locality.of("r" + i % 2, "z"));
            if (i % 5 == 0) {
                b.port("grpc", 1 + random.nextInt(65535)).port("http", 1 + random.nextInt(65535));
            } else {
                b.port("grpc", 9000).port("http", 8080);
            }
            base.add(b.build());
        }
        base.sort(null);
        Map<String, Function<List<Endpoint>, List<Endpoint>>> changes = new LinkedHashMap<>();
        changes.put("label", l -> with(l, 17, e -> e.label("version", "v9")));
        changes.put("new label", l -> with(l, 18, e -> e.label("track", "canary")));
        changes.put("weight", l -> with(l, 3, e -> e.weight(77)));
        changes.put("weight to 0", l -> with(l, 4, e -> e.weight(0)));
        changes.put("disabled", l -> with(l, 5, e -> e.enabled(false)));
        changes.put("unhealthy", l -> with(l, 6, e -> e.health(Health.UNHEALTHY)));
        changes.put("draining", l -> with(l, 7, e -> e.health(Health.DRAINING)));
        changes.put("locality", l -> with(l, 9, e -> e.locality(new Locality("r9", "z9", "s"))));
        changes.put("one locality", l -> {
            List<Endpoint> out = l;
            for (int i = 0; i < l.size(); i++) out = with(out, i, e -> e.locality(Locality.NONE));
            return out;
        });
        changes.put("port number", l -> with(l, 11, e -> e.port("grpc", 1234)));
        changes.put("port number shared", l -> with(l, 12, e -> e.port("http", 9090)));
        changes.put("port gone", l -> {
            List<Endpoint> out = new ArrayList<>(l);
            Endpoint e = l.get(13);
            out.set(13, copy(e.address(), e, Map.of("grpc", e.port("grpc"))).build());
            return out;
        });
        changes.put("duplicate in order", l -> {
            List<Endpoint> out = new ArrayList<>(l);
            out.add(copy(l.get(21)).weight(3).build());
            out.add(copy(
                            l.get(22).address(),
                            l.get(22),
                            Map.of("grpc", 4444, "http", l.get(22).port("http")))
                    .build());
            out.sort(null);
            return out;
        });
        changes.put("duplicate out of order", l -> {
            List<Endpoint> out = new ArrayList<>(l);
            out.add(copy(l.get(0)).weight(9).build());
            out.add(copy("10.3.0.200", l.get(1), l.get(1).ports()).build());
            out.add(copy(l.get(30)).build());
            return out;
        });
        changes.put("host name and IPv6", l -> {
            List<Endpoint> out = new ArrayList<>(l);
            out.add(copy("many-1.internal", l.get(2), l.get(2).ports()).build());
            // two with the ports map most share: the second is a duplicate on both ports
            out.add(copy("fd00::1", l.get(3), l.get(3).ports()).build());
            out.add(copy("fd00::1", l.get(4), l.get(4).ports()).build());
            out.sort(null);
            return out;
        });
        changes.put("removed", l -> {
            List<Endpoint> out = new ArrayList<>(l);
            out.remove(25);
            return out;
        });
        changes.put("none left", l -> List.of());

        int reused = 0;
        for (EnvoyTranslator.Options options : OPTIONS) {
            EnvoyTranslator byShape = new EnvoyTranslator(options, true);
            EnvoyTranslator byMessage = new EnvoyTranslator(options, false);
            for (Set<String> routeKeys : List.of(Set.<String>of(), Set.of("version"))) {
                MeshService before =
                        new MeshService("many.example", ports, base, new TreeMap<>(), new TreeSet<>(Set.of(KEY)), "v1");
                ServiceResources previous = byShape.translate(before, null, routeKeys);
                assertSame(previous, byMessage.translate(before, null, routeKeys));
                List<MeshService> afters = new ArrayList<>();
                List<String> names = new ArrayList<>();
                changes.forEach((name, change) -> {
                    names.add(name);
                    afters.add(new MeshService(
                            "many.example",
                            ports,
                            change.apply(base),
                            new TreeMap<>(),
                            new TreeSet<>(Set.of(KEY)),
                            "v2"));
                });
                names.add("service labels");
                afters.add(new MeshService(
                        "many.example",
                        ports,
                        base,
                        new TreeMap<>(Map.of("dubbo.interface", "x.Many")),
                        new TreeSet<>(Set.of(KEY)),
                        "v2"));
                names.add("ports");
                afters.add(new MeshService(
                        "many.example",
                        List.of(grpc, new ServicePort("http", 8081, Protocol.HTTP2)),
                        base,
                        new TreeMap<>(),
                        new TreeSet<>(Set.of(KEY)),
                        "v2"));
                for (int i = 0; i < afters.size(); i++) {
                    MeshService after = afters.get(i);
                    ServiceResources incremental = byShape.translate(after, previous, routeKeys);
                    assertThat(incremental)
                            .as("%s, %s", names.get(i), options)
                            .isEqualTo(byShape.translate(after, null, routeKeys));
                    assertSame(incremental, byMessage.translate(after, null, routeKeys));
                    // both paths share how endpoints are picked: checked here against the model itself
                    for (ServicePort p : after.ports()) {
                        assertThat(EnvoyTranslatorTest.endpoints(EnvoyTranslatorTest.loadAssignment(
                                        incremental, XdsNames.cluster(after.host(), p.number()))))
                                .as("%s, port %s", names.get(i), p.name())
                                .containsExactlyInAnyOrderElementsOf(expectedServed(after, p));
                    }
                    assertThat(incremental.skipped())
                            .extracting(ServiceResources.Skipped::reason)
                            .as(names.get(i))
                            .containsExactlyInAnyOrderElementsOf(
                                    switch (names.get(i)) {
                                        case "duplicate in order" ->
                                            List.of("duplicate-endpoint", "duplicate-endpoint", "duplicate-endpoint");
                                        case "duplicate out of order" ->
                                            List.of(
                                                    "duplicate-endpoint",
                                                    "duplicate-endpoint",
                                                    "duplicate-endpoint",
                                                    "duplicate-endpoint");
                                        case "host name and IPv6" ->
                                            List.of(
                                                    "endpoint-address",
                                                    "endpoint-address",
                                                    "duplicate-endpoint",
                                                    "duplicate-endpoint");
                                        default -> List.of();
                                    });
                    if (!after.ports().equals(ports)) continue;
                    for (XdsResource c : incremental.ofType(XdsType.CLUSTER)) {
                        assertThat(c).isSameAs(previous.find(XdsType.CLUSTER, c.name()));
                        reused++;
                    }
                }
            }
        }
        assertThat(reused).isGreaterThan(100);
    }

    /** What a port's load assignment should hold: each routable endpoint with the port and an IP address, once. */
    private static Set<String> expectedServed(MeshService s, ServicePort p) {
        Set<String> out = new TreeSet<>();
        for (Endpoint e : s.endpoints()) {
            int n = e.port(p.name());
            if (e.routable() && n != 0 && IpAddresses.isBare(e.address())) out.add(e.address() + ":" + n);
        }
        return out;
    }

    /** The endpoints with the one at {@code index} rebuilt with a change. */
    private static List<Endpoint> with(List<Endpoint> endpoints, int index, Consumer<Endpoint.Builder> change) {
        List<Endpoint> out = new ArrayList<>(endpoints);
        Endpoint e = endpoints.get(index);
        Endpoint.Builder b = copy(e);
        change.accept(b);
        out.set(index, b.build());
        return out;
    }

    /** A builder of {@code e} as it is. */
    private static Endpoint.Builder copy(Endpoint e) {
        return copy(e.address(), e, e.ports());
    }

    /** A builder of {@code e} at another address, with these ports. */
    private static Endpoint.Builder copy(String address, Endpoint e, Map<String, Integer> ports) {
        Endpoint.Builder b = Endpoint.builder(address)
                .weight(e.weight())
                .enabled(e.enabled())
                .health(e.health())
                .labels(e.labels())
                .locality(e.locality());
        ports.forEach(b::port);
        return b;
    }
}
