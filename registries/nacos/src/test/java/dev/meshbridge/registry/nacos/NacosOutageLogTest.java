package dev.meshbridge.registry.nacos;

import static dev.meshbridge.registry.nacos.NacosTestSupport.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.alibaba.nacos.api.naming.NamingService;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.JumpTicker;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A Nacos outage under the bridge's one logging configuration (bridge-core's {@code logback.xml}, the same the app
 * runs with): the registry stays unreachable while the watcher fails round after round (driven by a {@link
 * JumpTicker}) and nacos-client keeps trying to reconnect for ten seconds of real time, and the log gets a handful of
 * lines, not one per attempt.
 */
class NacosOutageLogTest {

    /** Lines an outage may log: the state change, a credentials or permission line, nacos-client's own warnings. */
    static final int MAX_LINES = 5;

    @Test
    void anOutage_logsOneLinePerStateChange_notOnePerRetry() throws Exception {
        LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = logging.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.setContext(logging);
        lines.start();
        try (NacosTestServer server = NacosTestServer.builder()
                        .pushDelay(Duration.ofMillis(20))
                        .start();
                TestCatalog catalog = new TestCatalog();
                JumpTicker ticker = new JumpTicker()) {
            NamingService app = NacosTestSupport.registrant(server.address(), "public", null, null);
            app.registerInstance("orders", springCloudInstance("10.50.0.1", 8080));
            RegistryConfig config =
                    NacosTestSupport.config("nacos-quiet", server.address(), "nacosRefreshInterval: 1s");
            WatcherContext base = catalog.context(config);
            RegistryStatus status = base.status();
            try (NacosWatcher watcher = new NacosWatcher(
                    config,
                    new WatcherContext(
                            config, base.events(), status, new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM)))) {
                watcher.start();
                catalog.awaitService(
                        "orders.default-group.public.nacos", s -> s.endpoints().size() == 1);

                root.addAppender(lines);
                server.stop();
                NacosTestSupport.shutDown(app);
                await().atMost(TestCatalog.TIMEOUT).until(() -> status.state() == RegistryStatus.State.DOWN);
                // thirty more failed rounds (each backoff jumped over), and nacos-client's own retries in real time
                long errors = status.errorCount();
                for (int i = 0; i < 30; i++) {
                    long before = status.errorCount();
                    ticker.jump(Duration.ofSeconds(11));
                    await().atMost(TestCatalog.TIMEOUT).until(() -> status.errorCount() > before);
                }
                await().during(Duration.ofSeconds(10))
                        .atMost(Duration.ofSeconds(15))
                        .until(() -> status.state() == RegistryStatus.State.DOWN);
                root.detachAppender(lines);

                Map<String, Long> byLogger = lines.list.stream()
                        .collect(Collectors.groupingBy(
                                e -> e.getLevel() + " " + e.getLoggerName(), TreeMap::new, Collectors.counting()));
                System.out.printf(
                        "Nacos outage: %d failed rounds, %d log lines %s%n",
                        status.errorCount() - errors + 1, lines.list.size(), byLogger);
                assertThat(status.errorCount() - errors).isGreaterThanOrEqualTo(30);
                assertThat(catalog.service("orders.default-group.public.nacos"))
                        .as("the last good state stays")
                        .isNotNull();
                List<String> text = lines.list.stream()
                        .map(e -> e.getLevel() + " " + e.getLoggerName() + " " + e.getFormattedMessage())
                        .toList();
                assertThat(text).as("log lines during the outage").hasSizeLessThanOrEqualTo(MAX_LINES);
            } finally {
                root.detachAppender(lines);
            }
        }
    }
}
