package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.meshbridge.ads.PackedBytes;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A served resource is held packed and unpacked for every response: what comes out must be exactly the bytes the
 * translator built, for every shape of resource (arbitrary bytes: the ads module's {@code PackedBytesTest}).
 */
class PackedServiceEntryTest {

    private final PackedBytes packer = new PackedBytes(ServiceEntryTranslator.DICTIONARY);

    private void roundTrips(byte[] bytes) {
        byte[] packed = packer.pack(bytes, bytes.length);
        assertThat(PackedBytes.unpackedSize(packed)).isEqualTo(bytes.length);
        assertThat(PackedBytes.unpack(packed, ServiceEntryTranslator.DICTIONARY))
                .isEqualTo(bytes);
    }

    /** Every resource of a translation, packed as the server holds it: it sends the translator's bytes. */
    private void servesTheTranslatorsBytes(ServiceTranslation t) {
        assertThat(t.problems()).isEmpty();
        for (McpResource r : t.resources()) {
            roundTrips(r.resourceArray());
            McpServer.Served s = McpServer.Served.of(r, packer);
            assertThat(s.any().toByteString()).isEqualTo(r.toAny(null).toByteString());
            assertThat(s.delta().getResource().toByteString())
                    .isEqualTo(r.toAny(null).toByteString());
        }
    }

    private static MeshService service(List<Endpoint> endpoints, TreeMap<String, String> labels) {
        return ServiceEntryReuseTest.service(endpoints, labels);
    }

    @Test
    void serviceEntriesOfEveryShape_unpackToTheTranslatorsBytes() {
        for (EndpointMode mode : EndpointMode.values()) {
            ServiceEntryTranslator translator = new ServiceEntryTranslator(
                    McpOptions.builder().endpointMode(mode).build());
            // no endpoint, one, the usual ten, and many
            for (int n : new int[] {0, 1, 10, 300}) {
                servesTheTranslatorsBytes(
                        translator.translateFully(ServiceEntryReuseTest.service(ServiceEntryReuseTest.endpoints(n))));
            }
            // no labels anywhere: not on the service, not on an endpoint
            List<Endpoint> bare = new ArrayList<>();
            for (int i = 1; i <= 12; i++) {
                bare.add(Endpoint.builder("10.2.0." + i).port("http", 8080).build());
            }
            servesTheTranslatorsBytes(translator.translateFully(service(bare, new TreeMap<>())));
            // a large entry whose endpoints share little: every endpoint with labels and a locality of its own
            List<Endpoint> distinct = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                distinct.add(Endpoint.builder("10.3." + (i / 250) + "." + (i % 250))
                        .port("http", 8080 + i % 7)
                        .port("grpc", 9090)
                        .weight(1 + i % 100)
                        .label("instance", "i-" + Integer.toHexString(i * 7919))
                        .label("build", "b" + (i * 31))
                        .locality(Locality.of("r" + i % 5, "z" + i % 11))
                        .build());
            }
            ServiceTranslation large = translator.translateFully(service(distinct, new TreeMap<>()));
            if (mode == EndpointMode.INLINE) {
                assertThat(large.resources().get(0).resourceArray().length).isGreaterThan(100_000);
            } else {
                assertThat(large.resources()).hasSize(2_001);
            }
            servesTheTranslatorsBytes(large);
        }
    }

    /**
     * Changes made through the reuse path, which splices the previous bytes as the server unpacks them from the served
     * resource: every step unpacks to exactly the bytes of a translation from scratch.
     */
    @Test
    void changesThroughTheReusePath_unpackToTheBytesOfATranslationFromScratch() {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(McpOptions.defaults());
        Random random = new Random(22);
        List<Endpoint> list = ServiceEntryReuseTest.endpoints(40);
        ServiceEntryTranslator.Reuse atRest = null;
        McpServer.Served served = null;
        int reused = 0;
        for (int step = 0; step < 60; step++) {
            list = new ArrayList<>(list);
            int at = random.nextInt(list.size());
            int id = 1 + random.nextInt(200);
            switch (step % 4) {
                case 0 -> list.set(at, ServiceEntryReuseTest.endpoint(id, b -> b.weight(1 + random.nextInt(99))));
                case 1 -> list.add(ServiceEntryReuseTest.endpoint(id + 200, b -> b));
                case 2 ->
                    list.set(at, ServiceEntryReuseTest.endpoint(id, b -> b.label("build", "b" + random.nextInt())));
                default -> list.remove(at);
            }
            MeshService service = service(list, new TreeMap<>(java.util.Map.of("team", "shop")));
            ServiceEntryTranslator.Reuse previous = null;
            if (atRest != null) {
                // as the server does: the tail of the served resource's unpacked bytes
                ByteString wire = served.wire();
                previous = atRest.withBytes(wire.substring(wire.size() - atRest.size()));
                assertThat(previous)
                        .as("the kept WorkloadEntries found in the served bytes")
                        .isNotNull();
                reused++;
            }
            ServiceEntryTranslator.Translated t = translator.translate(service, previous);
            McpResource got = t.translation().resources().get(0);
            McpResource want = translator.translateFully(service).resources().get(0);
            assertThat(got.resourceArray()).isEqualTo(want.resourceArray());
            served = McpServer.Served.of(got, packer);
            assertThat(served.any().toByteString()).isEqualTo(want.toAny(null).toByteString());
            assertThat(t.reuse()).isNotNull();
            atRest = t.reuse().atRest(served.versionHash());
            assertThat(atRest.bytes()).as("nothing but the packed form is held").isNull();
        }
        assertThat(reused).isEqualTo(59);
    }

    /** What the form is for: a ServiceEntry of ten endpoints, whose labels and ports repeat, held in far fewer bytes. */
    @Test
    void aServiceEntryOfTenEndpoints_isHeldInAFractionOfItsBytes() {
        McpResource r = new ServiceEntryTranslator(McpOptions.defaults())
                .translateFully(ServiceEntryReuseTest.service(ServiceEntryReuseTest.endpoints(10)))
                .resources()
                .get(0);
        byte[] wire = r.resourceArray();
        assertThat(packer.pack(wire, wire.length).length).isLessThan(wire.length / 2);
    }
}
