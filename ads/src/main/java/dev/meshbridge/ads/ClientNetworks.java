package dev.meshbridge.ads;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * A set of client addresses, written as IP literals and CIDR blocks ({@code 10.0.0.0/8}, {@code fd00::/8}) or the word
 * {@code loopback}. Immutable.
 */
public final class ClientNetworks {

    /** Only clients on the same host. */
    public static final ClientNetworks LOOPBACK = parse(List.of("loopback"));

    private record Block(byte[] prefix, int bits) {}

    private final List<String> written;
    private final List<Block> blocks;
    private final boolean loopback;

    private ClientNetworks(List<String> written, List<Block> blocks, boolean loopback) {
        this.written = List.copyOf(written);
        this.blocks = List.copyOf(blocks);
        this.loopback = loopback;
    }

    /**
     * Parses the entries.
     *
     * @throws IllegalArgumentException naming the entry that is not an IP literal, a CIDR block or {@code loopback}
     */
    public static ClientNetworks parse(List<String> entries) {
        List<Block> blocks = new ArrayList<>();
        boolean loopback = false;
        for (String raw : entries) {
            String e = raw.trim();
            if (e.equals("loopback")) {
                loopback = true;
                continue;
            }
            int slash = e.indexOf('/');
            String ip = slash < 0 ? e : e.substring(0, slash);
            if (!dev.meshbridge.core.naming.IpAddresses.isLiteral(ip)) {
                throw new IllegalArgumentException("'" + e + "' is not an IP address, a CIDR block or 'loopback'");
            }
            byte[] bytes;
            try {
                bytes = InetAddress.getByName(ip).getAddress(); // a literal: no lookup
            } catch (UnknownHostException ex) {
                throw new IllegalArgumentException("'" + e + "' is not an IP address", ex);
            }
            int bits = bytes.length * 8;
            if (slash >= 0) {
                try {
                    bits = Integer.parseInt(e.substring(slash + 1));
                } catch (NumberFormatException ex) {
                    bits = -1;
                }
                if (bits < 0 || bits > bytes.length * 8) {
                    throw new IllegalArgumentException("'" + e + "' has a prefix length out of 0.." + bytes.length * 8);
                }
            }
            blocks.add(new Block(bytes, bits));
        }
        return new ClientNetworks(entries, blocks, loopback);
    }

    public boolean contains(InetAddress address) {
        if (address == null) return false;
        if (loopback && address.isLoopbackAddress()) return true;
        byte[] a = address.getAddress();
        if (address instanceof Inet6Address && isMappedV4(a)) {
            a = java.util.Arrays.copyOfRange(a, 12, 16);
            if (loopback && a[0] == 127) return true;
        }
        for (Block b : blocks) {
            if (b.prefix().length == a.length && matches(b, a)) return true;
        }
        return false;
    }

    private static boolean isMappedV4(byte[] a) {
        if (a.length != 16) return false;
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) return false;
        }
        return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
    }

    private static boolean matches(Block b, byte[] a) {
        int full = b.bits() / 8;
        for (int i = 0; i < full; i++) {
            if (a[i] != b.prefix()[i]) return false;
        }
        int rest = b.bits() % 8;
        if (rest == 0) return true;
        int mask = (0xff << (8 - rest)) & 0xff;
        return (a[full] & mask) == (b.prefix()[full] & mask);
    }

    /** The entries as written. */
    public List<String> entries() {
        return written;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClientNetworks c && c.written.equals(written);
    }

    @Override
    public int hashCode() {
        return written.hashCode();
    }

    @Override
    public String toString() {
        return String.join(",", written);
    }
}
