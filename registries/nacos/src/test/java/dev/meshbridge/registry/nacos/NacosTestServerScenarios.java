package dev.meshbridge.registry.nacos;

import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;

/** The scenarios against a fresh {@link NacosTestServer} per test. */
abstract class NacosTestServerScenarios extends NacosScenarios {

    /** Short so tests are quick; the real default (500 ms) is measured in the benchmark. */
    static final Duration PUSH_DELAY = Duration.ofMillis(20);

    private NacosTestServer server;
    private ServerHandle handle;

    abstract NacosTestServer.Version version();

    @BeforeEach
    void startServer() {
        server = NacosTestServer.builder()
                .version(version())
                .pushDelay(PUSH_DELAY)
                .start();
        handle = handle(server);
        closeAfterTest(server);
    }

    @Override
    protected ServerHandle server() {
        return handle;
    }

    @Override
    protected ServerHandle startServerWithAuth(String username, String password) {
        return handle(NacosTestServer.builder()
                .version(version())
                .pushDelay(PUSH_DELAY)
                .auth(username, password)
                .start());
    }

    private static ServerHandle handle(NacosTestServer s) {
        return new ServerHandle() {
            @Override
            public String address() {
                return s.address();
            }

            @Override
            public void createNamespace(String id) {
                s.createNamespace(id);
            }

            @Override
            public boolean pushesNewServices() {
                return s.version() == NacosTestServer.Version.V3_1_1;
            }

            @Override
            public void stop() {
                s.stop();
            }

            @Override
            public void start() {
                s.restart();
            }

            @Override
            public void close() {
                s.close();
            }
        };
    }
}
