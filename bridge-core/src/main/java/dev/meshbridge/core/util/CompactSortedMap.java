package dev.meshbridge.core.util;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An immutable map with String keys in natural order, stored as two arrays: a fraction of a {@link TreeMap}'s size.
 * The catalog holds one label map and one port map per endpoint, so at 100,000 endpoints the difference is tens of
 * megabytes. Keys and string values are interned, since registries repeat the same label keys and values across
 * instances.
 */
public final class CompactSortedMap<V> extends AbstractMap<String, V> implements SortedMap<String, V> {

    private static final CompactSortedMap<?> EMPTY = new CompactSortedMap<>(new String[0], new Object[0]);

    /**
     * Equal maps are shared: the instances of a service (and many services) carry the same label and port maps, and a
     * map nobody else holds is collected. 64k slots: about 1.3 MB of references when full.
     */
    private static final Interner<CompactSortedMap<?>> SHARED = new Interner<>(1 << 16);

    private final String[] keys;
    private final Object[] values;
    private int hash;

    private CompactSortedMap(String[] keys, Object[] values) {
        this.keys = keys;
        this.values = values;
    }

    @SuppressWarnings("unchecked")
    public static <V> CompactSortedMap<V> empty() {
        return (CompactSortedMap<V>) EMPTY;
    }

    /** A copy of {@code map} (returned as is when it already is one); null keys or values are refused. */
    @SuppressWarnings("unchecked")
    public static <V> CompactSortedMap<V> copyOf(Map<String, ? extends V> map) {
        if (map instanceof CompactSortedMap<?> c) return (CompactSortedMap<V>) c;
        if (map.isEmpty()) return empty();
        SortedMap<String, ? extends V> sorted =
                map instanceof SortedMap<String, ? extends V> s && s.comparator() == null ? s : new TreeMap<>(map);
        String[] k = new String[sorted.size()];
        Object[] v = new Object[sorted.size()];
        int i = 0;
        for (Map.Entry<String, ? extends V> e : sorted.entrySet()) {
            k[i] = e.getKey();
            Object value = e.getValue();
            if (value == null) throw new NullPointerException("null value for " + e.getKey());
            v[i] = value;
            i++;
        }
        CompactSortedMap<V> made = new CompactSortedMap<>(k, v);
        // most maps were seen before (the instances of a service carry the same ones): that one is shared, and its
        // strings are not interned again (each String.intern is a call into the VM's string table, ~70 ns)
        CompactSortedMap<?> seen = SHARED.find(made);
        if (seen != null) return (CompactSortedMap<V>) seen;
        for (int j = 0; j < k.length; j++) {
            k[j] = k[j].intern();
            if (v[j] instanceof String str) v[j] = str.intern();
        }
        return (CompactSortedMap<V>) SHARED.intern(made);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            // Map's contract: the sum over entries of key hash XOR value hash
            for (int i = 0; i < keys.length; i++) h += keys[i].hashCode() ^ values[i].hashCode();
            hash = h;
        }
        return h;
    }

    @Override
    public boolean equals(Object o) {
        if (o == this) return true;
        if (o instanceof CompactSortedMap<?> c) {
            return hashCode() == c.hashCode() && Arrays.equals(keys, c.keys) && Arrays.equals(values, c.values);
        }
        return super.equals(o);
    }

    private int index(Object key) {
        return key instanceof String s ? Arrays.binarySearch(keys, s) : -1;
    }

    @Override
    public int size() {
        return keys.length;
    }

    @Override
    public boolean containsKey(Object key) {
        return index(key) >= 0;
    }

    @Override
    @SuppressWarnings("unchecked")
    public V get(Object key) {
        int i = index(key);
        return i >= 0 ? (V) values[i] : null;
    }

    @Override
    public Comparator<? super String> comparator() {
        return null;
    }

    @Override
    public SortedMap<String, V> subMap(String fromKey, String toKey) {
        return range(fromKey, toKey);
    }

    @Override
    public SortedMap<String, V> headMap(String toKey) {
        return range(null, toKey);
    }

    @Override
    public SortedMap<String, V> tailMap(String fromKey) {
        return range(fromKey, null);
    }

    private SortedMap<String, V> range(String from, String to) {
        int b = from == null ? 0 : insertionPoint(from);
        int e = to == null ? keys.length : insertionPoint(to);
        if (b >= e) return empty();
        return new CompactSortedMap<>(Arrays.copyOfRange(keys, b, e), Arrays.copyOfRange(values, b, e));
    }

    private int insertionPoint(String key) {
        int i = Arrays.binarySearch(keys, key);
        return i >= 0 ? i : -i - 1;
    }

    @Override
    public String firstKey() {
        if (keys.length == 0) throw new NoSuchElementException();
        return keys[0];
    }

    @Override
    public String lastKey() {
        if (keys.length == 0) throw new NoSuchElementException();
        return keys[keys.length - 1];
    }

    @Override
    public Set<Map.Entry<String, V>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<String, V>> iterator() {
                return new Iterator<>() {
                    private int i;

                    @Override
                    public boolean hasNext() {
                        return i < keys.length;
                    }

                    @Override
                    @SuppressWarnings("unchecked")
                    public Map.Entry<String, V> next() {
                        if (i >= keys.length) throw new NoSuchElementException();
                        Map.Entry<String, V> e = new SimpleImmutableEntry<>(keys[i], (V) values[i]);
                        i++;
                        return e;
                    }
                };
            }

            @Override
            public int size() {
                return keys.length;
            }
        };
    }
}
