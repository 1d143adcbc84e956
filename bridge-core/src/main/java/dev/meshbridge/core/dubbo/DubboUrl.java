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
        parameters = Collections.unmodifiableMap(new TreeMap<>(parameters));
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
        String rest = s.substring(scheme + 3);
        Map<String, String> params = new TreeMap<>();
        int q = rest.indexOf('?');
        if (q >= 0) {
            Map<String, String> defaults = new TreeMap<>();
            for (String part : rest.substring(q + 1).split("[&;]")) {
                String pair = part.trim();
                if (pair.isEmpty()) continue;
                int eq = pair.indexOf('=');
                if (eq == 0) continue; // no key
                String k = eq < 0 ? pair : pair.substring(0, eq);
                String v = eq < 0 ? "" : pair.substring(eq + 1);
                params.put(k, v);
                if (k.startsWith(DEFAULT_PREFIX) && k.length() > DEFAULT_PREFIX.length()) {
                    defaults.putIfAbsent(k.substring(DEFAULT_PREFIX.length()), v);
                }
            }
            defaults.forEach(params::putIfAbsent);
            rest = rest.substring(0, q);
        }
        String path = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            path = rest.substring(slash + 1);
            rest = rest.substring(0, slash);
        }
        int at = rest.lastIndexOf('@');
        if (at >= 0) rest = rest.substring(at + 1); // credentials are never kept
        String host;
        String portText = null;
        if (rest.startsWith("[")) {
            int close = rest.indexOf(']');
            if (close < 0) throw new IllegalArgumentException("unclosed IPv6 address in '" + abbreviate(s) + "'");
            host = rest.substring(1, close);
            if (rest.length() > close + 1) {
                if (rest.charAt(close + 1) != ':')
                    throw new IllegalArgumentException("bad address '" + abbreviate(rest) + "'");
                portText = rest.substring(close + 2);
            }
        } else {
            int colon = rest.lastIndexOf(':');
            host = colon < 0 ? rest : rest.substring(0, colon);
            portText = colon < 0 ? null : rest.substring(colon + 1);
        }
        int port = 0;
        if (portText != null && !portText.isEmpty()) {
            try {
                port = Integer.parseInt(portText);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "port '" + portText + "' is not a number in '" + abbreviate(s) + "'");
            }
            if (port < 0 || port > 65535)
                throw new IllegalArgumentException("port " + port + " is out of range in '" + abbreviate(s) + "'");
        }
        return new DubboUrl(protocol, host, port, path, params);
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

    /** Decodes percent-encoding once ({@code +} is a space), as Dubbo's {@code URL.decode}. */
    public static String decode(String s) {
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
