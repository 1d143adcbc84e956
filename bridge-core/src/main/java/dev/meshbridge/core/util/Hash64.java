package dev.meshbridge.core.util;

/**
 * A streaming 64-bit content hash for versions: stable across JVMs, processes and machines (it depends only on the
 * values fed in, never on identity hash codes or map order), so two bridge replicas give equal versions for equal
 * content. Not a cryptographic hash.
 */
public final class Hash64 {

    private static final long PRIME = 0x100000001b3L;
    private long h = 0xcbf29ce484222325L;

    /** A hash that goes on from what this one was fed so far (a prefix hashed once, then each suffix). */
    public Hash64 copy() {
        Hash64 c = new Hash64();
        c.h = h;
        return c;
    }

    public Hash64 putString(String s) {
        putInt(s.length());
        for (int i = 0; i < s.length(); i++) {
            h = (h ^ s.charAt(i)) * PRIME;
        }
        return this;
    }

    public Hash64 putInt(int v) {
        h = (h ^ (v & 0xffff)) * PRIME;
        h = (h ^ (v >>> 16)) * PRIME;
        return this;
    }

    public Hash64 putLong(long v) {
        putInt((int) v);
        return putInt((int) (v >>> 32));
    }

    public Hash64 putBoolean(boolean b) {
        return putInt(b ? 1 : 2);
    }

    /** Feeds a map's size, then each key and the string form of its value, in the map's order. */
    public Hash64 putMap(java.util.Map<String, ?> map) {
        putInt(map.size());
        for (java.util.Map.Entry<String, ?> e : map.entrySet()) {
            putString(e.getKey()).putString(String.valueOf(e.getValue()));
        }
        return this;
    }

    /** The hash of everything fed in so far, mixed so that every input bit reaches every output bit. */
    public long finish() {
        return mix(h);
    }

    /** 16 lower-case hex digits of {@link #finish()}. */
    public String hex() {
        return toHex(finish());
    }

    public static String toHex(long v) {
        String s = Long.toHexString(v);
        return "0".repeat(16 - s.length()) + s;
    }

    /** The finalizer of SplitMix64: a bijection on longs with good avalanche. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    public static long of(String s) {
        return new Hash64().putString(s).finish();
    }
}
