package dev.meshbridge.core.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.model.ServiceKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The catalog's sources sets read exactly as the unmodifiable {@link TreeSet}s they replace. */
class CompactSortedSetTest {

    private static ServiceKey key(int registry, int name) {
        return ServiceKey.of("zookeeper", "zk-" + registry, "svc-" + name);
    }

    /** Every read a {@link SortedSet} offers gives what the TreeSet gives, for sets of 0 to 5 keys. */
    @Test
    void readsAsATreeSetOfTheSameKeys() {
        Random random = new Random(5);
        List<ServiceKey> probes = new ArrayList<>();
        for (int r = 0; r < 3; r++) for (int n = 0; n < 6; n++) probes.add(key(r, n));
        for (int round = 0; round < 300; round++) {
            List<ServiceKey> given = new ArrayList<>();
            int size = round % 6;
            for (int i = 0; i < size; i++) given.add(probes.get(random.nextInt(probes.size())));
            TreeSet<ServiceKey> expected = new TreeSet<>(given);
            CompactSortedSet<ServiceKey> set = CompactSortedSet.copyOf(given);

            assertThat(set).as("given %s", given).containsExactlyElementsOf(expected);
            assertThat(set.size()).isEqualTo(expected.size());
            assertThat(set).isEqualTo(expected);
            assertThat(expected).isEqualTo(set);
            assertThat(set.hashCode()).isEqualTo(expected.hashCode());
            assertThat(set.toString()).isEqualTo(expected.toString());
            assertThat(set.comparator()).isNull();
            assertThat(set.toArray()).containsExactly(expected.toArray());
            if (expected.isEmpty()) {
                assertThatThrownBy(set::first).isInstanceOf(NoSuchElementException.class);
                assertThatThrownBy(set::last).isInstanceOf(NoSuchElementException.class);
            } else {
                assertThat(set.first()).isEqualTo(expected.first());
                assertThat(set.last()).isEqualTo(expected.last());
            }
            for (ServiceKey a : probes) {
                assertThat(set.contains(a)).isEqualTo(expected.contains(a));
                assertThat(set.headSet(a)).containsExactlyElementsOf(expected.headSet(a));
                assertThat(set.tailSet(a)).containsExactlyElementsOf(expected.tailSet(a));
                for (ServiceKey b : probes) {
                    if (a.compareTo(b) > 0) {
                        assertThatThrownBy(() -> set.subSet(a, b)).isInstanceOf(IllegalArgumentException.class);
                    } else {
                        assertThat(set.subSet(a, b)).containsExactlyElementsOf(expected.subSet(a, b));
                    }
                }
            }
        }
    }

    /** The aggregator's set of shards per host changes by {@code with} and {@code without}, as a TreeSet would. */
    @Test
    void withAndWithout_followATreeSet_andLeaveTheOldSetAsItWas() {
        Random random = new Random(9);
        TreeSet<ServiceKey> expected = new TreeSet<>();
        CompactSortedSet<ServiceKey> set = CompactSortedSet.empty();
        for (int step = 0; step < 2_000; step++) {
            ServiceKey k = key(random.nextInt(2), random.nextInt(4));
            CompactSortedSet<ServiceKey> before = set;
            List<ServiceKey> had = List.copyOf(before);
            boolean add = random.nextBoolean();
            boolean changed = add ? expected.add(k) : expected.remove(k);
            set = add ? set.with(k) : set.without(k);
            assertThat(set).as("step %d", step).containsExactlyElementsOf(expected);
            assertThat(before).as("the set before the change").containsExactlyElementsOf(had);
            if (!changed) assertThat(set).isSameAs(before);
            if (expected.isEmpty()) assertThat(set).isSameAs(CompactSortedSet.empty());
        }
    }

    @Test
    void itCannotBeChanged_andRefusesNull() {
        CompactSortedSet<ServiceKey> one = CompactSortedSet.copyOf(List.of(key(0, 1)));
        assertThatThrownBy(() -> one.add(key(0, 2))).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> one.remove(key(0, 1))).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(one::clear).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> one.iterator().remove()).isInstanceOf(UnsupportedOperationException.class);
        assertThat(one).containsExactly(key(0, 1));
        assertThatThrownBy(() -> CompactSortedSet.copyOf(Collections.singletonList((ServiceKey) null)))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> CompactSortedSet.copyOf(java.util.Arrays.asList(key(0, 1), null)))
                .isInstanceOf(NullPointerException.class);
        assertThat(CompactSortedSet.copyOf(one)).isSameAs(one);
    }
}
