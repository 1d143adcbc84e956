package dev.meshbridge.core.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The instances of a service share their equal label maps, port maps and localities; nothing else changes. */
class EndpointSharingTest {

    private static Endpoint endpoint(String address, String zone, int port) {
        // fresh maps and strings each time, as a watcher builds them per instance
        Map<String, String> labels = new TreeMap<>();
        labels.put(new String("app"), new String("shop"));
        labels.put(new String("zone"), new String(zone));
        return Endpoint.builder(address)
                .port(new String("http"), port)
                .labels(labels)
                .locality(Locality.of(new String("eu-west-1"), new String("eu-west-1" + zone)))
                .build();
    }

    @Test
    void instancesWithEqualLabelsPortsAndLocality_shareThem_andKeepTheirOwnAddress() {
        Endpoint a = endpoint("10.0.0.1", "a", 8080);
        Endpoint b = endpoint("10.0.0.2", "a", 8080);
        assertThat(b.labels()).isSameAs(a.labels());
        assertThat(b.ports()).isSameAs(a.ports());
        assertThat(b.locality()).isSameAs(a.locality());
        assertThat(a.address()).isEqualTo("10.0.0.1");
        assertThat(b.address()).isEqualTo("10.0.0.2");
        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void sharing_changesNeitherEqualityNorOrderNorContent() {
        List<Endpoint> built = new ArrayList<>();
        for (int i = 0; i < 30; i++)
            built.add(endpoint("10.0.0." + (i % 10 + 1), i % 3 == 0 ? "a" : "b", 8080 + i % 2));
        for (Endpoint e : built) {
            Endpoint again = endpoint(e.address(), e.labels().get("zone"), e.port("http"));
            assertThat(again).isEqualTo(e).hasSameHashCodeAs(e);
            assertThat(again.compareTo(e)).isZero();
            assertThat(again.labels())
                    .containsExactlyEntriesOf(new TreeMap<>(
                            Map.of("app", "shop", "zone", e.labels().get("zone"))));
            assertThat(again.ports()).containsExactlyEntriesOf(Map.of("http", e.port("http")));
            assertThat(again.locality().zone())
                    .isEqualTo("eu-west-1" + e.labels().get("zone"));
        }
        Endpoint other = endpoint("10.0.0.1", "c", 8080);
        assertThat(other.labels()).isNotEqualTo(built.get(0).labels()).containsEntry("zone", "c");
        assertThat(other.locality()).isNotEqualTo(built.get(0).locality());
    }

    /**
     * An address that is not IPv4 is held with the shared parts, in a shape of its own: two instances with the same
     * ports, labels and locality still differ by it, an equal one built again equals it, and the mix orders by address.
     */
    @Test
    void hostNamesAndIpv6_keepTheirAddress_nextToSharedOnes() {
        Endpoint a = endpoint("orders-1.shop.local", "a", 8080);
        Endpoint b = endpoint("orders-2.shop.local", "a", 8080);
        Endpoint v6 = endpoint("fd00::1", "a", 8080);
        Endpoint v4 = endpoint("10.0.0.1", "a", 8080);
        assertThat(a.address()).isEqualTo("orders-1.shop.local");
        assertThat(b.address()).isEqualTo("orders-2.shop.local");
        assertThat(v6.address()).isEqualTo("fd00::1");
        assertThat(a.isIpv4()).isFalse();
        assertThat(v4.isIpv4()).isTrue();
        assertThat(a).isNotEqualTo(b).isNotEqualTo(v6).isNotEqualTo(v4);
        assertThat(a.sameAddress(b)).isFalse();
        assertThat(b.labels()).isSameAs(a.labels());
        Endpoint again = endpoint("orders-1.shop.local", "a", 8080);
        assertThat(again).isEqualTo(a).hasSameHashCodeAs(a);
        assertThat(again.sameAddress(a)).isTrue();
        List<Endpoint> mixed = new ArrayList<>(List.of(v6, b, v4, a));
        mixed.sort(null);
        assertThat(mixed)
                .extracting(Endpoint::address)
                .containsExactly("10.0.0.1", "fd00::1", "orders-1.shop.local", "orders-2.shop.local");
    }
}
