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

    /**
     * The id table under random serving, removal (some bodies kept until every stream was told) and clearing, with
     * names whose hash codes collide ("Aa" and "BB" hash alike) so that entries chain and removals must move their
     * neighbours back: every name served or kept has the id it was given, its role mask and its kept body, every other
     * name is forgotten, and the table grows and shrinks with them.
     */
    @Test
    void idsByName_matchWhatIsServedOrKept_underRandomServingAndRemoval_withCollidingHashes() {
        java.util.Random random = new java.util.Random(22);
        java.util.Map<String, Integer> served = new java.util.HashMap<>();
        java.util.Map<String, Integer> kept = new java.util.HashMap<>();
        java.util.List<String> pool = new java.util.ArrayList<>();
        for (int i = 0; i < 4_096; i++) {
            StringBuilder b = new StringBuilder();
            for (int bit = 0; bit < 12; bit++) b.append((i >> bit & 1) == 0 ? "Aa" : "BB");
            pool.add(random.nextBoolean() ? b.toString() : "r" + i);
        }
        for (int step = 0; step < 60_000; step++) {
            String name = pool.get(random.nextInt(step < 40_000 ? pool.size() : 64));
            Integer had = served.remove(name);
            if (had == null) {
                int id = eds.id(name);
                Integer body = kept.remove(name);
                if (body != null) assertThat(id).as("a kept body keeps its id").isEqualTo(body);
                int mask = 1 + random.nextInt(255);
                eds.put(id, resource(name), mask);
                assertThat(eds.roleMask(id)).isEqualTo(mask);
                assertThat(eds.retired(id)).isNull();
                served.put(name, id);
            } else {
                assertThat(eds.id(name)).isEqualTo(had);
                boolean keep = random.nextBoolean();
                eds.remove(had, keep);
                if (keep) kept.put(name, had);
                assertThat(eds.roleMask(had)).isZero();
            }
            if (random.nextInt(200) == 0) {
                eds.clearRetired();
                kept.clear();
            }
            if (random.nextInt(50) == 0) eds.reclaim();
            if (step % 997 == 0) {
                eds.reclaim();
                assertThat(eds.liveNames()).isEqualTo(served.size() + kept.size());
                for (String n : pool) {
                    int id = served.getOrDefault(n, kept.getOrDefault(n, -1));
                    assertThat(eds.find(n)).isEqualTo(id);
                    if (kept.containsKey(n)) assertThat(eds.retired(id).name()).isEqualTo(n);
                }
            }
        }
        eds.clearRetired();
        eds.reclaim();
        assertThat(eds.liveNames())
                .as("only the 64 names of the last phase can be left")
                .isEqualTo(served.size());
        for (String n : pool) assertThat(eds.find(n)).as(n).isEqualTo(served.getOrDefault(n, -1));
    }
}
