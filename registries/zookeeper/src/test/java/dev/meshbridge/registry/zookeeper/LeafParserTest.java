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
