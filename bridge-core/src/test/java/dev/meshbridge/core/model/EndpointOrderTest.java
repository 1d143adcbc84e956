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

    @Test
    void addresses_packedOrNot_keepTheirText_equality_andTheStringOrder() {
        Random random = new Random(7);
        List<String> texts = new ArrayList<>(List.of(
                "10.0.0.1",
                "10.0.0.10",
                "10.0.0.9",
                "10.0.0.100",
                "1.2.3.4",
                "12.0.0.0",
                "9.255.255.255",
                "010.0.0.1",
                "orders-1.pod.local",
                "fd00::1",
                "::ffff:10.0.0.1",
                "10.0.0.1x",
                "a",
                "Z"));
        for (int i = 0; i < 200; i++)
            texts.add(random.nextInt(256) + "." + random.nextInt(256) + "." + random.nextInt(12) + "."
                    + random.nextInt(256));
        List<Endpoint> endpoints = new ArrayList<>();
        for (String text : texts) {
            Endpoint e = Endpoint.builder(text).port("http", 8080).build();
            assertThat(e.address()).isEqualTo(text);
            assertThat(e.isIpv4()).as(text).isEqualTo(dev.meshbridge.core.naming.IpAddresses.isIpv4(text));
            Endpoint again =
                    Endpoint.builder(new String(text)).port("http", 8080).build();
            assertThat(again).isEqualTo(e).hasSameHashCodeAs(e);
            assertThat(again.sameAddress(e)).isTrue();
            assertThat(again.toString())
                    .isEqualTo("Endpoint[address=" + text + ", ports={http=8080}, weight=100, enabled=true,"
                            + " health=HEALTHY, labels={}, locality=" + Locality.NONE + "]");
            endpoints.add(e);
        }
        for (Endpoint x : endpoints) {
            for (Endpoint y : endpoints) {
                int text = Integer.signum(x.address().compareTo(y.address()));
                assertThat(Integer.signum(x.compareAddress(y)))
                        .as("%s vs %s", x, y)
                        .isEqualTo(text);
                assertThat(Integer.signum(x.compareTo(y))).as("%s vs %s", x, y).isEqualTo(text);
                assertThat(x.sameAddress(y)).isEqualTo(text == 0);
                assertThat(x.equals(y)).isEqualTo(text == 0);
            }
        }
    }

    @Test
    void weightEnabledAndHealth_comeBackAsGiven_andEachTellsEndpointsApart() {
        Endpoint base = Endpoint.builder("10.0.0.1").port("http", 80).build();
        for (int weight : new int[] {0, 1, 100, Endpoint.MAX_WEIGHT}) {
            for (boolean enabled : new boolean[] {true, false}) {
                for (Health health : Health.values()) {
                    Endpoint e = Endpoint.builder("10.0.0.1")
                            .port("http", 80)
                            .weight(weight)
                            .enabled(enabled)
                            .health(health)
                            .build();
                    assertThat(e.weight()).isEqualTo(weight);
                    assertThat(e.enabled()).isEqualTo(enabled);
                    assertThat(e.health()).isEqualTo(health);
                    assertThat(e.routable()).isEqualTo(enabled && weight > 0);
                    boolean same = weight == 100 && enabled && health == Health.HEALTHY;
                    assertThat(e.equals(base)).isEqualTo(same);
                    assertThat(Integer.signum(e.compareTo(base)) == 0).isEqualTo(same);
                }
            }
        }
    }
}
