package dev.meshbridge.core.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class InternerTest {

    @Test
    void intern_returnsTheEqualInstanceSeenBefore_andKeepsDifferentValuesApart() {
        Interner<String> interner = new Interner<>(64);
        String a = new String("zone-a");
        String b = new String("zone-a");
        String c = new String("zone-b");
        assertThat(interner.intern(a)).isSameAs(a);
        assertThat(interner.intern(b)).isSameAs(a);
        assertThat(interner.intern(c)).isSameAs(c).isNotEqualTo(a);
        assertThat(interner.intern(null)).isNull();
    }

    @Test
    void find_givesTheEqualInstanceSeenBefore_andInternsNothing() {
        Interner<String> interner = new Interner<>(64);
        String a = new String("zone-a");
        assertThat(interner.find(a)).isNull();
        assertThat(interner.find(new String("zone-a"))).as("find kept nothing").isNull();
        interner.intern(a);
        assertThat(interner.find(new String("zone-a"))).isSameAs(a);
        assertThat(interner.find("zone-b")).isNull();
    }

    @Test
    void aTableOfOneSlot_staysCorrect_whenValuesCollide() {
        Interner<String> interner = new Interner<>(1);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 100; i++) out.add(interner.intern("v" + (i % 7)));
        for (int i = 0; i < 100; i++) assertThat(out.get(i)).isEqualTo("v" + (i % 7));
    }

    @Test
    void sizes_outOfRange_areRefused() {
        assertThatThrownBy(() -> new Interner<>(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Interner<>((1 << 24) + 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void compactMaps_withEqualContent_areShared_andStillBehaveLikeTheirSource() {
        TreeMap<String, String> labels = new TreeMap<>(Map.of("zone", "a", "app", "shop", "version", "1.0"));
        CompactSortedMap<String> first = CompactSortedMap.copyOf(labels);
        CompactSortedMap<String> second = CompactSortedMap.copyOf(new TreeMap<>(labels));
        assertThat(second).isSameAs(first);
        assertThat(first).isEqualTo(labels).hasSameHashCodeAs(labels);
        assertThat(labels).isEqualTo(first);
        assertThat(first.toString()).isEqualTo(labels.toString());

        TreeMap<String, String> other = new TreeMap<>(labels);
        other.put("zone", "b");
        CompactSortedMap<String> third = CompactSortedMap.copyOf(other);
        assertThat(third).isNotSameAs(first).isNotEqualTo(first).isEqualTo(other);
        // same keys and an equal-looking value of another type: not equal, not shared
        CompactSortedMap<Object> ports = CompactSortedMap.copyOf(Map.of("http", 8080));
        CompactSortedMap<Object> longs = CompactSortedMap.copyOf(Map.of("http", 8080L));
        assertThat(longs).isNotSameAs(ports).isNotEqualTo(ports);
        assertThat(ports.get("http")).isEqualTo(8080);
        assertThat(longs.get("http")).isEqualTo(8080L);
    }

    /**
     * A map's strings are shared with every other copy in the JVM (a million endpoints repeat a few label keys and
     * values): a new map's keys and string values are interned; an equal map seen before is handed out as it is.
     */
    @Test
    void compactMaps_fromFreshStrings_holdInternedOnes() {
        String key = new String("meshbridge-test-key-" + System.nanoTime());
        String value = new String("meshbridge-test-value-" + System.nanoTime());
        CompactSortedMap<String> first = CompactSortedMap.copyOf(Map.of(key, value));
        String internedKey = key.intern();
        assertThat(first.firstKey()).isSameAs(internedKey);
        assertThat(first.get(key)).isSameAs(value.intern());
        CompactSortedMap<String> again = CompactSortedMap.copyOf(Map.of(new String(key), new String(value)));
        assertThat(again).isSameAs(first);
        assertThat(again.firstKey()).isSameAs(internedKey);
    }
}
