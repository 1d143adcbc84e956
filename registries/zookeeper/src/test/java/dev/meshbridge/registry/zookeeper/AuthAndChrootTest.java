package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A chrooted tree whose nodes only a digest user may read (as Dubbo writes them when it has a registry username):
 * the watcher reads it with the right credentials, and with wrong ones reports the refusal and serves nothing.
 */
class AuthAndChrootTest {

    private static ZkServer zk;
    private static CuratorFramework owner;

    @TempDir
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        zk = new ZkServer();
        try (CuratorFramework root = zk.client()) {
            root.create().forPath("/prod");
        }
        owner = CuratorFrameworkFactory.builder()
                .connectString(zk.address() + "/prod")
                .retryPolicy(new RetryOneTime(100))
                .authorization("digest", "bridge:s3cret".getBytes(StandardCharsets.UTF_8))
                .aclProvider(new ACLProvider() {
                    @Override
                    public List<ACL> getDefaultAcl() {
                        return ZooDefs.Ids.CREATOR_ALL_ACL;
                    }

                    @Override
                    public List<ACL> getAclForPath(String path) {
                        return ZooDefs.Ids.CREATOR_ALL_ACL;
                    }
                })
                .build();
        owner.start();
        owner.blockUntilConnected(10, TimeUnit.SECONDS);
        String url = "dubbo://10.0.12.1:20880/org.demo.Secure?application=vault&interface=org.demo.Secure";
        owner.create()
                .creatingParentsIfNeeded()
                .forPath("/dubbo/org.demo.Secure/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8));
    }

    @AfterAll
    static void stop() throws Exception {
        owner.close();
        zk.close();
    }

    @Test
    void chrootAndDigestAuth_fromASecretFile_readProtectedProviders() throws Exception {
        Path secret = Files.writeString(dir.resolve("password"), "s3cret\n");
        try (WatcherHarness h = WatcherHarness.start(
                zk.address(),
                "chroot: /prod",
                "zkServicesPath: [/dubbo]",
                "username: bridge",
                "password: {file: " + secret + "}")) {
            h.awaitSyncs(1);
            assertThat(h.awaitService("org.demo.secure.dubbo", s -> true).endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.12.1");
            assertThat(h.status.errorCount()).isZero();
        }
    }

    @Test
    void wrongPassword_isReportedAsAnError_andServesNothing() throws Exception {
        try (WatcherHarness h = WatcherHarness.start(
                zk.address(), "chroot: /prod", "zkServicesPath: [/dubbo]", "username: bridge", "password: wrong")) {
            await().atMost(ZkServer.timeout()).until(() -> h.status.errorCount() > 0);
            assertThat(h.status.lastError()).contains("NoAuth").doesNotContain("wrong");
            assertThat(h.snapshot().services()).isEmpty();
        }
    }

    @Test
    void wrongPassword_showsDown_andNeverCountsAsSynced() throws Exception {
        try (WatcherHarness h = WatcherHarness.start(
                zk.address(), "chroot: /prod", "zkServicesPath: [/dubbo]", "username: bridge", "password: wrong")) {
            // the first sync is denied, and so is the next try
            await().atMost(ZkServer.timeout()).until(() -> h.status.errorCount() >= 2);

            assertThat(h.status.state()).isEqualTo(dev.meshbridge.core.spi.RegistryStatus.State.DOWN);
            assertThat(h.status.hasSynced()).isFalse();
            assertThat(h.status.lastError()).contains("denied access").doesNotContain("wrong");
        }
    }
}
