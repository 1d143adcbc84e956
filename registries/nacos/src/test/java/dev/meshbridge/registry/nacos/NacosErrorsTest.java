package dev.meshbridge.registry.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.testing.TestCatalog;
import java.net.ServerSocket;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a user reads on {@code /healthz} and in the log when Nacos refuses the bridge, against {@link NacosTestServer}
 * answering as Nacos 2.5.1 and 3.1.1 do: a wrong password, a missing permission, an unreachable server.
 */
class NacosErrorsTest {

    private final TestCatalog catalog = new TestCatalog();
    private NacosTestServer server;
    private NacosWatcher watcher;
    private RegistryStatus status;

    @AfterEach
    void close() {
        if (watcher != null) watcher.close();
        if (server != null) server.close();
        catalog.close();
    }

    private String errorOf(String address, String... fields) {
        RegistryConfig config = NacosTestSupport.config("nacos-err", address, fields);
        var context = catalog.context(config);
        status = context.status();
        watcher = new NacosWatcher(config, context);
        watcher.start();
        await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
        return status.lastError();
    }

    @ParameterizedTest
    @EnumSource(NacosTestServer.Version.class)
    void wrongPassword_readsAuthenticationFailed_evenWhereNacos3AnswersHttp500(NacosTestServer.Version version) {
        server = NacosTestServer.builder()
                .version(version)
                .auth("nacos", "right")
                .start();
        String error = errorOf(
                server.address(), "nacosUsername: nacos", "nacosPassword: not-it", "nacosRefreshInterval: 200ms");
        assertThat(error)
                .startsWith("authentication failed")
                .contains("user 'nacos'")
                .contains("HTTP " + (version == NacosTestServer.Version.V3_1_1 ? 500 : 403))
                .contains("check nacosUsername and nacosPassword")
                .doesNotContain("not-it")
                .doesNotContain("null");
    }

    @Test
    void allNamespacesOnNacos3_withoutTheRightToListThem_namesThatRight() {
        server = NacosTestServer.builder()
                .version(NacosTestServer.Version.V3_1_1)
                .auth("nacos", "admin-pw")
                .reader("reader", "pw", Set.of("public"))
                .start();
        String error = errorOf(
                server.address(),
                "nacosUsername: reader",
                "nacosPassword: pw",
                "nacosNamespaceId: \"*\"",
                "nacosRefreshInterval: 200ms");
        assertThat(error)
                .startsWith("permission denied")
                .contains("list the namespaces")
                .contains("user 'reader'")
                .contains("/v3/admin/core/namespace")
                .contains("list the namespace ids in nacosNamespaceId")
                .doesNotContain("authentication failed");
    }

    @ParameterizedTest
    @EnumSource(NacosTestServer.Version.class)
    void aNamespaceTheUserMayNotRead_isNamedWithTheMissingPermission(NacosTestServer.Version version) {
        server = NacosTestServer.builder()
                .version(version)
                .auth("nacos", "admin-pw")
                .reader("reader", "pw", Set.of("public"))
                .start();
        server.createNamespace("dev");
        String error = errorOf(
                server.address(),
                "nacosUsername: reader",
                "nacosPassword: pw",
                "nacosNamespaceId: [public, dev]",
                "nacosRefreshInterval: 200ms");
        assertThat(error)
                .startsWith("permission denied")
                .contains("user 'reader'")
                .contains("namespace 'dev'")
                .contains("read permission (r)")
                .doesNotContain("authentication failed");
    }

    @Test
    void unreachableServer_namesTheCause_neverNull() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String error = errorOf(
                "127.0.0.1:" + port, "nacosUsername: nacos", "nacosPassword: pw", "nacosRefreshInterval: 200ms");
        assertThat(error)
                .contains("cannot reach Nacos at 127.0.0.1:" + port)
                .contains("connection refused")
                .doesNotContain(": null");
    }
}
