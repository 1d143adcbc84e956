package dev.meshbridge.core.naming;

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
        int parts = 0;
        int i = 0;
        int n = s.length();
        while (i <= n) {
            int start = i;
            int value = 0;
            while (i < n && s.charAt(i) != '.') {
                char c = s.charAt(i);
                if (c < '0' || c > '9') return false;
                value = value * 10 + (c - '0');
                if (value > 255 || i - start >= 3) return false;
                i++;
            }
            int len = i - start;
            if (len == 0 || (len > 1 && s.charAt(start) == '0')) return false;
            parts++;
            if (i == n) break;
            i++; // past the dot
            if (i == n) return false;
        }
        return parts == 4;
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
