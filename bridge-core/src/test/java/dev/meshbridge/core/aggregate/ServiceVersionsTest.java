package dev.meshbridge.core.aggregate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * A service's content version changes with every field of every endpoint, and only with them: xDS and MCP translate a
 * service again only when its version moved, so a change the version missed would never be served.
 */
class ServiceVersionsTest {

    private static final List<ServicePort> PORTS = List.of(new ServicePort("http", 8080, Protocol.HTTP));
    private static final List<ServiceKey> SOURCES = List.of(new ServiceKey("zookeeper", "zk1", "", "", "orders", ""));

    private static Endpoint endpoint(String address, UnaryOperator<Endpoint.Builder> tweak) {
        // fresh strings and maps each time, as a watcher builds them
        return tweak.apply(Endpoint.builder(new String(address))
                        .port(new String("http"), 8080)
                        .label(new String("app"), new String("orders"))
                        .locality(Locality.of(new String("eu"), new String("eu-1"))))
                .build();
    }

    private static String version(List<Endpoint> endpoints) {
        return ServiceVersions.version("orders.test", PORTS, endpoints, new TreeMap<>(Map.of("team", "a")), SOURCES);
    }

    @Test
    void equalContent_sameVersion_everyFieldOfAnEndpoint_another() {
        List<UnaryOperator<Endpoint.Builder>> tweaks = List.of(
                b -> b,
                b -> b.weight(50),
                b -> b.enabled(false),
                b -> b.health(Health.UNHEALTHY),
                b -> b.port("http", 8081),
                b -> b.port("grpc", 9090),
                b -> b.label("app", "payments"),
                b -> b.label("version", "v2"),
                b -> b.locality(Locality.of("eu", "eu-2")),
                b -> b.locality(new Locality("eu", "eu-1", "rack-1")),
                b -> b.locality(Locality.NONE));
        Set<String> versions = new HashSet<>();
        for (String address : List.of("10.0.0.1", "10.0.0.2", "orders-1.local", "orders-2.local", "fd00::1")) {
            for (UnaryOperator<Endpoint.Builder> tweak : tweaks) {
                String v = version(List.of(endpoint("10.9.9.9", b -> b), endpoint(address, tweak)));
                assertThat(version(List.of(endpoint("10.9.9.9", b -> b), endpoint(address, tweak))))
                        .as("built again from fresh strings")
                        .isEqualTo(v);
                versions.add(v);
            }
        }
        assertThat(versions).as("one version per distinct content").hasSize(5 * tweaks.size());
    }

    @Test
    void theNumberAndOrderOfEndpoints_changeTheVersion() {
        Endpoint a = endpoint("10.0.0.1", b -> b);
        Endpoint c = endpoint("10.0.0.2", b -> b);
        List<String> versions = new ArrayList<>();
        versions.add(version(List.of()));
        versions.add(version(List.of(a)));
        versions.add(version(List.of(a, c)));
        versions.add(version(List.of(c, a)));
        versions.add(version(List.of(a, a)));
        assertThat(new HashSet<>(versions)).hasSize(versions.size());
    }
}
