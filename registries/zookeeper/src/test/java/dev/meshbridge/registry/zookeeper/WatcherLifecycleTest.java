package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.testing.TestCatalog;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** Start, close and an ensemble that cannot be reached. */
class WatcherLifecycleTest {

    @Test
    void unreachableZooKeeper_isReportedDisconnected_andSendsNothing() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        try (WatcherHarness h = WatcherHarness.start("127.0.0.1:" + closedPort, "connectionTimeout: 300ms")) {
            await().atMost(TestCatalog.TIMEOUT).until(() -> h.status.state() == RegistryStatus.State.DOWN);
            assertThat(h.status.lastError()).contains("cannot connect to 127.0.0.1:" + closedPort);
            assertThat(h.status.hasSynced()).isFalse();
            assertThat(h.events.events()).isEmpty();
        }
    }

    @Test
    void close_isIdempotent_stopsTheWatcher_andAStartedWatcherCannotStartAgain() throws Exception {
        try (ZkServer zk = new ZkServer();
                WatcherHarness h = WatcherHarness.start(zk.address())) {
            h.awaitSyncs(1);
            assertThatThrownBy(h.watcher::start).isInstanceOf(IllegalStateException.class);
            h.watcher.close();
            h.watcher.close();
            assertThat(h.status.state()).isEqualTo(RegistryStatus.State.STOPPED);
            int sent = h.events.events().size();
            try (var writer = zk.client()) {
                writer.create()
                        .creatingParentsIfNeeded()
                        .forPath("/dubbo/org.demo.Late/providers/"
                                + java.net.URLEncoder.encode("dubbo://10.0.13.1:20880/org.demo.Late", "UTF-8"));
            }
            await().during(java.time.Duration.ofMillis(300))
                    .atMost(TestCatalog.TIMEOUT)
                    .until(() -> h.events.events().size() == sent);
        }
    }

    @Test
    void closeWithoutStart_doesNothingHarmful() throws Exception {
        WatcherHarness h = new WatcherHarness("type: zookeeper\nname: zk\naddresses: [127.0.0.1]");
        h.close();
        assertThat(h.status.state()).isEqualTo(RegistryStatus.State.STOPPED);
        assertThat(h.events.events()).isEmpty();
    }
}
