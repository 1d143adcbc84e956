package dev.meshbridge.xds;

/** Recognizes IPv4 and IPv6 literals without any name lookup (EDS endpoints must be IP addresses). */
final class InetLiterals {

    private InetLiterals() {}

    static boolean isIpLiteral(String s) {
        return s.indexOf(':') >= 0 ? isIpv6(s) : isIpv4(s);
    }

    static boolean isIpv4(String s) {
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
            i++; // the dot
            if (i == n) return false;
        }
        return parts == 4;
    }

    static boolean isIpv6(String s) {
        if (s.isEmpty() || s.indexOf('%') >= 0) return false;
        int doubleColon = s.indexOf("::");
        if (doubleColon >= 0 && s.indexOf("::", doubleColon + 1) >= 0) return false;
        String head = doubleColon >= 0 ? s.substring(0, doubleColon) : s;
        String tail = doubleColon >= 0 ? s.substring(doubleColon + 2) : "";
        int groups = 0;
        String[][] sides = {
            head.isEmpty() ? new String[0] : head.split(":", -1), tail.isEmpty() ? new String[0] : tail.split(":", -1)
        };
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
