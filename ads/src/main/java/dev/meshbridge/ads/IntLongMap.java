package dev.meshbridge.ads;

import java.util.Arrays;

/**
 * A small open-addressing map from non-negative int keys to long values, without boxing: per-stream pending changes
 * stay a few dozen bytes, and a single-resource change allocates nothing.
 */
final class IntLongMap {

    /** Receives entries. */
    @FunctionalInterface
    interface Visitor {
        void visit(int key, long value);
    }

    private static final int FREE = -1;

    private int[] keys;
    private long[] values;
    private int size;

    IntLongMap() {
        keys = new int[4];
        Arrays.fill(keys, FREE);
        values = new long[4];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    boolean containsKey(int key) {
        return slot(key) >= 0;
    }

    /** The value for {@code key}, or {@code missing}. */
    long get(int key, long missing) {
        int s = slot(key);
        return s >= 0 ? values[s] : missing;
    }

    /** Puts unless present; returns true when it was added. */
    boolean putIfAbsent(int key, long value) {
        if (slot(key) >= 0) return false;
        put(key, value);
        return true;
    }

    void put(int key, long value) {
        if (key < 0) throw new IllegalArgumentException("negative key");
        if ((size + 1) * 4 > keys.length * 3) grow();
        int mask = keys.length - 1;
        int i = mix(key) & mask;
        while (keys[i] != FREE) {
            if (keys[i] == key) {
                values[i] = value;
                return;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
    }

    /** Removes the key; returns whether it was there. */
    boolean remove(int key) {
        int s = slot(key);
        if (s < 0) return false;
        int mask = keys.length - 1;
        keys[s] = FREE;
        size--;
        // re-insert the rest of the cluster so lookups do not stop at the hole
        int i = (s + 1) & mask;
        while (keys[i] != FREE) {
            int k = keys[i];
            long v = values[i];
            keys[i] = FREE;
            size--;
            put(k, v);
            i = (i + 1) & mask;
        }
        return true;
    }

    void clear() {
        if (size == 0) return;
        if (keys.length > 64) {
            keys = new int[4];
            values = new long[4];
        }
        Arrays.fill(keys, FREE);
        size = 0;
    }

    void forEach(Visitor visitor) {
        int[] k = keys;
        long[] v = values;
        for (int i = 0; i < k.length; i++) {
            if (k[i] != FREE) visitor.visit(k[i], v[i]);
        }
    }

    private int slot(int key) {
        int mask = keys.length - 1;
        int i = mix(key) & mask;
        while (keys[i] != FREE) {
            if (keys[i] == key) return i;
            i = (i + 1) & mask;
        }
        return -1;
    }

    private void grow() {
        int[] oldKeys = keys;
        long[] oldValues = values;
        keys = new int[oldKeys.length * 2];
        Arrays.fill(keys, FREE);
        values = new long[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != FREE) put(oldKeys[i], oldValues[i]);
        }
    }

    private static int mix(int key) {
        int h = key * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
