package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.spi.RegistryStatus;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Znode names and data into endpoints: the cases the integration tests do not reach. */
class LeafParserTest {

    private final RegistryStatus status = new RegistryStatus("zk", "zookeeper");
    private final LeafParser parser = new LeafParser(status);

    @Test
    void ipv6Provider_hasABareAddress() {
        String url = "tri://[fd00::7]:50051/org.demo.V6?application=v6&version=2";
        Leaf leaf = parser.provider("/p", URLEncoder.encode(url, StandardCharsets.UTF_8));
        assertThat(leaf).isInstanceOfSatisfying(Leaf.DubboProvider.class, p -> {
            assertThat(p.endpoint().address()).isEqualTo("fd00::7");
            assertThat(p.endpoint().ports()).isEqualTo(Map.of("tri", 50051));
            assertThat(p.protocol()).isEqualTo(Protocol.TRIPLE);
            assertThat(p.version()).isEqualTo("2");
        });
    }

    /**
     * Providers repeat their parameters, versions and applications: a million endpoints each holding their own copies
     * would cost hundreds of megabytes, so the parser hands out one instance per string, from a table that stays
     * bounded however many distinct strings the registry holds. (An IPv4 address is held as its bits by the endpoint.)
     */
    @Test
    void repeatedStrings_areShared_andTheTableIsBounded() {
        Leaf.DubboProvider a = provider("dubbo://10.0.0.1:20880/org.demo.A?application=shop&version=1.0.0&env=prod");
        Leaf.DubboProvider b = provider("dubbo://10.0.0.1:20881/org.demo.B?application=shop&version=1.0.0&env=prod");
        assertThat(b.application()).isEqualTo("shop").isSameAs(a.application());
        assertThat(b.version()).isSameAs(a.version());
        String aKey =
                a.params().keySet().stream().filter("env"::equals).findFirst().orElseThrow();
        String bKey =
                b.params().keySet().stream().filter("env"::equals).findFirst().orElseThrow();
        assertThat(bKey).isSameAs(aKey);
        assertThat(b.params().get("env")).isSameAs(a.params().get("env"));

        for (int i = 0; i < LeafParser.SHARED_MAX + 100; i++) {
            provider("dubbo://10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255) + ":1/org.demo.C?v" + i
                    + "=x");
            assertThat(parser.sharedCount()).isLessThan(LeafParser.SHARED_MAX);
        }
        // what is parsed after the table started again is still shared
        Leaf.DubboProvider c = provider("dubbo://10.0.0.2:20880/org.demo.A?application=shop&version=1.0.0");
        Leaf.DubboProvider d = provider("dubbo://10.0.0.2:20881/org.demo.B?application=shop&version=1.0.0");
        assertThat(d.application()).isSameAs(c.application());
        assertThat(d.params().get("version")).isSameAs(c.params().get("version"));
    }

    private Leaf.DubboProvider provider(String url) {
        return (Leaf.DubboProvider) parser.provider("/p", URLEncoder.encode(url, StandardCharsets.UTF_8));
    }

    @Test
    void consumerOrForeignCategoryUnderProviders_isSkipped() {
        assertThat(parser.provider(
                        "/c", URLEncoder.encode("consumer://10.0.0.1/x?side=consumer", StandardCharsets.UTF_8)))
                .isEqualTo(Leaf.Unusable.MALFORMED);
        assertThat(parser.provider(
                        "/r", URLEncoder.encode("dubbo://10.0.0.1:1/x?category=routers", StandardCharsets.UTF_8)))
                .isEqualTo(Leaf.Unusable.MALFORMED);
        assertThat(status.skippedCount()).isEqualTo(2);
    }

    @Test
    void springStatus_mapsToHealth() {
        assertThat(LeafParser.springHealth(null)).isEqualTo(Health.HEALTHY);
        assertThat(LeafParser.springHealth("UP")).isEqualTo(Health.HEALTHY);
        assertThat(LeafParser.springHealth("OUT_OF_SERVICE")).isEqualTo(Health.DRAINING);
        assertThat(LeafParser.springHealth("down")).isEqualTo(Health.UNHEALTHY);
    }

    @Test
    void sslPortOnly_givesAnHttpsPort() {
        Leaf leaf = parser.instance(
                "/i", "{\"address\":\"10.0.0.2\",\"port\":null,\"sslPort\":8443}".getBytes(StandardCharsets.UTF_8));
        assertThat(leaf).isInstanceOfSatisfying(Leaf.Instance.class, i -> {
            assertThat(i.dubboApplication()).isFalse();
            assertThat(i.endpoint().ports()).isEqualTo(Map.of("https", 8443));
            assertThat(i.protocols()).isEqualTo(Map.of("https", Protocol.HTTPS));
        });
    }

    @Test
    void dubboInstanceWithoutEndpointsMetadata_usesItsPortAsDubbo() {
        String json = "{\"address\":\"10.0.0.3\",\"port\":20880,\"payload\":{\"metadata\":"
                + "{\"dubbo.metadata.revision\":\"abc\",\"weight\":\"30\"}}}";
        Leaf leaf = parser.instance("/i", json.getBytes(StandardCharsets.UTF_8));
        assertThat(leaf).isInstanceOfSatisfying(Leaf.Instance.class, i -> {
            assertThat(i.dubboApplication()).isTrue();
            assertThat(i.endpoint().ports()).isEqualTo(Map.of("dubbo", 20880));
            assertThat(i.endpoint().weight()).isEqualTo(30);
        });
    }

    @Test
    void mappingData_isTrimmedAndDeduplicated() {
        assertThat(LeafParser.mappingApps(" a, b,,a ,c".getBytes(StandardCharsets.UTF_8)))
                .containsExactly("a", "b", "c");
        assertThat(LeafParser.mappingApps(new byte[0])).isEmpty();
    }
}
