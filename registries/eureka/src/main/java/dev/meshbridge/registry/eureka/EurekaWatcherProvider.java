package dev.meshbridge.registry.eureka;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.spi.WatcherContext;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Makes {@link EurekaWatcher}s for {@code type: eureka} entries.
 *
 * <p>Addresses are Eureka service URLs, as Spring Cloud's {@code eureka.client.service-url.defaultZone} lists them;
 * each entry is normalized:
 *
 * <ol>
 *   <li>{@code host}, {@code host:port} (also Higress's {@code domain} and {@code port}) become {@code
 *       http://host:port/eureka}, port 8761 when absent;
 *   <li>a URL keeps its scheme ({@code http} or {@code https}), host and path ({@code /eureka} when it has none, so
 *       {@code http://host:8080/eureka/v2} stays as it is); a trailing slash is dropped;
 *   <li>a URL with credentials ({@code user:pass@host}) is refused without echoing it: credentials go in {@code
 *       username} and {@code password}, which are never logged;
 *   <li>several addresses are peers of one Eureka cluster, tried in order for failover.
 * </ol>
 */
public final class EurekaWatcherProvider implements RegistryWatcherProvider {

    public static final String TYPE = "eureka";
    public static final int DEFAULT_PORT = 8761;
    public static final String DEFAULT_PATH = "/eureka";

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public int defaultPort() {
        return DEFAULT_PORT;
    }

    @Override
    public List<String> normalizeAddresses(List<String> raw, ConfigNode entry) {
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < raw.size(); i++) {
            String url = normalize(raw.get(i), i, entry);
            if (url != null && !out.add(url)) {
                entry.problem("addresses", "address #" + (i + 1) + " (" + url + ") is listed twice");
            }
        }
        return List.copyOf(new ArrayList<>(out));
    }

    /** The normalized service URL, or null after recording a problem. */
    static String normalize(String raw, int index, ConfigNode entry) {
        String s = raw.trim();
        String where = "address #" + (index + 1);
        int schemeEnd = s.indexOf("://");
        String authorityAndPath = schemeEnd < 0 ? s : s.substring(schemeEnd + 3);
        int slash = authorityAndPath.indexOf('/');
        String authority = slash < 0 ? authorityAndPath : authorityAndPath.substring(0, slash);
        if (authority.contains("@")) {
            entry.problem(
                    "addresses",
                    where + " carries credentials in the URL; put them in username and password"
                            + " (they are never logged)");
            return null;
        }
        URI uri;
        try {
            uri = new URI(schemeEnd < 0 ? "http://" + s : s);
        } catch (URISyntaxException e) {
            entry.problem("addresses", where + " '" + s + "' is not a URL: " + e.getReason());
            return null;
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            entry.problem("addresses", where + " '" + s + "' must be an http or https URL");
            return null;
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            entry.problem("addresses", where + " '" + s + "' has no host");
            return null;
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            entry.problem("addresses", where + " '" + s + "' must not have a query or fragment");
            return null;
        }
        int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
        if (port < 1 || port > 65535) {
            entry.problem("addresses", where + " '" + s + "' has an invalid port");
            return null;
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (path.endsWith("/")) path = path.substring(0, path.length() - 1);
        if (path.isEmpty()) path = DEFAULT_PATH;
        return scheme + "://" + uri.getHost().toLowerCase(Locale.ROOT) + ":" + port + path;
    }

    @Override
    public Object parseOptions(ConfigNode entry) {
        return EurekaOptions.parse(entry);
    }

    @Override
    public RegistryWatcher create(RegistryConfig config, WatcherContext context) {
        return new EurekaWatcher(context);
    }
}
