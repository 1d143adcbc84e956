package dev.meshbridge.registry.zookeeper;

import static dev.meshbridge.registry.zookeeper.DubboInterfaceLevelTest.provider;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.testing.TestCatalog;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A ZooKeeper outage under the bridge's one logging configuration (bridge-core's {@code logback.xml}): the watcher's
 * connection is cut for fifteen seconds, Curator and the ZooKeeper client retry all along, and the log gets a handful
 * of lines.
 */
class ZookeeperOutageLogTest {

    static final int MAX_LINES = 5;

    @Test
    void anOutage_logsOneLinePerStateChange_notOnePerRetry() throws Exception {
        LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = logging.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.setContext(logging);
        lines.start();
        try (ZkServer zk = new ZkServer();
                DubboRegistryWriter dubbo = new DubboRegistryWriter(zk.address());
                TcpProxy proxy = new TcpProxy(zk.port());
                WatcherHarness h = WatcherHarness.start(proxy.address(), "sessionTimeout: 5s")) {
            dubbo.register(provider("dubbo", "10.60.0.1:20880", "org.demo.Quiet", ""));
            h.awaitService("org.demo.quiet.dubbo", s -> s.endpoints().size() == 1);

            root.addAppender(lines);
            try {
                proxy.cut();
                await().atMost(TestCatalog.TIMEOUT).until(() -> h.status.state() == RegistryStatus.State.DOWN);
                // the session expires meanwhile; the clients keep trying
                await().during(Duration.ofSeconds(15))
                        .atMost(Duration.ofSeconds(20))
                        .until(() -> h.status.state() == RegistryStatus.State.DOWN);
            } finally {
                root.detachAppender(lines);
            }
            Map<String, Long> byLogger = lines.list.stream()
                    .collect(Collectors.groupingBy(
                            e -> e.getLevel() + " " + e.getLoggerName(), TreeMap::new, Collectors.counting()));
            System.out.printf("ZooKeeper outage of 15 s: %d log lines %s%n", lines.list.size(), byLogger);
            assertThat(h.snapshot().service("org.demo.quiet.dubbo")).isNotNull();
            assertThat(lines.list).as("log lines during the outage").hasSizeLessThanOrEqualTo(MAX_LINES);
        }
    }
}
