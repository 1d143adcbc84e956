package dev.meshbridge.registry.nacos;

import com.alibaba.nacos.plugin.auth.api.LoginIdentityContext;
import com.alibaba.nacos.plugin.auth.api.RequestResource;
import com.alibaba.nacos.plugin.auth.spi.client.AbstractClientAuthService;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A client auth plugin of nacos-client (its {@code AbstractClientAuthService} SPI, listed in
 * {@code META-INF/services}) that hands nacos-client the access token of a user the watcher logged in itself, over its
 * own HTTPS calls with the registry's CA and client certificate.
 *
 * <p>Why: nacos-client 3.1.1's own login ({@code NacosClientAuthServiceImpl}) goes to {@code http://} (the TLS of its
 * HTTP client is JVM-wide system properties), which a Nacos HTTP port on HTTPS refuses. With {@code nacosUsername} and
 * {@code tls.http} the watcher therefore gives nacos-client no {@code username} (so that plugin does nothing) but the
 * id of a {@link Source} in {@link #SOURCE_PROPERTY}; nacos-client makes one instance of every plugin per client and
 * calls {@link #login} with that client's own properties (at start, then every few seconds), so each client reads the
 * token of its own registry only. The id is random and no credential is in the properties.
 */
public final class NacosTokenAuthPlugin extends AbstractClientAuthService {

    /** The nacos-client property that names the token source of a registry. */
    static final String SOURCE_PROPERTY = "meshbridge.nacos.tokenSource";

    /** The header (gRPC) and parameter (HTTP) Nacos's built-in auth plugin reads. */
    static final String ACCESS_TOKEN = "accessToken";

    /** What nacos-client's {@code SecurityProxy.reLogin} sets on a plugin's context when the server refused a token. */
    private static final String RELOGIN_FLAG = "reLoginFlag";

    /** Where a registry's token comes from; must be thread-safe (nacos-client calls it from its own threads). */
    @FunctionalInterface
    interface Source {
        /**
         * The current token, logging in first when it is missing or about to expire, or when {@code renew} (the
         * server refused the last one); null or empty for none.
         */
        String token(boolean renew);
    }

    private static final Map<String, Source> SOURCES = new ConcurrentHashMap<>();

    /** nacos-client's "reLoginFlag" (set by its {@code reLogin} after a refused token) lands on this context. */
    private volatile LoginIdentityContext context = new LoginIdentityContext();

    /** Makes a source reachable by the clients given the returned id in {@link #SOURCE_PROPERTY}. */
    static String register(Source source) {
        String id = UUID.randomUUID().toString();
        SOURCES.put(id, source);
        return id;
    }

    static void unregister(String id) {
        if (id != null) SOURCES.remove(id);
    }

    @Override
    public Boolean login(Properties properties) {
        String id = properties.getProperty(SOURCE_PROPERTY);
        Source source = id == null ? null : SOURCES.get(id);
        if (source == null) {
            context = new LoginIdentityContext();
            return false;
        }
        boolean renew = Boolean.parseBoolean(context.getParameter(RELOGIN_FLAG));
        String t = source.token(renew);
        LoginIdentityContext next = new LoginIdentityContext();
        if (t != null && !t.isEmpty()) next.setParameter(ACCESS_TOKEN, t);
        context = next;
        return t != null && !t.isEmpty();
    }

    @Override
    public LoginIdentityContext getLoginIdentityContext(RequestResource resource) {
        return context;
    }

    @Override
    public void shutdown() {
        context = new LoginIdentityContext();
    }
}
