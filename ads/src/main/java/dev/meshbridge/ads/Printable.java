package dev.meshbridge.ads;

/** Text from a client made safe for a log line: control characters escaped, at most 512 characters. */
final class Printable {

    private static final int MAX = 512;

    private Printable() {}

    static String of(String s) {
        if (s == null) return "";
        StringBuilder b = null;
        int n = Math.min(s.length(), MAX);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '"') {
                if (b == null) b = new StringBuilder(s.length() + 8).append(s, 0, i);
                b.append(c == '"' ? "\\\"" : String.format("\\u%04x", (int) c));
            } else if (b != null) {
                b.append(c);
            }
        }
        String out = b == null ? s.substring(0, n) : b.toString();
        return s.length() > MAX ? out + "...(" + s.length() + " chars)" : out;
    }

    /** The text cut to at most {@code max} characters (for what is kept or shown, not logged: no escaping). */
    static String cut(String s, int max) {
        if (s == null || s.length() <= max) return s;
        return s.substring(0, max) + "...(" + s.length() + " chars)";
    }
}
