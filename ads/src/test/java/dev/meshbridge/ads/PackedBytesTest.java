package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A served resource is held packed and unpacked for every response: what comes out must be exactly the bytes that went
 * in, for arbitrary bytes, with any dictionary (the servers' resources of every shape: their own tests).
 */
class PackedBytesTest {

    private static final PackedBytes.Dictionary DICTIONARY =
            PackedBytes.Dictionary.of("type.googleapis.com/example.v1.Thing", "outbound|", "some common value");

    private final PackedBytes packer = new PackedBytes(DICTIONARY);

    private void roundTrips(byte[] bytes) {
        byte[] packed = packer.pack(bytes, bytes.length);
        assertThat(PackedBytes.unpackedSize(packed)).isEqualTo(bytes.length);
        assertThat(PackedBytes.unpack(packed, DICTIONARY)).isEqualTo(bytes);
        // into a reused array, at an offset, between bytes it must not touch
        byte[] into = new byte[bytes.length + 10];
        java.util.Arrays.fill(into, (byte) 7);
        assertThat(PackedBytes.unpackInto(packed, DICTIONARY, into, 3)).isEqualTo(3 + bytes.length);
        assertThat(java.util.Arrays.copyOfRange(into, 3, 3 + bytes.length)).isEqualTo(bytes);
        assertThat(java.util.Arrays.copyOf(into, 3)).containsOnly((byte) 7);
        assertThat(java.util.Arrays.copyOfRange(into, 3 + bytes.length, into.length))
                .containsOnly((byte) 7);
        // a rope is packed from its pieces into the same form
        if (bytes.length > 1) {
            int cut = bytes.length / 3;
            ByteString rope = UnsafeByteOperations.unsafeWrap(java.util.Arrays.copyOf(bytes, cut))
                    .concat(UnsafeByteOperations.unsafeWrap(java.util.Arrays.copyOfRange(bytes, cut, bytes.length)));
            assertThat(packer.pack(rope)).isEqualTo(packed);
        }
    }

    @Test
    void arbitraryBytes_roundTrip() {
        Random random = new Random(7);
        roundTrips(new byte[0]);
        roundTrips(new byte[] {42});
        roundTrips(new byte[5]);
        // runs that refer to themselves (a distance shorter than the run)
        roundTrips(new byte[10_000]);
        roundTrips("abababababababababababababababab".getBytes(StandardCharsets.UTF_8));
        // the dictionary: runs that start in it, and one that goes on from its end into the bytes
        roundTrips(DICTIONARY.bytes());
        byte[] tail = java.util.Arrays.copyOfRange(
                DICTIONARY.bytes(), DICTIONARY.bytes().length - 20, DICTIONARY.bytes().length);
        roundTrips(tail);
        roundTrips(
                ("x" + new String(DICTIONARY.bytes(), StandardCharsets.UTF_8) + "y").getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i < 500; i++) {
            int size = random.nextInt(i < 480 ? 600 : 70_000);
            byte[] b = new byte[size];
            int kind = i % 3;
            if (kind == 0) {
                random.nextBytes(b);
            } else {
                // pieces of a few earlier spans, of the dictionary, and random bytes, as a resource is made of
                int at = 0;
                while (at < size) {
                    int len = Math.min(size - at, 1 + random.nextInt(40));
                    int choice = random.nextInt(kind == 1 ? 3 : 2);
                    if (choice == 0 && at > len) {
                        System.arraycopy(b, random.nextInt(at - len), b, at, len);
                    } else if (choice == 2 && len < DICTIONARY.bytes().length) {
                        System.arraycopy(
                                DICTIONARY.bytes(), random.nextInt(DICTIONARY.bytes().length - len), b, at, len);
                    } else {
                        for (int k = 0; k < len; k++) b[at + k] = (byte) random.nextInt(kind == 1 ? 4 : 256);
                    }
                    at += len;
                }
            }
            roundTrips(b);
        }
    }

    /** A resource of megabytes (a sidecar route configuration over every service) leaves no large scratch behind. */
    @Test
    void aLargeResource_leavesNoLargeScratchArraysBehind() {
        byte[] large = new byte[3_000_000];
        Random random = new Random(3);
        for (int at = 0; at < large.length; at += 50) {
            byte[] piece = ("virtual host " + random.nextInt(100_000) + ".example outbound|80||")
                    .getBytes(StandardCharsets.UTF_8);
            System.arraycopy(piece, 0, large, at, Math.min(piece.length, large.length - at));
        }
        roundTrips(large);
        assertThat(packer.scratchBytes()).isLessThanOrEqualTo(2 * PackedBytes.KEPT_SCRATCH);
        roundTrips("after it, small ones as before".getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The packer keeps its hash table and scratch arrays from one resource to the next: nothing of one resource may
     * reach the next one's packed form, which must be what a new packer makes, also after a resource large enough to
     * replace the scratch arrays.
     */
    @Test
    void aReusedPacker_packsEachResourceAsANewOneWould() {
        Random random = new Random(11);
        String[] words = {"outbound|", "8080", "||", "svc-", ".example", "type.googleapis.com/example.v1.Thing"};
        for (int i = 0; i < 300; i++) {
            StringBuilder text = new StringBuilder();
            int size = i == 150 ? 200_000 : random.nextInt(800);
            while (text.length() < size)
                text.append(words[random.nextInt(words.length)]).append(random.nextInt(50));
            byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
            byte[] reused = packer.pack(bytes, bytes.length);
            assertThat(reused)
                    .as("resource %d, %d bytes", i, bytes.length)
                    .isEqualTo(new PackedBytes(DICTIONARY).pack(bytes, bytes.length));
            assertThat(PackedBytes.unpack(reused, DICTIONARY)).isEqualTo(bytes);
        }
    }

    /**
     * Each packing tells its own hash entries from earlier ones by a generation count; when the count wraps, no entry of
     * a packing before may be taken for one of the next (a reference to bytes that are not there).
     */
    @Test
    void thePackingCount_wrapsWithoutMixingOnePackingsRunsIntoTheNext() {
        // its runs repeat further on: an entry left from packing it before points ahead of where it starts again
        byte[] repeating = "abcdefgh-abcdefgh-12345678-abcdefgh".getBytes(StandardCharsets.UTF_8);
        byte[] other = "zzzzzzzzzzzzzzzz".getBytes(StandardCharsets.UTF_8);
        packer.pack(repeating, repeating.length); // the first packing
        packer.generation(Integer.MAX_VALUE - 1);
        for (byte[] bytes : new byte[][] {other, repeating, other, repeating}) {
            // the second is the first packing after the count wrapped
            byte[] packed = packer.pack(bytes, bytes.length);
            assertThat(packed).isEqualTo(new PackedBytes(DICTIONARY).pack(bytes, bytes.length));
            assertThat(PackedBytes.unpack(packed, DICTIONARY)).isEqualTo(bytes);
        }
    }

    @Test
    void anEmptyDictionary_andOnlyTheDictionary_roundTrip() {
        PackedBytes.Dictionary empty = PackedBytes.Dictionary.of();
        PackedBytes bare = new PackedBytes(empty);
        byte[] bytes = "outbound|8080||a.b outbound|8080||c.d".getBytes(StandardCharsets.UTF_8);
        assertThat(PackedBytes.unpack(bare.pack(bytes, bytes.length), empty)).isEqualTo(bytes);
        byte[] all = DICTIONARY.bytes();
        byte[] packed = packer.pack(all, all.length);
        assertThat(packed.length).as("one reference into the dictionary").isLessThan(8);
        assertThat(PackedBytes.unpack(packed, DICTIONARY)).isEqualTo(all);
    }
}
