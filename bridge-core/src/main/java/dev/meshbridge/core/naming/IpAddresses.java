package dev.meshbridge.core.naming;

import java.nio.charset.StandardCharsets;

/**
 * Tells IP address literals from host names, without ever asking DNS: the one IP-literal rule of the bridge (the
 * watchers decide with it what needs resolving, the xDS translator and validators what may go into an address field).
 *
 * <ul>
 *   <li>IPv4: four dotted decimal parts 0..255, no leading zeros ({@code 010.0.0.1} is no literal: resolvers disagree
 *       on whether it is octal);
 *   <li>IPv6: up to eight hex groups of 1..4 digits, at most one {@code ::}, an IPv4 tail allowed in the last 32 bits;
 *       no zone ({@code %eth0}).
 * </ul>
 */
public final class IpAddresses {

    private IpAddresses() {}

    /** True when {@code s}, trimmed, is an IPv4 literal or an IPv6 literal (with or without brackets). */
    public static boolean isLiteral(String s) {
        return literal(s) != null;
    }

    /**
     * The address as written when it is an IP literal (trimmed; an IPv6 literal loses its brackets), else null. A
     * string with a colon is only ever parsed as an IPv6 literal, never looked up.
     */
    public static String literal(String raw) {
        if (raw == null) return null;
        String s = raw.trim();
        if (s.startsWith("[") && s.endsWith("]")) {
            s = s.substring(1, s.length() - 1);
            return isIpv6(s) ? s : null;
        }
        return isBare(s) ? s : null;
    }

    /** True when {@code s} is exactly an IP literal: no spaces, no brackets (what an xDS address field must hold). */
    public static boolean isBare(String s) {
        if (s == null || s.isEmpty()) return false;
        return s.indexOf(':') >= 0 ? isIpv6(s) : isIpv4(s);
    }

    /** True when {@code s} is exactly an IPv4 literal. */
    public static boolean isIpv4(String s) {
        return ipv4Bits(s) >= 0;
    }

    /**
     * The 32 bits of an IPv4 literal (as a non-negative long), or -1 when {@code s} is not exactly one: four decimal
     * octets of 0 to 255, no sign, no leading zero, no spaces. Such a literal is canonical: {@link #ipv4Text} gives back
     * the same text.
     */
    public static long ipv4Bits(String s) {
        int n = s.length();
        if (n < 7 || n > 15) return -1;
        long value = 0;
        int octets = 0;
        int i = 0;
        while (true) {
            int start = i;
            int octet = 0;
            while (i < n && i - start < 3) {
                char c = s.charAt(i);
                if (c < '0' || c > '9') break;
                octet = octet * 10 + (c - '0');
                i++;
            }
            int digits = i - start;
            if (digits == 0 || octet > 255 || (digits > 1 && s.charAt(start) == '0')) return -1;
            value = (value << 8) | octet;
            if (++octets == 4) return i == n ? value : -1;
            if (i >= n || s.charAt(i) != '.') return -1;
            i++;
        }
    }

    /** The dotted text of an IPv4 address given as its 32 bits. */
    public static String ipv4Text(int address) {
        byte[] text = new byte[15];
        int n = 0;
        for (int shift = 24; shift >= 0; shift -= 8) {
            int octet = (address >>> shift) & 0xff;
            if (octet >= 100) text[n++] = (byte) ('0' + octet / 100);
            if (octet >= 10) text[n++] = (byte) ('0' + octet / 10 % 10);
            text[n++] = (byte) ('0' + octet % 10);
            if (shift > 0) text[n++] = '.';
        }
        return new String(text, 0, n, StandardCharsets.ISO_8859_1);
    }

    /**
     * Compares two IPv4 addresses as {@link String#compareTo} compares their {@link #ipv4Text texts}, without making
     * them. Octet by octet: equal octets are equal text; otherwise the first differing digit decides, and where one
     * octet's digits are a prefix of the other's, the shorter is followed by '.' or the end of the text, both below any
     * digit, so it sorts first.
     */
    public static int compareIpv4Text(int a, int b) {
        for (int shift = 24; shift >= 0; shift -= 8) {
            int x = (a >>> shift) & 0xff;
            int y = (b >>> shift) & 0xff;
            if (x != y) return compareDigits(x, y);
        }
        return 0;
    }

    private static int compareDigits(int x, int y) {
        int lx = x >= 100 ? 3 : x >= 10 ? 2 : 1;
        int ly = y >= 100 ? 3 : y >= 10 ? 2 : 1;
        for (int i = 0; i < Math.min(lx, ly); i++) {
            int c = Integer.compare(digitAt(x, lx, i), digitAt(y, ly, i));
            if (c != 0) return c;
        }
        return Integer.compare(lx, ly);
    }

    private static int digitAt(int octet, int length, int index) {
        int place = length - 1 - index;
        return octet / (place == 2 ? 100 : place == 1 ? 10 : 1) % 10;
    }

    /** True when {@code s} is exactly an IPv6 literal (no brackets, no zone). */
    public static boolean isIpv6(String s) {
        if (s.isEmpty() || s.indexOf('%') >= 0) return false;
        int doubleColon = s.indexOf("::");
        if (doubleColon >= 0 && s.indexOf("::", doubleColon + 1) >= 0) return false;
        String head = doubleColon >= 0 ? s.substring(0, doubleColon) : s;
        String tail = doubleColon >= 0 ? s.substring(doubleColon + 2) : "";
        String[][] sides = {
            head.isEmpty() ? new String[0] : head.split(":", -1), tail.isEmpty() ? new String[0] : tail.split(":", -1)
        };
        int groups = 0;
        for (int side = 0; side < 2; side++) {
            String[] parts = sides[side];
            for (int i = 0; i < parts.length; i++) {
                String g = parts[i];
                boolean last = (side == 1 || doubleColon < 0) && i == parts.length - 1;
                if (last && g.indexOf('.') >= 0) {
                    if (!isIpv4(g)) return false;
                    groups += 2;
                    continue;
                }
                if (g.isEmpty() || g.length() > 4) return false;
                for (int k = 0; k < g.length(); k++) {
                    if (Character.digit(g.charAt(k), 16) < 0) return false;
                }
                groups++;
            }
        }
        return doubleColon >= 0 ? groups < 8 : groups == 8;
    }
}
