package dev.meshbridge.xds;

import static dev.meshbridge.xds.IngressTables.contribution;
import static dev.meshbridge.xds.IngressTables.ref;
import static dev.meshbridge.xds.IngressTables.registry;
import static dev.meshbridge.xds.IngressTables.route;
import static dev.meshbridge.xds.IngressTables.tls;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meshbridge.ads.PackedBytes;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.spi.ServiceUpsert;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The server holds what it serves packed: every resource shape the translators make comes back from its packed form
 * as the same bytes, the same Any and Delta wrapper, the same size and an equal resource, and a real ADS client
 * receives the bytes a translation from scratch makes.
 */
class XdsPackingTest {

    private final PackedBytes packer = new PackedBytes(XdsPacking.DICTIONARY);
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private int packed;

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closeables) c.close();
    }

    private void holdsTheSameBytes(List<XdsResource> resources) {
        for (XdsResource r : resources) {
            XdsResource p = r.packed(packer);
            assertThat(p.value()).as("%s %s", r.type(), r.name()).isEqualTo(r.value());
            assertThat(p.any().toByteString()).isEqualTo(r.any().toByteString());
            assertThat(p.delta().toByteString()).isEqualTo(r.delta().toByteString());
            assertThat(p.size()).isEqualTo(r.size());
            assertThat(p).isEqualTo(r).hasSameHashCodeAs(r);
            assertThat(r).isEqualTo(p);
            assertThat(p.packed(packer)).isSameAs(p);
            if (p.isPacked()) {
                packed++;
                assertThat(p.heldSize()).isLessThan(r.size());
                assertThat(p.packed(packer).value()).isEqualTo(r.value());
            } else {
                assertThat(p).isSameAs(r);
            }
        }
    }

    @Test
    void everyShapeTheTranslatorsMake_comesBackAsTheSameBytes() {
        Random random = new Random(8);
        int resources = 0;
        for (EnvoyTranslator.Options options : ShapeBytesTest.OPTIONS) {
            for (boolean byShape : new boolean[] {true, false}) {
                EnvoyTranslator translator = new EnvoyTranslator(options, byShape);
                TreeMap<String, EnvoySidecarTranslator.Entry> entries = new TreeMap<>();
                for (int s = 0; s < 60; s++) {
                    // every protocol, locality, weight and health; and large ones with long hosts (two-byte lengths)
                    MeshService service = s % 10 == 0
                            ? ShapeBytesTest.service(
                                    "svc" + s + "." + "a".repeat(random.nextInt(140)) + ".example",
                                    List.of(
                                            new ServicePort("grpc", 50051, Protocol.GRPC),
                                            new ServicePort("http", 80, Protocol.HTTP)),
                                    300,
                                    random)
                            : ConformanceRulesTest.generated(random, s);
                    ServiceResources r = translator.translate(service);
                    holdsTheSameBytes(r.resources());
                    resources += r.resources().size();
                    entries.put(service.host(), EnvoySidecarTranslator.entry(service, r));
                }
                // the proxyless load assignment that shares the sidecar one's endpoints (a rope)
                ServicePort http = new ServicePort("http", 8080, Protocol.HTTP);
                holdsTheSameBytes(translator
                        .translate(ShapeBytesTest.plain("same.example", http, 10, Health.HEALTHY))
                        .resources());
                // the sidecars' outbound listeners and route configurations over all of them
                SidecarResources sidecar =
                        new EnvoySidecarTranslator(translator, SidecarOptions.DEFAULTS).translate(entries);
                assertThat(sidecar.resources()).isNotEmpty();
                holdsTheSameBytes(sidecar.resources());
            }
        }
        assertThat(resources).isGreaterThan(1_000);
        assertThat(packed).isGreaterThan(resources / 2);
    }

    @Test
    void theIngressResources_comeBackAsTheSameBytes() {
        EnvoyTranslator base = new EnvoyTranslator();
        Map<String, ServiceResources> catalog = new HashMap<>();
        MeshService web = ShapeBytesTest.service(
                "web.dubbo", List.of(new ServicePort("http", 80, Protocol.HTTP)), 3, new Random(3));
        catalog.put(web.host(), base.translate(web));
        IngressRef owner = ref("shop", "shop", 0);
        RouteTable table = RouteTable.merge(List.of(contribution(
                owner,
                List.of(
                        route(owner, "shop.example.com", PathType.PREFIX, "/", registry("web.dubbo", 100)),
                        route(owner, "shop.example.com", PathType.PREFIX, "/gone", registry("gone.dubbo", 100))),
                null,
                tls(owner, "shop-tls", true, "shop.example.com"))));
        IngressResources r = new EnvoyIngressTranslator(base, XdsOptions.Ingress.DEFAULTS)
                .translate(table, h -> catalog.containsKey(h) ? EnvoyTranslator.servedPorts(catalog.get(h)) : null);
        assertThat(r.resources()).extracting(XdsResource::type).contains(XdsType.LISTENER, XdsType.SECRET);
        holdsTheSameBytes(r.resources());
    }

    /**
     * A proxyless load assignment whose endpoints are the sidecar one's bytes is held as a reference to the packed
     * sidecar one, and reads as its own bytes; where the endpoints differ (an unhealthy one) it is not.
     */
    @Test
    void theProxylessLoadAssignment_isHeldAsTheSidecarOnes_whenItsEndpointsAreTheSameBytes() {
        ServicePort http = new ServicePort("http", 8080, Protocol.HTTP);
        for (int endpoints : new int[] {1, 10, 300}) {
            ServiceResources r = new EnvoyTranslator()
                    .translate(ShapeBytesTest.plain("same.example", http, endpoints, Health.HEALTHY));
            XdsResource sidecar = r.find(XdsType.ENDPOINT, XdsNames.cluster("same.example", 8080));
            XdsResource proxyless = r.find(XdsType.ENDPOINT, XdsNames.grpcCluster("same.example", 8080));
            XdsResource held = sidecar.packed(packer);
            assertThat(held.isPacked()).isTrue();
            XdsResource shared = proxyless.sharing(sidecar, held);
            assertThat(shared).isNotNull().isEqualTo(proxyless);
            assertThat(shared.heldSize()).isZero();
            assertThat(shared.isPacked()).isTrue();
            assertThat(shared.value()).isEqualTo(proxyless.value());
            assertThat(shared.size()).isEqualTo(proxyless.size());
            assertThat(shared.any().toByteString()).isEqualTo(proxyless.any().toByteString());
            assertThat(shared.delta().toByteString())
                    .isEqualTo(proxyless.delta().toByteString());
            assertThat(shared.packed(packer)).isSameAs(shared);
            // either way round it reads as its own bytes; never with a load assignment held as made
            assertThat(sidecar.sharing(proxyless, proxyless.packed(packer)).value())
                    .isEqualTo(sidecar.value());
            assertThat(proxyless.sharing(sidecar, sidecar)).isNull();
        }
        ServiceResources unhealthy =
                new EnvoyTranslator().translate(ShapeBytesTest.plain("unhealthy.example", http, 10, Health.UNHEALTHY));
        XdsResource sidecar = unhealthy.find(XdsType.ENDPOINT, XdsNames.cluster("unhealthy.example", 8080));
        XdsResource proxyless = unhealthy.find(XdsType.ENDPOINT, XdsNames.grpcCluster("unhealthy.example", 8080));
        assertThat(proxyless.sharing(sidecar, sidecar.packed(packer))).isNull();
    }

    /** What the form is for: the resources of a usual service are held in a fraction of their bytes. */
    @Test
    void aUsualServicesResources_areHeldInAFractionOfTheirBytes() {
        ServicePort http = new ServicePort("http", 80, Protocol.HTTP);
        ServiceResources r =
                new EnvoyTranslator().translate(ShapeBytesTest.plain("orders.zookeeper", http, 10, Health.HEALTHY));
        int bytes = 0;
        int held = 0;
        for (XdsResource x : r.resources()) {
            bytes += x.size();
            held += x.packed(packer).heldSize();
            System.out.println("SIZE " + x.type() + " " + x.name() + " " + x.size() + " -> "
                    + x.packed(packer).heldSize());
        }
        assertThat(held).isLessThan(bytes / 2);
    }

    /**
     * A real ADS client, SotW and Delta, receives from the server (which holds every resource packed) exactly the bytes
     * and versions a translation from scratch makes, for the clusters, load assignments, API listeners and routes of
     * the catalog's services and for the sidecar's outbound listeners.
     */
    @Test
    void anAdsClient_receivesTheTranslationsBytes() throws Exception {
        XdsTestBed bed = new XdsTestBed();
        closeables.add(bed);
        List<ServiceUpsert> upserts = new ArrayList<>();
        List<String> ips = new ArrayList<>();
        for (int i = 1; i <= 10; i++) ips.add("10.0.0." + i);
        upserts.add(AdsSotwTest.shop(ips.toArray(String[]::new)));
        upserts.add(AdsSotwTest.orders(ips.subList(0, 7).toArray(String[]::new)));
        bed.send(upserts.toArray(ServiceUpsert[]::new));

        // what a translation from scratch makes of the same catalog
        Map<XdsType, Map<String, XdsResource>> expected = new HashMap<>();
        EnvoyTranslator translator = new EnvoyTranslator();
        for (MeshService s : bed.catalog.snapshot().services().values()) {
            for (XdsResource x : translator.translate(s).resources()) {
                expected.computeIfAbsent(x.type(), t -> new TreeMap<>()).put(x.name(), x);
            }
        }
        int held = 0;
        for (Map<String, XdsResource> m : expected.values()) {
            for (XdsResource x : m.values()) {
                XdsResource served = bed.server.served(x.type(), x.name());
                assertThat(served).isEqualTo(x);
                if (served.isPacked()) held++;
            }
        }
        assertThat(held).as("the server holds them packed").isGreaterThan(4);
        assertThat(bed.server
                        .served(XdsType.ENDPOINT, "grpc|80||orders.zookeeper")
                        .heldSize())
                .as("the proxyless load assignment held as the sidecar one")
                .isZero();

        AdsClient sotw = bed.client("envoy-sotw").openSotw();
        AdsClient delta = bed.client("envoy-delta").openDelta();
        int received = 0;
        for (XdsType type : List.of(XdsType.CLUSTER, XdsType.ENDPOINT, XdsType.LISTENER, XdsType.ROUTE)) {
            List<String> names = new ArrayList<>(expected.get(type).keySet());
            sotw.request(type, "", "", names);
            DiscoveryResponse r = sotw.next();
            assertThat(r.getResourcesCount()).isEqualTo(names.size());
            for (Any any : r.getResourcesList()) {
                XdsResource want = find(expected.get(type), any);
                assertThat(any.toByteString()).isEqualTo(want.any().toByteString());
                received++;
            }
            sotw.ack(r, names.toArray(String[]::new));
            delta.delta(type, names, List.of(), Map.of());
            DeltaDiscoveryResponse d = delta.nextDelta();
            assertThat(d.getResourcesCount()).isEqualTo(names.size());
            for (var res : d.getResourcesList()) {
                XdsResource want = expected.get(type).get(res.getName());
                assertThat(res.toByteString()).isEqualTo(want.delta().toByteString());
                received++;
            }
            delta.deltaAck(d);
        }
        assertThat(received)
                .isEqualTo(2 * expected.values().stream().mapToInt(Map::size).sum());

        // the outbound listeners a sidecar's wildcard gets: what the sidecar translator makes of the same services
        TreeMap<String, EnvoySidecarTranslator.Entry> entries = new TreeMap<>();
        for (MeshService s : bed.catalog.snapshot().services().values()) {
            entries.put(s.host(), EnvoySidecarTranslator.entry(s, translator.translate(s)));
        }
        SidecarResources sidecar = new EnvoySidecarTranslator(translator, SidecarOptions.DEFAULTS).translate(entries);
        AdsClient envoy = bed.client("envoy-sidecar").openSotw();
        envoy.subscribe(XdsType.LISTENER);
        DiscoveryResponse lds = envoy.next();
        List<XdsResource> listeners = sidecar.resources().stream()
                .filter(x -> x.type() == XdsType.LISTENER)
                .toList();
        assertThat(lds.getResourcesCount()).isEqualTo(listeners.size()).isPositive();
        for (Any any : lds.getResourcesList()) {
            XdsResource want = listeners.stream()
                    .filter(x -> x.any().equals(any))
                    .findFirst()
                    .orElseThrow();
            assertThat(any.toByteString()).isEqualTo(want.any().toByteString());
        }
    }

    private static XdsResource find(Map<String, XdsResource> byName, Any any) {
        for (XdsResource x : byName.values()) {
            if (x.any().getValue().equals(any.getValue())) return x;
        }
        throw new AssertionError("received a resource no translation makes: " + any.getTypeUrl());
    }
}
