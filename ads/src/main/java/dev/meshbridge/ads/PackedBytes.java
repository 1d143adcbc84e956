package dev.meshbridge.ads;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The compact form a served resource is held in between pushes: its bytes with every repeated run of 6 bytes or more
 * replaced by a reference to where the run was seen before (in the same resource, or in a fixed {@link Dictionary} of
 * the strings the producer's resources carry). A ServiceEntry repeats each endpoint's label block, ports and locality,
 * so this keeps about a fifth of its bytes; an Envoy cluster is the same configuration as every other cluster with
 * another name. Unpacking is a handful of array copies per resource, cheap enough for every push of the whole set
 * (where inflating a deflated form costs about ten times as much). Both servers hold their resources this way, each
 * with its own dictionary.
 *
 * <p>Format: the unpacked length (varint), then sequences of a literal length (varint) and that many bytes, each but
 * the last followed by a match: its length (varint, at least {@value #MIN_MATCH}) and its distance back (varint; a
 * distance past the start reads the end of the dictionary). The last sequence ends exactly at the unpacked length.
 *
 * <p>{@link #unpack} is a static pure function. A {@code PackedBytes} instance is the packer: it holds scratch arrays
 * reused from one resource to the next, so one instance belongs to one thread (the server's serving thread).
 */
public final class PackedBytes {

    /** The shortest run replaced by a reference (a reference costs 3 to 5 bytes). */
    static final int MIN_MATCH = 6;

    private static final int HASH_BITS = 12;

    /**
     * What most of a producer's resources carry, seen before the first byte of each: type URLs, names and values every
     * resource repeats. Changing it changes no byte served (a packed resource is always unpacked with the dictionary
     * it was packed with, in the same process), only how small resources are held. Immutable; shared by threads.
     */
    public static final class Dictionary {

        private final byte[] bytes;
        /** The table after the dictionary alone: where every packing starts from. */
        private final int[] table = new int[1 << HASH_BITS];

        private Dictionary(byte[] bytes) {
            this.bytes = bytes;
            for (int i = 0; i + 4 <= bytes.length; i++) table[hash(bytes, i)] = i + 1;
        }

        /** A dictionary of these strings, in this order (UTF-8); the last ones are the cheapest to refer to. */
        public static Dictionary of(String... strings) {
            return new Dictionary(String.join("", strings).getBytes(StandardCharsets.UTF_8));
        }

        /** A dictionary of these bytes (copied). */
        public static Dictionary ofBytes(byte[] bytes) {
            return new Dictionary(bytes.clone());
        }

        /** Its bytes (a copy). */
        public byte[] bytes() {
            return bytes.clone();
        }
    }

    private final Dictionary dictionary;

    /**
     * Per hash of 4 bytes, the last position (in dictionary + input) that started with them, +1, in the low 32 bits,
     * and in the high 32 the {@link #generation} of the packing that wrote it. An entry of an earlier packing is not
     * read: the dictionary's table ({@link Dictionary#table}) stands for it. Each packing so starts from the
     * dictionary's table without copying it: the copy was 16 KB per resource, many times the bytes of a load assignment
     * or ServiceEntry of a few hundred, on cold caches when a change comes alone.
     */
    private final long[] table = new long[1 << HASH_BITS];

    /** The packing under way; 1 and up, the entries of {@link #table} from before any packing being 0. */
    private int generation;

    /** Whether {@link #window} starts with the dictionary (written once per window array, never overwritten). */
    private boolean windowHasDictionary;

    /**
     * Scratch arrays kept from one resource to the next up to this size; a larger resource (a sidecar route
     * configuration over every service) gets arrays of its own, dropped after it, so that the packer does not hold
     * twice the largest resource it has seen.
     */
    static final int KEPT_SCRATCH = 1 << 16;

    private byte[] window = new byte[4096];
    private byte[] out = new byte[4096];

    /** A packer for resources unpacked with {@code dictionary}. */
    public PackedBytes(Dictionary dictionary) {
        this.dictionary = dictionary;
    }

    /** The packed form of {@code bytes[0..length)}. */
    public byte[] pack(byte[] bytes, int length) {
        int n = startWindow(length);
        System.arraycopy(bytes, 0, window, dictionary.bytes.length, length);
        return packWindow(length, n);
    }

    /** The packed form of {@code bytes} (a rope is read piece by piece, never flattened). */
    public byte[] pack(ByteString bytes) {
        int length = bytes.size();
        int n = startWindow(length);
        bytes.copyTo(window, dictionary.bytes.length);
        return packWindow(length, n);
    }

    /** Makes room for the dictionary and {@code length} bytes, with the dictionary first; returns their length. */
    private int startWindow(int length) {
        int dict = dictionary.bytes.length;
        int n = dict + length;
        if (window.length < n) {
            window = new byte[Math.max(n, 2 * window.length)];
            windowHasDictionary = false;
        }
        if (!windowHasDictionary) {
            System.arraycopy(dictionary.bytes, 0, window, 0, dict);
            windowHasDictionary = true;
        }
        return n;
    }

    /** The last position + 1 that started with the 4 bytes of hash {@code h} in this packing, or in the dictionary. */
    private int lookup(int h) {
        long e = table[h];
        return (int) (e >>> 32) == generation ? (int) e : dictionary.table[h];
    }

    private void record(int h, int positionPlusOne) {
        table[h] = (long) generation << 32 | (positionPlusOne & 0xffffffffL);
    }

    private byte[] packWindow(int length, int n) {
        int dict = dictionary.bytes.length;
        // worst case: every byte a literal, in one sequence, behind two varints
        if (out.length < length + 10) out = new byte[Math.max(length + 10, 2 * out.length)];
        if (++generation == Integer.MAX_VALUE) {
            // after 2^31 packings: no entry may pass for this one's
            Arrays.fill(table, 0L);
            generation = 1;
        }
        byte[] w = window;
        int o = writeVarint(out, 0, length);
        int literalStart = dict;
        int i = dict;
        int last = n - MIN_MATCH; // a match needs MIN_MATCH bytes from its start
        while (i <= last) {
            int h = hash(w, i);
            int candidate = lookup(h) - 1;
            record(h, i + 1);
            if (candidate < 0 || !sameRun(w, candidate, i)) {
                i++;
                continue;
            }
            int len = MIN_MATCH;
            while (i + len < n && w[candidate + len] == w[i + len]) len++;
            // extend backwards over literals not yet written
            while (i > literalStart && candidate > 0 && w[candidate - 1] == w[i - 1]) {
                i--;
                candidate--;
                len++;
            }
            o = literals(w, literalStart, i, o);
            o = writeVarint(out, o, len);
            o = writeVarint(out, o, i - candidate);
            int end = i + len;
            // index a few positions inside the match, so that the next run can refer to this one's end
            for (int k = Math.max(i + 1, end - 8); k + 4 <= end; k++) record(hash(w, k), k + 1);
            i = end;
            literalStart = end;
        }
        o = literals(w, literalStart, n, o);
        byte[] packed = Arrays.copyOf(out, o);
        if (window.length > KEPT_SCRATCH) {
            window = new byte[4096];
            windowHasDictionary = false;
        }
        if (out.length > KEPT_SCRATCH) out = new byte[4096];
        return packed;
    }

    /** Makes the next packing the one of this generation (tests: what happens when the count wraps). */
    void generation(int next) {
        generation = next - 1;
    }

    /** The bytes of scratch arrays the packer holds between resources. */
    int scratchBytes() {
        return window.length + out.length;
    }

    private int literals(byte[] w, int from, int to, int o) {
        int count = to - from;
        int need = o + 5 + count + 10;
        if (out.length < need) out = Arrays.copyOf(out, Math.max(need, 2 * out.length));
        o = writeVarint(out, o, count);
        System.arraycopy(w, from, out, o, count);
        return o + count;
    }

    private static boolean sameRun(byte[] w, int a, int b) {
        for (int k = 0; k < MIN_MATCH; k++) {
            if (w[a + k] != w[b + k]) return false;
        }
        return true;
    }

    private static int hash(byte[] w, int i) {
        int v = (w[i] & 0xff) | (w[i + 1] & 0xff) << 8 | (w[i + 2] & 0xff) << 16 | (w[i + 3] & 0xff) << 24;
        return (v * 0x9E3779B1) >>> (32 - HASH_BITS);
    }

    /** The length {@link #unpack} makes of a packed form. */
    public static int unpackedSize(byte[] packed) {
        return (int) readVarint(packed, 0);
    }

    /** The bytes a packed form was made of, with the dictionary it was packed with. */
    public static byte[] unpack(byte[] packed, Dictionary dictionary) {
        byte[] out = new byte[unpackedSize(packed)];
        unpackInto(packed, dictionary, out, 0);
        return out;
    }

    /**
     * Unpacks into {@code out} from {@code at} on (which must hold {@link #unpackedSize} bytes there); returns the
     * position after them. For a caller that reuses one array for many resources.
     */
    public static int unpackInto(byte[] packed, Dictionary dictionary, byte[] out, int at) {
        long first = readVarint(packed, 0);
        int size = (int) first;
        int p = (int) (first >>> 32);
        if (out.length - at < size) throw new IndexOutOfBoundsException("room for " + size + " bytes at " + at);
        int o = at;
        int end = at + size;
        byte[] dict = dictionary.bytes;
        while (true) {
            long lit = readVarint(packed, p);
            int count = (int) lit;
            p = (int) (lit >>> 32);
            System.arraycopy(packed, p, out, o, count);
            p += count;
            o += count;
            if (o == end) return end;
            long m = readVarint(packed, p);
            int len = (int) m;
            p = (int) (m >>> 32);
            long d = readVarint(packed, p);
            int distance = (int) d;
            p = (int) (d >>> 32);
            int from = o - distance;
            if (from < at) {
                // the run starts in the dictionary and may go on into the output
                int fromDict = Math.min(at - from, len);
                System.arraycopy(dict, dict.length - (at - from), out, o, fromDict);
                o += fromDict;
                len -= fromDict;
                from = at;
            }
            if (o - from >= len) {
                System.arraycopy(out, from, out, o, len);
                o += len;
            } else {
                for (int k = 0; k < len; k++) out[o++] = out[from + k];
            }
        }
    }

    /** Writes {@code value} as a varint at {@code at}; returns the position after it. */
    public static int writeVarint(byte[] out, int at, int value) {
        while ((value & ~0x7f) != 0) {
            out[at++] = (byte) ((value & 0x7f) | 0x80);
            value >>>= 7;
        }
        out[at++] = (byte) value;
        return at;
    }

    /** The varint at {@code at}: its value in the low 32 bits, the position after it in the high 32. */
    private static long readVarint(byte[] in, int at) {
        int value = 0;
        int shift = 0;
        while (true) {
            byte b = in[at++];
            value |= (b & 0x7f) << shift;
            if (b >= 0) return (value & 0xffffffffL) | ((long) at << 32);
            shift += 7;
        }
    }
}
