package dev.meshbridge.core.naming;

/** DNS-1123 rules as Kubernetes and Istio apply them to host names and port names. */
public final class Dns1123 {

    public static final int MAX_LABEL = 63;
    public static final int MAX_SUBDOMAIN = 253;

    private Dns1123() {}

    /** A label: 1..63 of {@code [a-z0-9-]}, starting and ending with an alphanumeric. */
    public static boolean isLabel(String s) {
        return s != null && isLabel(s, 0, s.length());
    }

    /** Whether {@code s[from, to)} is a label; reads the characters in place (no substring). */
    private static boolean isLabel(String s, int from, int to) {
        if (to <= from || to - from > MAX_LABEL) return false;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!alnum && (c != '-' || i == from || i == to - 1)) return false;
        }
        return true;
    }

    /** A subdomain: 1..253 characters, labels separated by dots. */
    public static boolean isSubdomain(String s) {
        return s != null && isSubdomain(s, 0, s.length());
    }

    /** Whether {@code s[from, to)} is a subdomain; reads the characters in place (no substring). */
    public static boolean isSubdomain(String s, int from, int to) {
        if (to <= from || to - from > MAX_SUBDOMAIN) return false;
        int start = from;
        while (true) {
            int dot = s.indexOf('.', start);
            int end = dot < 0 || dot >= to ? to : dot;
            if (!isLabel(s, start, end)) return false;
            if (end == to) return true;
            start = end + 1;
        }
    }

    /** Why {@code s} is not a subdomain, or null when it is one. */
    public static String subdomainProblem(String s) {
        if (s == null || s.isEmpty()) return "is empty";
        if (s.length() > MAX_SUBDOMAIN) return "is longer than " + MAX_SUBDOMAIN + " characters";
        for (String label : s.split("\\.", -1)) {
            if (label.isEmpty()) return "has an empty label";
            if (label.length() > MAX_LABEL) return "has a label longer than " + MAX_LABEL + " characters";
            if (!isLabel(label))
                return "has label '" + label + "', which is not lower-case [a-z0-9-] starting and ending alphanumeric";
        }
        return null;
    }
}
