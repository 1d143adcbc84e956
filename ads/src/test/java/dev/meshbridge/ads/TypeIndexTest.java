package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The names an index keeps: what is served or subscribed now, not every name a client ever asked for. */
class TypeIndexTest {

    private final TypeIndex eds = new TypeIndex(ResourceType.of("eds", "test/eds", false));

    private TypeState stream(long id) {
        return AdsStream.sotw(id, null, "peer-" + id, Instant.EPOCH, 1, null).stateOrCreate(0, eds, "test/eds");
    }

    private static Resource resource(String name) {
        return new Resource() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public long versionHash() {
                return 7;
            }

            @Override
            public com.google.protobuf.Any any() {
                return com.google.protobuf.Any.getDefaultInstance();
            }

            @Override
            public io.envoyproxy.envoy.service.discovery.v3.Resource delta() {
                return io.envoyproxy.envoy.service.discovery.v3.Resource.getDefaultInstance();
            }

            @Override
            public boolean wildcard() {
                return true;
            }
        };
    }

    @Test
    void namesNoStreamSubscribesAnyMore_areForgotten_andTheirIdsReused() {
        TypeState a = stream(1);
        for (int round = 0; round < 100; round++) {
            java.util.BitSet names = new java.util.BitSet();
            for (int i = 0; i < 1_000; i++) names.set(eds.id("r" + round + "-" + i));
            a.names(names);
            eds.reclaim();
        }

        assertThat(eds.liveNames()).as("only the last subscription's names").isEqualTo(1_000);
        assertThat(eds.idLimit()).as("ids are reused").isLessThanOrEqualTo(2_000);
        a.unsubscribeAll();
        eds.reclaim();
        assertThat(eds.liveNames()).isZero();
    }

    @Test
    void aNameStillServed_orStillPendingForAStream_isKept() {
        TypeState a = stream(1);
        int served = eds.id("served");
        eds.put(served, resource("served"), AdsEngine.ALL_ROLES);
        int pending = eds.id("pending");
        a.changed(pending, 5);
        eds.id("asked-once");

        eds.reclaim();

        assertThat(eds.find("served")).isEqualTo(served);
        assertThat(eds.find("pending")).isEqualTo(pending);
        assertThat(eds.find("asked-once")).isEqualTo(-1);
        a.clearPending();
        eds.reclaim();
        assertThat(eds.find("pending")).isEqualTo(-1);
    }
}
