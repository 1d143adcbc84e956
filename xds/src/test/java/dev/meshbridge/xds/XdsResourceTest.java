package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.util.Hash64;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A resource holds its bytes only; the Any of a SotW response and the Delta wrapper, made on demand, carry exactly those
 * bytes.
 */
class XdsResourceTest {

    private final TestCatalog catalog = new TestCatalog();

    @AfterEach
    void close() {
        catalog.close();
    }

    @Test
    void deltaWrapper_madeOnDemand_carriesTheNameVersionAndBytesOfTheResource() throws Exception {
        ServiceUpsert u = AdsSotwTest.shop("10.0.0.1");
        catalog.aggregator().accept(u);
        MeshService s = catalog.awaitService(u.host(), x -> x.sources().contains(u.key()));
        ServiceResources r = new EnvoyTranslator().translate(s);
        assertThat(r.resources()).isNotEmpty();
        for (XdsResource x : r.resources()) {
            var delta = x.delta();
            assertThat(delta.getName()).isEqualTo(x.name());
            assertThat(delta.getVersion())
                    .isEqualTo(Hash64.toHex(x.versionHash()))
                    .isEqualTo(x.version());
            assertThat(delta.getResource()).isEqualTo(x.any());
            assertThat(x.any().getTypeUrl()).isEqualTo(x.type().typeUrl());
            assertThat(x.any().getValue()).as("the body is not copied").isSameAs(x.value());
            assertThat(delta.getResource().getValue()).isSameAs(x.value());
            assertThat(x.delta()).isEqualTo(delta);
            assertThat(delta.toByteString()).isEqualTo(x.delta().toByteString());
        }
        XdsResource cla = r.find(XdsType.ENDPOINT, "outbound|50051||shop.dubbo");
        ClusterLoadAssignment parsed = cla.delta().getResource().unpack(ClusterLoadAssignment.class);
        assertThat(parsed.getEndpoints(0)
                        .getLbEndpoints(0)
                        .getEndpoint()
                        .getAddress()
                        .getSocketAddress()
                        .getAddress())
                .isEqualTo("10.0.0.1");
    }

    @Test
    void version_isTheHashOfTypeUrlNameAndBytes_forEveryType_callAfterCall() {
        ByteString bytes = ByteString.copyFromUtf8("some resource bytes, more than eight of them");
        for (XdsType type : XdsType.values()) {
            for (int i = 0; i < 2; i++) {
                Hash64 h = new Hash64().putString(type.typeUrl()).putString("name");
                EnvoyTranslator.putBytes(h, bytes);
                assertThat(EnvoyTranslator.version(type, "name", bytes))
                        .as("%s, call %s", type, i)
                        .isEqualTo(h.finish());
            }
        }
    }
}
