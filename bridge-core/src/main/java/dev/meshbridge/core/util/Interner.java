package dev.meshbridge.core.util;

import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Shares equal immutable values: {@link #intern} returns an equal instance seen before when it still has one, else the
 * value itself. A catalog repeats the same label maps, port maps and localities across the instances of a service
 * (and across services), and a million endpoints each holding a copy of its own costs hundreds of megabytes.
 *
 * <p>A fixed table of weak references, one per slot, chosen by hash: bounded whatever the input (a value nobody else
 * holds is collected; a slot holds the latest value that hashed to it), lock-free, and lossy (two values sharing a
 * slot take turns, and an equal copy may then be kept twice). Sharing never changes what a value means: callers get an
 * equal value, so only {@code ==} can tell.
 *
 * @param <T> an immutable type with value equality
 */
public final class Interner<T> {

    private final AtomicReferenceArray<WeakReference<T>> slots;
    private final int mask;

    /** @param slots the table's size, rounded up to a power of two */
    public Interner(int slots) {
        if (slots < 1 || slots > 1 << 24) throw new IllegalArgumentException("slots out of 1..2^24: " + slots);
        int n = slots == 1 ? 1 : Integer.highestOneBit(slots - 1) << 1;
        this.slots = new AtomicReferenceArray<>(n);
        this.mask = n - 1;
    }

    /** An equal instance interned before and still alive, or null; nothing is interned. */
    public T find(T value) {
        int h = value.hashCode();
        WeakReference<T> ref = slots.get((h ^ (h >>> 16)) & mask);
        T seen = ref == null ? null : ref.get();
        return seen != null && seen.equals(value) ? seen : null;
    }

    /** An equal instance interned before and still alive, or {@code value} (which is then interned). */
    public T intern(T value) {
        if (value == null) return null;
        int h = value.hashCode();
        int i = (h ^ (h >>> 16)) & mask;
        WeakReference<T> ref = slots.get(i);
        T seen = ref == null ? null : ref.get();
        if (seen != null && seen.equals(value)) return seen;
        slots.set(i, new WeakReference<>(value));
        return value;
    }
}
