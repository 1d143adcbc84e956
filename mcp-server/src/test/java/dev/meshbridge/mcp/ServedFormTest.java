package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.ads.PackedBytes;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import dev.meshbridge.mcp.api.mcp.v1alpha1.Resource;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The form the server keeps of each served resource is smaller than the resource (packed bytes, no version string, no
 * creation time, one shared type URL), and what istiod receives from it is unchanged: the same bytes as the translation's
 * {@code Resource}, the same version in the metadata and in Delta.
 */
class ServedFormTest {

    @ParameterizedTest
    @EnumSource(EndpointMode.class)
    void servedForm_sendsTheTranslationsBytesAndVersion(EndpointMode mode) throws Exception {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(
                McpOptions.builder().endpointMode(mode).build());
        ServiceTranslation t =
                translator.translateFully(ServiceEntryReuseTest.service(ServiceEntryReuseTest.endpoints(10)));
        assertThat(t.problems()).isEmpty();
        assertThat(t.resources()).hasSize(mode == EndpointMode.INLINE ? 1 : 11);
        McpServer.Served first = null;
        for (McpResource r : t.resources()) {
            McpServer.Served s = McpServer.Served.of(r, new PackedBytes(ServiceEntryTranslator.DICTIONARY));
            // byte for byte what the translation makes, under the one type URL istiod unpacks
            assertThat(s.any().toByteString()).isEqualTo(r.toAny(null).toByteString());
            assertThat(s.any().getTypeUrl()).isSameAs(McpResource.RESOURCE_TYPE_URL);
            // held packed, smaller than the bytes sent; the Any and the Delta wrapper are made per response
            assertThat(s.packed().length).isLessThan(s.wire().size());
            assertThat(s.delta().getResource().toByteString())
                    .isEqualTo(r.toAny(null).toByteString());
            assertThat(s.version()).isEqualTo(r.version());
            assertThat(s.delta().getVersion()).isEqualTo(r.version());
            assertThat(s.delta().getName()).isEqualTo(r.fullName());
            Resource wire = Resource.parseFrom(s.any().getValue());
            assertThat(wire.getMetadata().getVersion()).isEqualTo(r.version());
            assertThat(wire.getMetadata().hasCreateTime()).isFalse();
            if (first == null) first = s;
        }
        ServiceEntry se = Resource.parseFrom(first.any().getValue()).getBody().unpack(ServiceEntry.class);
        assertThat(se.getHostsList()).isEqualTo(List.of(ServiceEntryReuseTest.HOST));
        if (mode == EndpointMode.INLINE) assertThat(se.getEndpointsCount()).isEqualTo(10);
        else assertThat(se.getWorkloadSelector().getLabelsMap()).isNotEmpty();
    }

    @Test
    void reservedHashes_areNotVersions() {
        assertThat(McpServer.Served.hashOf("0000000000000000")).isEqualTo(1);
        assertThat(McpServer.Served.hashOf("8000000000000000")).isEqualTo(1);
        assertThat(McpServer.Served.hashOf("81629bc71fd449c2")).isEqualTo(0x81629bc71fd449c2L);
    }
}
