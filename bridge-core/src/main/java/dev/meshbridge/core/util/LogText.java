package dev.meshbridge.core.util;

import java.util.regex.Pattern;

/**
 * Makes text from outside (registry items, URLs, error messages) safe for a log line, a metric or a debug page:
 * credentials in URLs are stripped and control characters escaped, and the length is bounded.
 */
public final class LogText {

    /** The longest text kept; the rest is cut and marked. */
    public static final int MAX_LENGTH = 2_000;

    // scheme://user:password@host, in plain text and percent-encoded (a ZooKeeper provider znode name)
    private static final Pattern USER_INFO = Pattern.compile("(://)[^/@\\s?#]*@");
    // user:password@host with no scheme in front (a provider address written without its protocol)
    private static final Pattern BARE_USER_INFO = Pattern.compile("(^|[\\s'\"(=,])[^\\s/@?#:'\"(=,]+:[^\\s/@?#'\"]*@");
    private static final Pattern ENCODED_USER_INFO = Pattern.compile("(?i)(%3A%2F%2F)(?:(?!%2F|%3F|%40|[/?\\s]).)*%40");
    // password=..., token=... in a query, plain or encoded
    private static final Pattern SECRET_PARAMS = Pattern.compile(
            "(?i)((?:[?&;]|%3F|%26|%3B)(?:password|passwd|token|secret|secretKey|accessKey)(?:=|%3D))(.*?)(?=[&;\\s]|%26|%3B|$)");

    private LogText() {}

    /** Removes {@code user:password@} from URLs (plain or percent-encoded) and masks password and token parameters. */
    public static String redact(String text) {
        if (text == null) return null;
        String s = text;
        if (s.indexOf('@') >= 0) {
            s = USER_INFO.matcher(s).replaceAll("$1");
            s = BARE_USER_INFO.matcher(s).replaceAll("$1");
        }
        if (s.indexOf('%') >= 0) s = ENCODED_USER_INFO.matcher(s).replaceAll("$1");
        return SECRET_PARAMS.matcher(s).replaceAll("$1***");
    }

    /** Escapes control characters ({@code \n}, {@code \t}, other as {@code \\uXXXX}) and bounds the length. */
    public static String escape(String text) {
        if (text == null) return null;
        int n = Math.min(text.length(), MAX_LENGTH);
        StringBuilder sb = null;
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            boolean control = c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029;
            if (control && sb == null) {
                sb = new StringBuilder(n + 16);
                sb.append(text, 0, i);
            }
            if (sb == null) continue;
            if (!control) sb.append(c);
            else if (c == '\n') sb.append("\\n");
            else if (c == '\r') sb.append("\\r");
            else if (c == '\t') sb.append("\\t");
            else sb.append(String.format("\\u%04x", (int) c));
        }
        String out = sb == null ? text.substring(0, n) : sb.toString();
        return text.length() > MAX_LENGTH ? out + "...(" + text.length() + " chars)" : out;
    }

    /** {@link #redact} then {@link #escape}: what every item and reason from a registry goes through before a log. */
    public static String safe(String text) {
        return escape(redact(text));
    }
}
