package dev.meshbridge.core.naming;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Kubernetes label rules, and the one way registry metadata becomes labels.
 *
 * <p>Sanitizing, applied to every key and value a registry gives:
 *
 * <ol>
 *   <li>a valid key and value are kept as they are;
 *   <li>otherwise each character outside {@code [A-Za-z0-9-_.]} (and, in a key's prefix, outside {@code [a-z0-9-.]})
 *       becomes {@code _} ({@code -} in a prefix), and leading or trailing non-alphanumerics are trimmed;
 *   <li>what is still invalid after that (too long, empty key) is dropped and reported, never truncated, so a label
 *       never claims a value the registry did not give.
 * </ol>
 */
public final class Labels {

    public static final int MAX_NAME = 63;
    public static final int MAX_VALUE = 63;

    private Labels() {}

    /** A label dropped while sanitizing, and why. */
    public record Dropped(String key, String value, String reason) {}

    /** Sanitized labels (sorted) and what had to be dropped. */
    public record Result(SortedMap<String, String> labels, List<Dropped> dropped) {}

    public static boolean isValidKey(String key) {
        if (key == null || key.isEmpty()) return false;
        int slash = key.indexOf('/');
        // checked in place: a change re-validates every label of a service, and substrings would be its garbage
        if (slash >= 0 && !Dns1123.isSubdomain(key, 0, slash)) return false;
        int from = slash + 1;
        return from < key.length() && key.length() - from <= MAX_NAME && isNameChars(key, from, key.length());
    }

    public static boolean isValidValue(String value) {
        if (value == null) return false;
        if (value.isEmpty()) return true;
        return value.length() <= MAX_VALUE && isNameChars(value);
    }

    private static boolean isNameChars(String s) {
        return isNameChars(s, 0, s.length());
    }

    private static boolean isNameChars(String s, int from, int to) {
        if (!isAlnum(s.charAt(from)) || !isAlnum(s.charAt(to - 1))) return false;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!isAlnum(c) && c != '-' && c != '_' && c != '.') return false;
        }
        return true;
    }

    private static boolean isAlnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    /** Sanitizes raw registry metadata into labels; see the class comment for the rules. */
    public static Result sanitize(Map<String, String> raw) {
        TreeMap<String, String> out = new TreeMap<>();
        List<Dropped> dropped = new ArrayList<>();
        for (Map.Entry<String, String> e : raw.entrySet()) {
            String key = e.getKey();
            String value = e.getValue() == null ? "" : e.getValue();
            String k = isValidKey(key) ? key : sanitizeKey(key);
            if (k == null) {
                dropped.add(new Dropped(key, value, "key is not a valid label key"));
                continue;
            }
            String v = isValidValue(value) ? value : sanitizeName(value);
            if (v == null || !isValidValue(v)) {
                dropped.add(new Dropped(
                        key,
                        value,
                        value.length() > MAX_VALUE
                                ? "value is longer than " + MAX_VALUE + " characters"
                                : "value is not a valid label value"));
                continue;
            }
            String previous = out.putIfAbsent(k, v);
            if (previous != null && !previous.equals(v)) {
                dropped.add(new Dropped(key, value, "sanitizes to key '" + k + "', which another entry already has"));
            }
        }
        return new Result(out, List.copyOf(dropped));
    }

    private static String sanitizeKey(String key) {
        if (key == null) return null;
        int slash = key.lastIndexOf('/');
        String prefix = null;
        String name = key;
        if (slash >= 0) {
            prefix = sanitizePrefix(key.substring(0, slash));
            name = key.substring(slash + 1);
        }
        String n = sanitizeName(name);
        if (n == null || n.isEmpty() || n.length() > MAX_NAME) return null;
        String k = prefix == null ? n : prefix + "/" + n;
        return isValidKey(k) ? k : null;
    }

    private static String sanitizePrefix(String prefix) {
        StringBuilder sb = new StringBuilder(prefix.length());
        for (char c : prefix.toLowerCase(java.util.Locale.ROOT).toCharArray()) {
            sb.append((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ? c : '-');
        }
        String p = trim(sb.toString());
        return p != null && Dns1123.isSubdomain(p) ? p : null;
    }

    /** Replaces characters a label name or value may not have with '_' and trims non-alphanumeric ends. */
    static String sanitizeName(String s) {
        if (s.isEmpty()) return s;
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            sb.append(isAlnum(c) || c == '-' || c == '_' || c == '.' ? c : '_');
        }
        String t = trim(sb.toString());
        return t == null || t.length() > MAX_VALUE ? null : t;
    }

    private static String trim(String s) {
        int b = 0;
        int e = s.length();
        while (b < e && !isAlnum(s.charAt(b))) b++;
        while (e > b && !isAlnum(s.charAt(e - 1))) e--;
        return b == e ? null : s.substring(b, e);
    }
}
