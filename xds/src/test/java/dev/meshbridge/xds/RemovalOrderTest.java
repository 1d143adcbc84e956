package dev.meshbridge.xds;

import static dev.meshbridge.xds.IngressTables.routeLines;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.spi.ServiceRemoval;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Make before break for removals, as an Envoy gateway sees it: when a service an Ingress route sends traffic to goes,
 * the route stops naming its cluster before the cluster is removed, so no request meets "cluster not found".
 */
class RemovalOrderTest {

    private static final String NEXT = "outbound|50051||greeter-next.dubbo";

    @TempDir
    Path dir;

    private IngressBed bed;

    @AfterEach
    void close() {
        if (bed != null) bed.close();
    }

    private static boolean routeNames(EnvoyLikeClient c, String cluster) {
        if (!c.held(XdsType.ROUTE).containsKey(XdsNames.INGRESS_ROUTE)) return false;
        return routeLines(c.routeConfiguration(XdsNames.INGRESS_ROUTE)).stream().anyMatch(l -> l.contains(cluster));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sotw", "delta"})
    void serviceGone_routeStopsNamingItsCluster_beforeTheClusterIsRemoved(String protocol) {
        bed = new IngressBed(dir);
        bed.send(IngressBed.shopCatalog());
        bed.write("shop.yaml", IngressBed.resource("ingress/shop.yaml"));
        bed.awaitRoutes(6);
        EnvoyLikeClient envoy =
                new EnvoyLikeClient(bed.xds.client("envoy-" + protocol), protocol.equals("delta")).start();
        envoy.await(c -> {
            assertThat(c.held(XdsType.CLUSTER)).containsKey(NEXT);
            assertThat(routeNames(c, NEXT)).isTrue();
            assertThat(c.endpoints(NEXT)).isNotEmpty();
        });

        bed.xds.send(new ServiceRemoval(
                IngressBed.dubboApp("greeter-next", "v1", "10.3.0.1").key()));

        // step through the responses as they come: whenever the cluster is gone, no route may still name it
        List<String> timeline = new ArrayList<>();
        while (envoy.held(XdsType.CLUSTER).containsKey(NEXT) || routeNames(envoy, NEXT)) {
            XdsType type = envoy.next();
            boolean clusterHeld = envoy.held(XdsType.CLUSTER).containsKey(NEXT);
            boolean named = routeNames(envoy, NEXT);
            timeline.add(type.shortName()
                    + (clusterHeld ? " cluster held" : " cluster gone")
                    + (named ? ", route names it" : ", route does not name it"));
            assertThat(clusterHeld || !named)
                    .as("a route names a cluster the client no longer has: %s", timeline)
                    .isTrue();
        }
        assertThat(timeline)
                .as("the route changed in a response of its own before the removal")
                .hasSizeGreaterThan(1);
        assertThat(timeline.get(timeline.size() - 1)).startsWith("cds");
        assertThat(EnvoyConfigCheck.check(envoy.held())).isEmpty();
    }
}
