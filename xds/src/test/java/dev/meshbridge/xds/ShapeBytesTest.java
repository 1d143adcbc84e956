package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
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

    /** The class of the proxyless load assignment's bytes, after checking the resources against the message path. */
    private static String proxylessForm(EnvoyTranslator byShape, EnvoyTranslator byMessage, MeshService s) {
        ServiceResources r = byShape.translate(s);
        assertSame(r, byMessage.translate(s));
        return r.find(XdsType.ENDPOINT, XdsNames.grpcCluster(s.host(), 8080))
                .value()
                .getClass()
                .getSimpleName();
    }
}
