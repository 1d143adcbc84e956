package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.WeightedDestination;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;

/** Renders a route table as the lines a user reads on {@code /debug/ingress}, for assertions. */
final class RouteTables {

    private RouteTables() {}

    /**
     * One line per served route: {@code <match> -> <weight> <destination>, ... [<ns>/<name>]}; a registry destination
     * reads {@code host[:port][ subset]}, a Kubernetes Service {@code svc:host:port}; a rewrite reads {@code rewrite
     * prefix /api} or {@code rewrite path /api}; the default backend's match is {@code default}.
     */
    static List<String> routes(RouteTable table) {
        List<String> out = new ArrayList<>();
        for (HttpRoute r : table.servedRoutes()) {
            boolean isDefault = table.defaultBackend().map(d -> d == r).orElse(false);
            StringBuilder sb =
                    new StringBuilder(isDefault ? "default" : r.match().toString()).append(" ->");
            for (int i = 0; i < r.destinations().size(); i++) {
                WeightedDestination wd = r.destinations().get(i);
                sb.append(i == 0 ? " " : ", ").append(wd.weight()).append(' ').append(destination(wd));
            }
            r.rewrite().ifPresent(w -> sb.append(" rewrite ").append(w));
            out.add(sb.append(" [").append(r.owner().key()).append(']').toString());
        }
        return out;
    }

    /** Waits until the controller has published a table whose routes are exactly {@code lines}; returns it. */
    static RouteTable await(IngressController controller, Duration wait, String... lines) {
        AtomicReference<RouteTable> seen = new AtomicReference<>();
        Awaitility.await().atMost(wait).untilAsserted(() -> {
            seen.set(controller.routes().current());
            assertThat(controller.routes().synced()).isTrue();
            assertThat(routes(seen.get())).containsExactly(lines);
        });
        return seen.get();
    }

    static String destination(WeightedDestination wd) {
        return switch (wd.destination()) {
            case RegistryDestination d ->
                d.host()
                        + (d.port() > 0 ? ":" + d.port() : "")
                        + (d.subset().isEmpty() ? "" : " " + d.subset())
                        + (d.subsetLabels().isEmpty() ? "" : d.subsetLabels().toString());
            case KubernetesServiceDestination d -> "svc:" + d.host() + ":" + (d.port() > 0 ? d.port() : d.portName());
        };
    }

    /** One line per TLS host: {@code <host> <ns>/<secret> <fingerprint or missing> [<ns>/<ingress>]}. */
    static List<String> tls(RouteTable table) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, TlsEntry> e : table.tls().entrySet()) {
            TlsEntry t = e.getValue();
            out.add((e.getKey().isEmpty() ? "*" : e.getKey()) + " " + t.secret() + " "
                    + t.material()
                            .map(m -> "cert:"
                                    + m.certificateChain()
                                            .lines()
                                            .skip(1)
                                            .findFirst()
                                            .orElse(""))
                            .orElse("missing")
                    + " [" + t.owner().key() + "]");
        }
        return out;
    }
}
