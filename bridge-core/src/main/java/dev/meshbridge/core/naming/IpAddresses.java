package dev.meshbridge.core.naming;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/** Tells IP address literals from host names, without ever asking DNS. */
public final class IpAddresses {

    private static final Pattern IPV4 =
            Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]+");

    private IpAddresses() {}

    /** True when {@code s} is an IPv4 literal or an IPv6 literal (with or without brackets). */
    public static boolean isLiteral(String s) {
        return literal(s) != null;
    }

    /**
     * The address as written when it is an IP literal (an IPv6 literal loses its brackets), else null. A string with a
     * colon is only ever parsed as an IPv6 literal, never looked up.
     */
    public static String literal(String raw) {
        if (raw == null) return null;
        String s = raw.trim();
        if (s.isEmpty()) return null;
        char first = s.charAt(0);
        if (first >= '0' && first <= '9' && IPV4.matcher(s).matches()) return s;
        if (s.startsWith("[") && s.endsWith("]")) s = s.substring(1, s.length() - 1);
        if (s.indexOf(':') >= 0 && IPV6_CHARS.matcher(s).matches()) {
            try {
                InetAddress.getByName(s); // a literal with ':' is parsed, not resolved
                return s;
            } catch (UnknownHostException e) {
                return null;
            }
        }
        return null;
    }
}
