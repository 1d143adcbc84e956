package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A snapshot applied incrementally serves what a rebuild from it serves, resource for resource and version for
 * version: the resources a translation reuses unchanged are not put again, and a sidecar entry is made again only
 * when a service's clusters, ports or Dubbo identities may have changed, yet an endpoint change that costs a port its
 * cluster (its weights overflow) still reaches the sidecars' outbound routes.
 */
class IncrementalApplyTest {

    private static final ServicePort HTTP = new ServicePort("http", 80, Protocol.HTTP);
    private static final ServicePort ADMIN = new ServicePort("admin", 8081, Protocol.HTTP);
    private static final String WIDE = "wide.zookeeper";
    private static final String WIDE_ADMIN = XdsNames.cluster(WIDE, ADMIN.number());

    /**
     * A service on two ports: {@code http} on a few endpoints, {@code admin} on {@code heavy} endpoints of the
     * largest weight; above 4,294 of them, their sum no longer fits in 32 bits and the port has no cluster.
     */
    private static ServiceUpsert wide(int http, int heavy) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < http; i++) {
            endpoints.add(
                    Endpoint.builder("10.9.0." + (1 + i)).port("http", 8080).build());
        }
        for (int i = 0; i < heavy; i++) {
            endpoints.add(Endpoint.builder("10.8." + (i / 250) + "." + (1 + i % 250))
                    .port("admin", 8081)
                    .weight(Endpoint.MAX_WEIGHT)
                    .build());
        }
        return new ServiceUpsert(
                new ServiceKey("zookeeper", Upserts.REGISTRY, "", "", "wide", ""),
                WIDE,
                List.of(HTTP, ADMIN),
                endpoints);
    }

    /** Every resource the core's engine serves (type and name) with its content version. */
    private static Map<String, Long> served(XdsCore core) {
        Map<String, Long> out = new TreeMap<>();
        for (XdsType t : XdsType.all()) {
            core.index()
                    .engine()
                    .forEach(t.resourceType(), r -> out.put(t.shortName() + " " + r.name(), r.versionHash()));
        }
        return out;
    }

    /** Whether some sidecar resource names the cluster. */
    private static boolean sidecarNames(XdsCore core, String cluster) {
        return core.index().sidecar().resources().stream()
                .anyMatch(r -> r.value().toStringUtf8().contains(cluster));
    }

    /** A Dubbo interface's providers, one per address. */
    private static ServiceUpsert greeter(String... ips) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (String ip : ips)
            endpoints.add(Upserts.dubboProvider(ip, 20880, Map.of()).build());
        return Upserts.dubboInterface("org.demo.Greeter", "1.0.0", "", endpoints);
    }

    @Test
    void eachSnapshotAppliedIncrementally_servesWhatARebuildFromItServes() {
        Endpoint first = Upserts.springInstance("10.0.0.1", 8080).build();
        Endpoint second = Upserts.springInstance("10.0.0.2", 8080).build();
        ServiceUpsert orders1 = Upserts.springCloud("orders", List.of(first));
        ServiceUpsert orders2 = Upserts.springCloud("orders", List.of(first, second));
        ServiceUpsert orders3 = Upserts.springCloud(
                "orders",
                List.of(Upserts.springInstance("10.0.0.1", 8080).weight(7).build(), second));
        ServiceUpsert greeter = greeter("10.0.2.1");
        ServiceUpsert greeter2 = greeter("10.0.2.1", "10.0.2.2");
        // the interface in a second registry, another version, under the same host: the service's sources (so its Dubbo
        // identities) change, its clusters do not
        ServiceUpsert greeterNext = new ServiceUpsert(
                new ServiceKey("zookeeper", "zk2", "", "", "org.demo.Greeter", "2.0.0"),
                greeter.host(),
                greeter.ports(),
                List.of(Upserts.dubboProvider("10.0.2.3", 20880, Map.of()).build()),
                greeter.labels());
        Endpoint app = Upserts.dubboAppInstance("10.0.1.1", 50051).build();
        ServiceUpsert shop = Upserts.dubboApplication("shop", List.of(app));
        ServiceUpsert shop2 = Upserts.dubboApplication(
                "shop", List.of(app, Upserts.dubboAppInstance("10.0.1.2", 50051).build()));
        try (TestCatalog catalog = new TestCatalog()) {
            List<MeshSnapshot> snapshots = SidecarBurstTest.snapshotsAfter(
                    catalog,
                    List.<RegistryEvent>of(
                            orders1,
                            greeter,
                            shop,
                            wide(2, 3),
                            orders2,
                            shop2,
                            greeter2,
                            greeterNext,
                            orders3,
                            wide(3, 3),
                            new ServiceRemoval(shop.key()),
                            orders2,
                            shop));
            XdsCore incremental = SidecarBurstTest.core();
            for (MeshSnapshot s : snapshots) {
                incremental.applySnapshot(s);
                XdsCore rebuilt = SidecarBurstTest.core();
                rebuilt.applySnapshot(s);
                assertThat(served(incremental)).as("sequence %d", s.sequence()).isEqualTo(served(rebuilt));
                assertThat(SidecarBurstTest.sidecar(incremental)).isEqualTo(SidecarBurstTest.sidecar(rebuilt));
            }
        }
    }

    @Test
    void anEndpointChangeThatCostsAPortItsCluster_reachesTheSidecars_oneThatDoesNotLeavesThem() {
        try (TestCatalog catalog = new TestCatalog()) {
            List<MeshSnapshot> snapshots = SidecarBurstTest.snapshotsAfter(
                    catalog,
                    List.of(
                            wide(2, 4_294), // fits: 4,294,000,000
                            wide(2, 4_295), // overflows: the admin port loses its cluster
                            wide(3, 4_295), // an endpoint on http: the clusters stay
                            wide(3, 4_294))); // fits again
            XdsCore core = SidecarBurstTest.core();
            core.applySnapshot(snapshots.get(0));
            core.applySnapshot(snapshots.get(1));
            assertThat(core.index().service(WIDE).find(XdsType.CLUSTER, WIDE_ADMIN))
                    .isNotNull();
            assertThat(sidecarNames(core, WIDE_ADMIN)).isTrue();
            long translations = core.sidecarTranslations();
            Map<String, Long> sidecar = SidecarBurstTest.sidecar(core);

            core.applySnapshot(snapshots.get(2));
            assertThat(core.index().service(WIDE).find(XdsType.CLUSTER, WIDE_ADMIN))
                    .isNull();
            assertThat(core.index().service(WIDE).skipped())
                    .extracting(ServiceResources.Skipped::reason)
                    .contains("weight-overflow");
            assertThat(core.sidecarTranslations()).isEqualTo(translations + 1);
            assertThat(sidecarNames(core, WIDE_ADMIN))
                    .as("no route names the cluster gone")
                    .isFalse();
            assertThat(sidecarNames(core, XdsNames.cluster(WIDE, HTTP.number())))
                    .isTrue();
            assertThat(SidecarBurstTest.sidecar(core)).isNotEqualTo(sidecar);
            Map<String, Long> withoutAdmin = SidecarBurstTest.sidecar(core);

            core.applySnapshot(snapshots.get(3));
            assertThat(core.sidecarTranslations())
                    .as("an endpoint change alone")
                    .isEqualTo(translations + 1);
            assertThat(SidecarBurstTest.sidecar(core)).isEqualTo(withoutAdmin);

            core.applySnapshot(snapshots.get(4));
            assertThat(core.sidecarTranslations()).isEqualTo(translations + 2);
            assertThat(SidecarBurstTest.sidecar(core)).isEqualTo(sidecar);
            assertThat(sidecarNames(core, WIDE_ADMIN)).isTrue();
        }
    }
}
