package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.AuthInfo;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole bridge reading a registry credential from a Kubernetes Secret ({@code password: {secret: {name, key}}}):
 * the bridge's fabric8 client reads it from {@link SecretsApiServer} (the API server's Secrets path), a real ZooKeeper holds provider znodes only a digest user
 * may read (as Dubbo writes them with a registry password). The bridge syncs with the Secret's value; after the
 * password is rotated (Secret and ACLs), the next session uses the new value and sees what only it may read; a Secret
 * without the key gives a status error on {@code /healthz} and {@code /debug/registries} naming the Secret and the key,
 * never a value, while the last good endpoints stay served.
 */
class KubernetesSecretCredentialsTest {

    private static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String NAMESPACE = "meshbridge";
    private static final String SERVICE = "org.demo.secure.dubbo";
    /** Distinctive passwords: neither may appear on any admin page. */
    private static final String FIRST =
            "Canary-K8s-" + UUID.randomUUID().toString().replace("-", "");

    private static final String SECOND =
            "Canary-K8s-" + UUID.randomUUID().toString().replace("-", "");

    @TempDir
    Path dir;

    private final AdminPages admin = new AdminPages(() -> this.bridge.adminPort());
    private final List<AutoCloseable> closing = new ArrayList<>();
    private Bridge bridge;
    private SecretsApiServer api;

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        closing.add(c);
        return c;
    }

    private void putSecret(Map<String, String> data) {
        api.put(NAMESPACE, "zk-auth", data);
    }

    private static ACL readableBy(String password) throws Exception {
        return new ACL(
                ZooDefs.Perms.READ,
                new Id("digest", DigestAuthenticationProvider.generateDigest("bridge:" + password)));
    }

    private static List<ACL> acl(String bridgePassword) throws Exception {
        return List.of(
                new ACL(ZooDefs.Perms.ALL, new Id("digest", DigestAuthenticationProvider.generateDigest("owner:o"))),
                readableBy(bridgePassword));
    }

    private static String providerPath(String address) {
        String url = "dubbo://" + address + ":20880/org.demo.Secure?application=vault&interface=org.demo.Secure";
        return "/dubbo/org.demo.Secure/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8);
    }

    /** Creates a provider znode (and its parents) that only the owner and the bridge with {@code password} may read. */
    private static void register(CuratorFramework owner, String address, String password) throws Exception {
        String path = providerPath(address);
        StringBuilder at = new StringBuilder();
        for (String part : path.substring(1).split("/")) {
            at.append('/').append(part);
            if (owner.checkExists().forPath(at.toString()) == null)
                owner.create().withACL(acl(password)).forPath(at.toString());
        }
    }

    /** The ACLs of the whole tree say: only the bridge with {@code password} may read. */
    private static void rotateAcls(CuratorFramework owner, String password) throws Exception {
        List<String> paths =
                new ArrayList<>(List.of("/dubbo", "/dubbo/org.demo.Secure", "/dubbo/org.demo.Secure/providers"));
        for (String child : owner.getChildren().forPath("/dubbo/org.demo.Secure/providers"))
            paths.add("/dubbo/org.demo.Secure/providers/" + child);
        for (String p : paths) owner.setACL().withACL(acl(password)).forPath(p);
    }

    @Test
    void zookeeperDigestPasswordFromASecret_syncs_rotatedSecretUsedAtTheNextSession_missingKeyNamedAndStateKept()
            throws Exception {
        api = closeLater(new SecretsApiServer());
        ZkServer zk = closeLater(new ZkServer());
        CuratorFramework owner = closeLater(CuratorFrameworkFactory.builder()
                .connectString(zk.address())
                .retryPolicy(new RetryOneTime(100))
                .authorization(List.of(new AuthInfo("digest", "owner:o".getBytes(StandardCharsets.UTF_8))))
                .build());
        owner.start();
        assertThat(owner.blockUntilConnected(60, TimeUnit.SECONDS)).isTrue();
        register(owner, "10.0.12.1", FIRST);
        putSecret(Map.of("password", FIRST));
        // the bridge reaches ZooKeeper through a proxy the test cuts to end the bridge's session
        TcpProxy proxy = closeLater(new TcpProxy(zk.port()));

        Path file = Files.writeString(
                dir.resolve("bridge.yaml"), """
                admin: {port: 0}
                mcp: {enabled: false}
                xds: {bindAddress: 127.0.0.1, port: 0}
                reload: {enabled: false}
                ingress:
                  kubernetes: {enabled: true, kubeconfig: %s, watchIngresses: false, events: false}
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["127.0.0.1:%d"]
                    zkServicesPath: [/dubbo]
                    sessionTimeout: 1s
                    username: bridge
                    password: {secret: {name: zk-auth, key: password}}
                """.formatted(api.kubeconfig(dir, NAMESPACE), proxy.port()));
        bridge = closeLater(Bridge.start(BridgeConfig.load(file, PROVIDERS), file, PROVIDERS));

        // 1. synced with the Secret's value (its namespace: the kubeconfig context's, the bridge's own)
        await().atMost(WAIT)
                .until(() -> admin.servedAddresses("org.demo.secure").equals(List.of("10.0.12.1")));
        assertThat(admin.registryError()).isEmpty();
        int readsBefore = api.reads();

        // 2. rotation: the Secret and the ACLs change to a new password, a provider only it may read registers
        putSecret(Map.of("password", SECOND));
        rotateAcls(owner, SECOND);
        register(owner, "10.0.12.2", SECOND);
        // the session ends (cut longer than its timeout); the next one reads the Secret again
        proxy.cut();
        await().atMost(WAIT).until(() -> admin.registryError().contains("session lost"));
        proxy.restore();
        await().atMost(WAIT)
                .until(() -> admin.servedAddresses("org.demo.secure").equals(List.of("10.0.12.1", "10.0.12.2")));
        assertThat(api.reads())
                .as("the Secret is read again for the new session")
                .isGreaterThan(readsBefore);

        // 3. the Secret loses its key: the next session cannot authenticate; named, and the last good state stays
        putSecret(Map.of("user", "bridge"));
        proxy.cut();
        // Curator opens the next session's client as soon as it gives the old one up, which reads the Secret: its
        // complaint may replace "session lost" before a poll sees it. Either shows the session ended.
        await().atMost(WAIT).until(() -> {
            String shown = admin.registryError();
            return shown.contains("session lost") || shown.contains("zk-auth has no key password");
        });
        proxy.restore();
        await().atMost(WAIT).until(() -> admin.registryError().contains("zk-auth has no key password"));
        String error = admin.registryError();
        assertThat(error)
                .contains("cannot read the ZooKeeper password from Kubernetes Secret <bridge namespace>/zk-auth key"
                        + " password")
                .contains("Kubernetes Secret meshbridge/zk-auth has no key password (keys: user)");
        HttpResponse<String> healthz = admin.get("/healthz");
        assertThat(healthz.body()).contains("zk-auth has no key password");
        assertThat(admin.servedAddresses("org.demo.secure"))
                .as("the last good endpoints stay served")
                .containsExactly("10.0.12.1", "10.0.12.2");

        // neither password ever reaches an admin page
        for (String page : List.of("/healthz", "/ready", "/debug/registries", "/debug/catalog", "/metrics", "/")) {
            assertThat(admin.get(page).body()).as(page).doesNotContain(FIRST).doesNotContain(SECOND);
        }
    }

    @Test
    void aSecretCredentialWithTheKubernetesSourceOff_isRefusedAtLoad_namingTheLineAndField() {
        String yaml = """
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["127.0.0.1:2181"]
                    username: bridge
                    password: {secret: {name: zk-auth, key: password}}
                """;
        assertThatThrownBy(() -> BridgeConfig.parse("bridge.yaml", yaml, PROVIDERS))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.yaml:6")
                .hasMessageContaining("registries[0].password")
                .hasMessageContaining("needs the Kubernetes source: set ingress.kubernetes.enabled: true");
    }

    @Test
    void aSecretReferenceThatIsNoKubernetesName_isRefusedAtLoad() {
        String yaml = """
                ingress:
                  kubernetes: {enabled: true}
                registries:
                  - type: zookeeper
                    name: zk
                    addresses: ["127.0.0.1:2181"]
                    username: bridge
                    password: {secret: {name: Zk_Auth, key: "pass word"}}
                """;
        assertThatThrownBy(() -> BridgeConfig.parse("bridge.yaml", yaml, PROVIDERS))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("registries[0].password.secret.name")
                .hasMessageContaining("registries[0].password.secret.key");
    }
}
