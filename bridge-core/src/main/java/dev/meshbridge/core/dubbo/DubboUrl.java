package dev.meshbridge.core.dubbo;

import dev.meshbridge.core.util.LogText;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A Dubbo URL such as {@code dubbo://10.0.0.5:20880/org.demo.Greeter?version=1.0.0&group=g1&weight=50}, read the way
 * Dubbo's own parser reads it ({@code org.apache.dubbo.common.URL.valueOf}, {@code URLStrParser}):
 *
 * <ol>
 *   <li>a ZooKeeper provider znode name is the URL encoded once ({@code URL.encode(url.toFullString())}); it is decoded
 *       exactly once ({@link #parseEncoded}), and parameter values are never decoded again, so {@code 1.0.0+b7} stays
 *       {@code 1.0.0+b7} and a value holding a literal {@code %} is kept as it is;
 *   <li>parameters are separated by {@code &} or {@code ;}; a value runs to the next separator (it may hold {@code =});
 *       a key without {@code =} has an empty value; a later duplicate key wins;
 *   <li>a {@code default.<key>} parameter, written by Dubbo 2.6 and 2.7.0 to 2.7.2, also sets {@code <key>} unless the
 *       URL has {@code <key>} itself (so {@code default.version}, {@code default.group}, {@code default.weight} count);
 *   <li>{@code user:password@} before the host is dropped, never kept or shown.
 * </ol>
 *
 * @param protocol scheme ({@code dubbo}, {@code tri}, {@code rest}, {@code empty}...)
 * @param host host or IP (IPv6 without brackets)
 * @param port port, 0 when absent
 * @param path path without the leading slash (usually the interface name)
 * @param parameters query parameters as Dubbo reads them (with the {@code default.} keys applied)
 */
public record DubboUrl(String protocol, String host, int port, String path, Map<String, String> parameters) {

    public DubboUrl {
        Objects.requireNonNull(protocol);
        Objects.requireNonNull(host);
        Objects.requireNonNull(path);
        parameters = Collections.unmodifiableMap(parameters instanceof Params ? parameters : new TreeMap<>(parameters));
    }

    /** The prefix of the parameters Dubbo 2.6 and 2.7.0-2.7.2 wrote as defaults ({@code default.version=1.0.0}). */
    public static final String DEFAULT_PREFIX = "default.";

    /**
     * Parses a Dubbo URL as text (already decoded): parameter values are taken as they are.
     *
     * @throws IllegalArgumentException with a message naming what is wrong (no scheme, bad port...); the message never
     *     shows credentials
     */
    public static DubboUrl parse(String url) {
        if (url == null || url.isBlank()) throw new IllegalArgumentException("empty URL");
        String s = url.trim();
        int scheme = s.indexOf("://");
        if (scheme <= 0) throw new IllegalArgumentException("no protocol in '" + abbreviate(s) + "'");
        String protocol = s.substring(0, scheme).toLowerCase(Locale.ROOT);
        // positions in s, with no copy of the parts: [start, end) is the address, then the path, then the query
        int start = scheme + 3;
        int q = s.indexOf('?', start);
        int end = q >= 0 ? q : s.length();
        Params params = new Params();
        if (q >= 0) parameters(s, q + 1, params);
        String path = "";
        int slash = s.indexOf('/', start);
        if (slash >= 0 && slash < end) {
            path = s.substring(slash + 1, end);
            end = slash;
        }
        int at = s.lastIndexOf('@', end - 1);
        if (at >= start) start = at + 1; // credentials are never kept
        String host;
        int portFrom = -1;
        if (start < end && s.charAt(start) == '[') {
            int close = s.indexOf(']', start);
            if (close < 0 || close >= end)
                throw new IllegalArgumentException("unclosed IPv6 address in '" + abbreviate(s) + "'");
            host = s.substring(start + 1, close);
            if (end > close + 1) {
                if (s.charAt(close + 1) != ':')
                    throw new IllegalArgumentException("bad address '" + abbreviate(s.substring(start, end)) + "'");
                portFrom = close + 2;
            }
        } else {
            int colon = s.lastIndexOf(':', end - 1);
            if (colon < start) colon = -1;
            host = s.substring(start, colon < 0 ? end : colon);
            portFrom = colon < 0 ? -1 : colon + 1;
        }
        int port = 0;
        if (portFrom >= 0 && portFrom < end) {
            try {
                port = Integer.parseInt(s, portFrom, end, 10);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "port '" + s.substring(portFrom, end) + "' is not a number in '" + abbreviate(s) + "'");
            }
            if (port < 0 || port > 65535)
                throw new IllegalArgumentException("port " + port + " is out of range in '" + abbreviate(s) + "'");
        }
        return new DubboUrl(protocol, host, port, path, params);
    }

    /**
     * The parameters of a parsed URL: the record keeps this map as it is (no copy), since nothing else holds it. Any
     * other map given to the constructor is copied.
     */
    private static final class Params extends TreeMap<String, String> {}

    /**
     * Reads the query from {@code from} to the end of {@code s}: pairs separated by {@code &} or {@code ;}, each
     * trimmed, empty ones and ones without a key skipped, {@code default.<key>} applied after the others.
     */
    private static void parameters(String s, int from, Map<String, String> params) {
        Map<String, String> defaults = null;
        for (int i = from, next; i <= s.length(); i = next + 1) {
            next = nextSeparator(s, i);
            int a = i;
            int b = next;
            while (a < b && s.charAt(a) <= ' ') a++; // String.trim's rule
            while (b > a && s.charAt(b - 1) <= ' ') b--;
            if (a == b) continue;
            int eq = s.indexOf('=', a);
            if (eq >= b) eq = -1;
            if (eq == a) continue; // no key
            String k = s.substring(a, eq < 0 ? b : eq);
            String v = eq < 0 ? "" : s.substring(eq + 1, b);
            params.put(k, v);
            if (k.startsWith(DEFAULT_PREFIX) && k.length() > DEFAULT_PREFIX.length()) {
                if (defaults == null) defaults = new TreeMap<>();
                defaults.putIfAbsent(k.substring(DEFAULT_PREFIX.length()), v);
            }
        }
        if (defaults != null) defaults.forEach(params::putIfAbsent);
    }

    /**
     * Dubbo parameters as Dubbo reads them when they come as a map (Nacos instance metadata is a provider's URL
     * parameters): every {@code default.<key>} also sets {@code <key>} unless the map has it.
     */
    public static Map<String, String> withDefaults(Map<String, String> parameters) {
        Map<String, String> out = null;
        for (Map.Entry<String, String> e : parameters.entrySet()) {
            String k = e.getKey();
            if (k == null || !k.startsWith(DEFAULT_PREFIX) || k.length() == DEFAULT_PREFIX.length()) continue;
            String key = k.substring(DEFAULT_PREFIX.length());
            if (parameters.containsKey(key)) continue;
            if (out == null) out = new TreeMap<>(parameters);
            out.putIfAbsent(key, e.getValue());
        }
        return out == null ? parameters : out;
    }

    /** Parses the name of a ZooKeeper znode under {@code providers} or {@code configurators}: the URL, encoded once. */
    public static DubboUrl parseEncoded(String encoded) {
        return parse(decode(encoded));
    }

    /** The index of the first {@code &} or {@code ;} at or after {@code from}, or the text's length. */
    private static int nextSeparator(String s, int from) {
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '&' || c == ';') return i;
        }
        return s.length();
    }

    /**
     * Decodes percent-encoding once ({@code +} is a space), as Dubbo's {@code URL.decode} does with {@link
     * URLDecoder}: each run of escapes is one UTF-8 byte sequence (malformed bytes become U+FFFD). Escapes of two hex
     * digits, all a registry writes, are decoded here in one pass; anything else (a truncated or odd escape) is left to
     * {@link URLDecoder} itself, so the result and the errors are always its own.
     *
     * @throws IllegalArgumentException when the text has a bad escape
     */
    public static String decode(String s) {
        int n = s.length();
        int i = 0;
        while (i < n && s.charAt(i) != '%' && s.charAt(i) != '+') i++;
        if (i == n) return s;
        char[] out = new char[n]; // decoding never makes the text longer
        s.getChars(0, i, out, 0);
        int len = i;
        byte[] run = null;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '+') {
                out[len++] = ' ';
                i++;
            } else if (c != '%') {
                out[len++] = c;
                i++;
            } else {
                int count = 0;
                boolean ascii = true;
                while (i < n && s.charAt(i) == '%') {
                    int hi = i + 2 < n ? hex(s.charAt(i + 1)) : -1;
                    int lo = hi < 0 ? -1 : hex(s.charAt(i + 2));
                    if (lo < 0) return decodeSlowly(s); // truncated or not two hex digits: URLDecoder's own rule
                    if (run == null) run = new byte[(n - i) / 3];
                    byte b = (byte) (hi << 4 | lo);
                    run[count++] = b;
                    ascii &= b >= 0;
                    i += 3;
                }
                if (ascii) {
                    for (int k = 0; k < count; k++) out[len++] = (char) run[k];
                } else {
                    String text = new String(run, 0, count, StandardCharsets.UTF_8);
                    text.getChars(0, text.length(), out, len); // UTF-8 takes at least as many bytes as chars
                    len += text.length();
                }
            }
        }
        return new String(out, 0, len);
    }

    private static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    private static String decodeSlowly(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad URL encoding in '" + abbreviate(s) + "'");
        }
    }

    /** The URL text for a message: credentials stripped, at most 200 characters. */
    private static String abbreviate(String s) {
        String safe = LogText.redact(s);
        return safe.length() > 200 ? safe.substring(0, 200) + "..." : safe;
    }

    public String parameter(String key, String defaultValue) {
        String v = parameters.get(key);
        return v == null || v.isEmpty() ? defaultValue : v;
    }

    /** The service interface: the {@code interface} parameter, else the path. */
    public String interfaceName() {
        return parameter("interface", path);
    }

    public String version() {
        return parameter("version", "");
    }

    public String group() {
        return parameter("group", "");
    }

    public String application() {
        return parameter("application", "");
    }

    /** The registry category this URL was written under; Dubbo's default is {@code providers}. */
    public String category() {
        return parameter("category", "providers");
    }

    /** {@code provider} or {@code consumer}; empty when not given. */
    public String side() {
        return parameter("side", "");
    }
}
