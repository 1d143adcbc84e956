package dev.meshbridge.core.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Endpoints sort as they always did (the order decides the bytes of every load assignment and ServiceEntry): by
 * address, ports as formatted, weight, locality, labels as formatted, health, enabled.
 */
class EndpointOrderTest {

    /** The order as first written: maps compared through their {@code toString} forms. */
    private static final Comparator<Endpoint> REFERENCE = Comparator.comparing(Endpoint::address)
            .thenComparing(e -> e.ports().toString())
            .thenComparingInt(Endpoint::weight)
            .thenComparing(Endpoint::locality)
            .thenComparing(e -> e.labels().toString())
            .thenComparing(Endpoint::health)
            .thenComparing(Endpoint::enabled);

    @Test
    void compareTo_ordersAsTheFormattedMapsDid() {
        Random random = new Random(22);
        List<Endpoint> endpoints = new ArrayList<>();
        String[] portNames = {"dubbo", "tri", "http", "a", "ab"};
        String[] labelKeys = {"app", "version", "zone", "app.kubernetes.io/name", "v"};
        String[] values = {"", "1", "10", "2", "a-b", "a"};
        for (int i = 0; i < 600; i++) {
            // few addresses, so most pairs get past the address to the maps and the rest
            Endpoint.Builder b = Endpoint.builder("10.0.0." + random.nextInt(3));
            int ports = 1 + random.nextInt(2);
            for (int p = 0; p < ports; p++) b.port(portNames[random.nextInt(portNames.length)], 1 + random.nextInt(3));
            int labels = random.nextInt(3);
            for (int l = 0; l < labels; l++)
                b.label(labelKeys[random.nextInt(labelKeys.length)], values[random.nextInt(values.length)]);
            b.weight(random.nextInt(2) * 100)
                    .enabled(random.nextBoolean())
                    .health(Health.values()[random.nextInt(Health.values().length)])
                    .locality(random.nextBoolean() ? Locality.NONE : Locality.of("r", "z" + random.nextInt(2)));
            endpoints.add(b.build());
        }
        for (Endpoint x : endpoints) {
            for (Endpoint y : endpoints) {
                assertThat(Integer.signum(x.compareTo(y)))
                        .as("%s vs %s", x, y)
                        .isEqualTo(Integer.signum(REFERENCE.compare(x, y)));
            }
        }
        List<Endpoint> sorted = new ArrayList<>(endpoints);
        sorted.sort(null);
        List<Endpoint> expected = new ArrayList<>(endpoints);
        expected.sort(REFERENCE);
        assertThat(sorted).isEqualTo(expected);
    }
}
