package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.naming.NamingService;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.testing.TestPki;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nacosUsername}/{@code nacosPassword} with a Nacos whose HTTP API and gRPC port are both on TLS: the watcher
 * logs in over HTTPS and hands nacos-client the token through {@link NacosTokenAuthPlugin} (nacos-client's own login
 * would go to {@code http://}, which this server does not serve). The test server checks the token on every gRPC
 * request and on the HTTP lists, and records whose token each subscription carried.
 */
class NacosTlsLoginTest {

    @TempDir
    Path dir;

    private final TestPki ca = TestPki.ca("nacos-login-ca");
    private final TestCatalog catalog = new TestCatalog();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private NacosTestServer server;
    private Path caFile;

    @BeforeEach
    void start() {
        Path cert = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        ca.leaf("nacos").dns("localhost").ip("127.0.0.1").issue().write(cert, key);
        caFile = ca.writeCa(dir.resolve("ca.crt"));
        server = NacosTestServer.builder()
                .tls(cert, key, null)
                .auth("nacos", "admin-pw")
                .reader("reader", "reader-pw", Set.of("public"))
                .start();
        server.createNamespace("other");
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing.reversed()) c.close();
        catalog.close();
        if (server != null) server.close();
    }

    /** An application registering over TLS with the real nacos-client, as the admin (logged in over HTTPS here). */
    private void register(String namespace, String service, String ip) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        trust.setCertificateEntry("ca", ca.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        NacosHttpApi login = new NacosHttpApi(
                List.of(server.address()),
                "/nacos",
                Secret.literal("nacos"),
                Secret.literal("admin-pw"),
                null,
                null,
                ssl,
                Duration.ofSeconds(3),
                Clock.systemUTC());
        closing.add(login::close);
        String source = NacosTokenAuthPlugin.register(renew -> {
            synchronized (login) {
                if (renew) login.forgetToken();
                try {
                    login.login();
                } catch (Exception e) {
                    return login.token();
                }
                return login.token();
            }
        });
        closing.add(() -> NacosTokenAuthPlugin.unregister(source));

        Properties p = new Properties();
        p.setProperty("nacos.remote.client.rpc.tls.enable", "true");
        p.setProperty(
                "nacos.remote.client.rpc.tls.trustCollectionChainPath",
                caFile.toUri().toString());
        p.setProperty(NacosTokenAuthPlugin.SOURCE_PROPERTY, source);
        NamingService app = NacosTestSupport.registrant(server.address(), namespace, p);
        closing.add(() -> NacosTestSupport.shutDown(app));
        app.registerInstance(service, springCloudInstance(ip, 8080));
    }

    private WatcherContext watch(String name, String user, String password, String... more) {
        List<String> fields = new ArrayList<>(List.of(
                "nacosUsername: " + user,
                "nacosPassword: " + password,
                "nacosRefreshInterval: 200ms",
                "tls:",
                "  caFile: " + caFile));
        fields.addAll(List.of(more));
        RegistryConfig config = NacosTestSupport.config(name, server.address(), fields.toArray(String[]::new));
        WatcherContext context = catalog.context(config);
        NacosWatcher watcher = new NacosWatcher(config, context);
        closing.add(watcher);
        watcher.start();
        return context;
    }

    /** Waits until the catalog serves exactly these endpoint addresses under the host. */
    private void assertServes(String host, String... addresses) {
        assertThat(catalog.awaitService(host, s -> s.endpoints().size() == addresses.length)
                        .endpoints())
                .extracting(Endpoint::address)
                .containsExactlyInAnyOrder(addresses);
    }

    @Test
    void usernameAndPassword_overHttps_logIn_andTheWatcherSyncs() throws Exception {
        register("public", "orders", "10.61.0.1");

        // every namespace and group: the namespace and service lists are the watcher's own HTTPS calls
        WatcherContext context =
                watch("nacos-login", "nacos", "admin-pw", "nacosNamespaceId: \"*\"", "nacosGroups: [\"*\"]");

        assertServes("orders.default-group.public.nacos", "10.61.0.1");
        // nacos-client's subscription carried the token of the configured user
        assertThat(server.subscribers("public")).containsExactly("nacos");
        await().atMost(TestCatalog.TIMEOUT).until(() -> context.status().state() == RegistryStatus.State.UP);
    }

    @Test
    void aTokenTheServerNoLongerAccepts_isRenewed_andTheWatcherResyncsAfterARestart() throws Exception {
        register("public", "orders", "10.61.0.1");
        watch("nacos-renew", "nacos", "admin-pw", "nacosNamespaceId: public");
        catalog.awaitService(
                "orders.default-group.public.nacos", s -> s.endpoints().size() == 1);

        // every issued token becomes invalid, and every client reconnects: nacos-client's subscriptions are refused
        // ("token invalid!") until its plugin gets a new token from the watcher's HTTPS login
        server.forgetTokens();
        server.restart();
        await().atMost(TestCatalog.TIMEOUT)
                .until(() -> server.subscribers("public").contains("nacos"));
        register("public", "orders", "10.61.0.3");

        assertServes("orders.default-group.public.nacos", "10.61.0.1", "10.61.0.3");
    }

    @Test
    void aWrongPassword_overHttps_isNamedOnTheStatus_withoutThePassword() {
        WatcherContext context = watch("nacos-wrong", "nacos", "not-the-password");

        await().atMost(TestCatalog.TIMEOUT).until(() -> context.status().state() == RegistryStatus.State.DOWN);
        assertThat(context.status().lastError())
                .startsWith("authentication failed")
                .contains("refused the login of user 'nacos'")
                .contains("check nacosUsername and nacosPassword")
                .doesNotContain("not-the-password");
    }

    @Test
    void twoRegistries_withDifferentUsers_inOneJvm_eachUseTheirOwnToken() throws Exception {
        register("public", "orders", "10.61.0.1");
        register("other", "billing", "10.61.0.2");

        watch("nacos-reader", "reader", "reader-pw", "nacosNamespaceId: public");
        watch("nacos-admin", "nacos", "admin-pw", "nacosNamespaceId: other");

        assertServes("orders.default-group.public.nacos", "10.61.0.1");
        assertServes("billing.default-group.other.nacos", "10.61.0.2");
        // the reader may read "public" only: each registry's nacos-client carried its own user's token
        assertThat(server.subscribers("public")).containsExactly("reader");
        assertThat(server.subscribers("other")).containsExactly("nacos");
    }
}
