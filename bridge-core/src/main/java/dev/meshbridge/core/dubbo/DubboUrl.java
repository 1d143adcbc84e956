package dev.meshbridge.core.dubbo;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A Dubbo URL such as {@code dubbo://10.0.0.5:20880/org.demo.Greeter?version=1.0.0&group=g1&weight=50}, parsed the way
 * Dubbo writes it (the ZooKeeper provider znode name is this URL, URL-encoded once).
 *
 * @param protocol scheme ({@code dubbo}, {@code tri}, {@code rest}, {@code empty}...)
 * @param host host or IP (IPv6 without brackets)
 * @param port port, 0 when absent
 * @param path path without the leading slash (usually the interface name)
 * @param parameters query parameters, decoded
 */
public record DubboUrl(String protocol, String host, int port, String path, Map<String, String> parameters) {

    public DubboUrl {
        Objects.requireNonNull(protocol);
        Objects.requireNonNull(host);
        Objects.requireNonNull(path);
        parameters = Collections.unmodifiableMap(new TreeMap<>(parameters));
    }

    /**
     * Parses a Dubbo URL.
     *
     * @throws IllegalArgumentException with a message naming what is wrong (no scheme, bad port...)
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
            for (String pair : rest.substring(q + 1).split("&")) {
                if (pair.isEmpty()) continue;
                int eq = pair.indexOf('=');
                String k = eq < 0 ? pair : pair.substring(0, eq);
                String v = eq < 0 ? "" : pair.substring(eq + 1);
                params.put(decode(k), decode(v));
            }
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
                if (rest.charAt(close + 1) != ':') throw new IllegalArgumentException("bad address '" + rest + "'");
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

    /** Parses the name of a ZooKeeper provider znode: the URL, URL-encoded once. */
    public static DubboUrl parseEncoded(String encoded) {
        return parse(decode(encoded));
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad URL encoding in '" + abbreviate(s) + "'");
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
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
