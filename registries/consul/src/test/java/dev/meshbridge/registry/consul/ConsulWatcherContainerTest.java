package dev.meshbridge.registry.consul;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The shared scenarios against real {@code hashicorp/consul} servers ({@link ContainerEnvironment}); skipped where
 * Docker is absent.
 */
@Testcontainers(disabledWithoutDocker = true)
class ConsulWatcherContainerTest extends ConsulWatcherScenarios {

    private static ContainerEnvironment env;

    @BeforeAll
    static void startConsul() throws Exception {
        env = new ContainerEnvironment();
    }

    @AfterAll
    static void stopConsul() {
        if (env != null) env.close();
    }

    @Override
    protected ConsulEnvironment env() {
        return env;
    }
}
