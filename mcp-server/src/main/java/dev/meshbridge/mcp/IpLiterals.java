package dev.meshbridge.mcp;

import java.util.ArrayList;
import java.util.List;

/**
 * IP address literals as Go's {@code net.ParseIP} accepts them (what istiod checks for STATIC endpoints), without
 * ever resolving a name: dotted IPv4 without leading zeros, and IPv6 in full, compressed or IPv4-suffixed form.
 */
final class IpLiterals {

    private IpLiterals() {}

    static boolean isIp(String s) {
        return isIpv4(s) || isIpv6(s);
    }

    static boolean isIpv4(String s) {
        if (s == null || s.isEmpty() || s.length() > 15) return false;
        int parts = 0;
        int start = 0;
        while (true) {
            int dot = s.indexOf('.', start);
            int end = dot < 0 ? s.length() : dot;
            if (!isOctet(s, start, end)) return false;
            parts++;
            if (dot < 0) break;
            start = dot + 1;
        }
        return parts == 4;
    }

    private static boolean isOctet(String s, int start, int end) {
        int len = end - start;
        if (len < 1 || len > 3) return false;
        if (len > 1 && s.charAt(start) == '0') return false;
        int v = 0;
        for (int i = start; i < end; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') return false;
            v = v * 10 + (c - '0');
        }
        return v <= 255;
    }

    static boolean isIpv6(String s) {
        if (s == null || s.length() < 2 || s.length() > 45 || s.indexOf(':') < 0) return false;
        int doubleColon = s.indexOf("::");
        if (doubleColon >= 0 && s.indexOf("::", doubleColon + 1) >= 0) return false;
        String head = doubleColon < 0 ? s : s.substring(0, doubleColon);
        String tail = doubleColon < 0 ? "" : s.substring(doubleColon + 2);
        List<String> fields = new ArrayList<>();
        if (!head.isEmpty()) fields.addAll(List.of(head.split(":", -1)));
        int lastOfAddress = doubleColon >= 0 && tail.isEmpty() ? -1 : -2;
        if (!tail.isEmpty()) fields.addAll(List.of(tail.split(":", -1)));
        if (lastOfAddress == -2) lastOfAddress = fields.size() - 1;
        int groups = 0;
        for (int i = 0; i < fields.size(); i++) {
            String f = fields.get(i);
            if (i == lastOfAddress && f.indexOf('.') >= 0) {
                if (!isIpv4(f)) return false;
                groups += 2;
            } else if (isHexGroup(f)) {
                groups++;
            } else {
                return false;
            }
        }
        return doubleColon >= 0 ? groups < 8 : groups == 8;
    }

    private static boolean isHexGroup(String f) {
        if (f.isEmpty() || f.length() > 4) return false;
        for (int i = 0; i < f.length(); i++) {
            if (Character.digit(f.charAt(i), 16) < 0) return false;
        }
        return true;
    }
}
