package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingService;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Access-key signing, differentially: the test server checks every signature with one {@link NacosSignatureVerifier},
 * whether the real nacos-client sent it (gRPC headers of its naming requests: an application registering, the
 * watcher's subscriptions and service lists) or the watcher's own HTTP calls did (the service list of
 * {@code nacosGroups: ["*"]}). A signature made with a wrong secret is refused, and the registry says which keys to
 * check, never the secret.
 */
class NacosAccessKeyTest {

    private static final String AK = "LTAI-meshbridge-test";
    private static final String SK = "sk-Zq8-right-secret";
    private static final String WRONG = "sk-Wr0ng-secret-canary";
    private static final String HOST = "orders.default-group.public.nacos";

    private final TestCatalog catalog = new TestCatalog();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private NacosTestServer server;

    @BeforeEach
    void start() throws Exception {
        server = NacosTestServer.builder().accessKey(AK, SK).start();
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.ACCESS_KEY, AK);
        p.setProperty(PropertyKeyConst.SECRET_KEY, SK);
        NamingService app = NacosTestSupport.registrant(server.address(), "public", p);
        closing.add(() -> NacosTestSupport.shutDown(app));
        app.registerInstance("orders", springCloudInstance("10.61.0.1", 8080));
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing.reversed()) c.close();
        catalog.close();
        server.close();
    }

    private WatcherContext watch(String name, String secret, boolean allGroups) {
        List<String> fields = new ArrayList<>(
                List.of("nacosRefreshInterval: 200ms", "nacosAccessKey: " + AK, "nacosSecretKey: \"" + secret + "\""));
        // every namespace and group: the namespace list, then the service lists, are the watcher's own HTTP calls
        if (allGroups) fields.addAll(List.of("nacosNamespaceId: \"*\"", "nacosGroups: [\"*\"]"));
        RegistryConfig config = NacosTestSupport.config(name, server.address(), fields.toArray(String[]::new));
        WatcherContext context = catalog.context(config);
        NacosWatcher watcher = new NacosWatcher(config, context);
        closing.add(watcher);
        watcher.start();
        return context;
    }

    @Test
    void nacosClientsSignatures_andTheWatchersHttpSignatures_passTheSameVerifier() {
        NacosSignatureVerifier verifier = server.signatures();
        assertThat(verifier.accepted("grpc"))
                .as("the application's signed registration")
                .isPositive();

        watch("nacos-ak", SK, true);

        assertThat(catalog.awaitService(HOST, s -> s.endpoints().size() == 1).endpoints())
                .extracting(Endpoint::address)
                .containsExactly("10.61.0.1");
        assertThat(verifier.accepted("http"))
                .as("the watcher's signed service lists")
                .isPositive();
        assertThat(verifier.refused("http")).isZero();
        assertThat(verifier.refused("grpc")).isZero();
    }

    @Test
    void aWrongSecret_onTheHttpList_isRefused_withTheKeysToCheckNamed() {
        WatcherContext context = watch("nacos-ak-wrong", WRONG, true);

        await().atMost(TestCatalog.TIMEOUT).until(() -> context.status().lastError() != null);
        assertThat(context.status().lastError())
                .contains("signature mismatch!")
                .contains("check nacosAccessKey and nacosSecretKey")
                .doesNotContain(WRONG);
        assertThat(context.status().state()).isNotEqualTo(RegistryStatus.State.UP);
        assertThat(server.signatures().refused("http")).isPositive();
        assertThat(catalog.snapshot().services()).isEmpty();
    }

    @Test
    void aWrongSecret_onNacosClientsGrpcList_isRefused_withTheKeysToCheckNamed() {
        WatcherContext context = watch("nacos-ak-wrong-grpc", WRONG, false);

        await().atMost(TestCatalog.TIMEOUT).until(() -> context.status().lastError() != null);
        assertThat(context.status().lastError())
                .contains("signature mismatch!")
                .contains("check nacosAccessKey and nacosSecretKey")
                .doesNotContain(WRONG);
        assertThat(server.signatures().refused("grpc")).isPositive();
        assertThat(catalog.snapshot().services()).isEmpty();
    }

    @Test
    void theWatchersSignature_isNacosClientsSignUtil_onTheSameData() throws Exception {
        java.util.Random random = new java.util.Random(19);
        for (int i = 0; i < 200; i++) {
            String data = random.nextLong(1, Long.MAX_VALUE) + (i % 2 == 0 ? "" : "@@GROUP_" + i + "@@svc-" + i);
            String key = Long.toString(random.nextLong(), 36) + "密钥-" + i;
            assertThat(NacosHttpApi.sign(data, key))
                    .as("data %s", data)
                    .isEqualTo(com.alibaba.nacos.client.auth.ram.utils.SignUtil.sign(data, key));
        }
    }
}
