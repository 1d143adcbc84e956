package dev.meshbridge.core.util;

import java.util.regex.Pattern;

/**
 * The one glob rule of the bridge: {@code *} matches any run of characters (none included), {@code ?} exactly one,
 * every other character itself; a pattern matches the whole name. A separator, when given, is a character that
 * neither {@code *} nor {@code ?} crosses (a {@code /} of a SPIFFE ID, a {@code .} of a DNS name).
 */
public final class Glob {

    private Glob() {}

    /**
     * The regular expression of one glob.
     *
     * @param ignoreCase whether letters match regardless of case
     * @param separator a character that wildcards do not match, or {@code 0} for none
     */
    public static Pattern compile(String glob, boolean ignoreCase, char separator) {
        String any = separator == 0 ? "." : "[^" + Pattern.quote(String.valueOf(separator)) + "]";
        StringBuilder re = new StringBuilder(glob.length() + 8);
        StringBuilder literal = new StringBuilder();
        for (char c : glob.toCharArray()) {
            if (c == '*' || c == '?') {
                if (!literal.isEmpty()) {
                    re.append(Pattern.quote(literal.toString()));
                    literal.setLength(0);
                }
                re.append(any).append(c == '*' ? "*" : "");
            } else {
                literal.append(c);
            }
        }
        if (!literal.isEmpty()) re.append(Pattern.quote(literal.toString()));
        int flags = Pattern.DOTALL | (ignoreCase ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0);
        return Pattern.compile(re.toString(), flags);
    }
}
