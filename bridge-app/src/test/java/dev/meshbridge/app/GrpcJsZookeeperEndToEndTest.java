package dev.meshbridge.app;

import org.junit.jupiter.api.BeforeAll;

/**
 * {@link ProxylessZookeeperScenarios} with Node's grpc-js and its own xDS implementation ({@code @grpc/grpc-js-xds},
 * the versions {@code src/test/node/grpc-js-client/package-lock.json} pins): the strictest of the gRPC clients here
 * (it refuses a load assignment whose localities are unset, as grpc-go and C-core do). Skipped, saying so, where no
 * {@code node} is on the PATH.
 */
class GrpcJsZookeeperEndToEndTest extends ProxylessZookeeperScenarios {

    @BeforeAll
    static void installClient() throws Exception {
        GrpcJsClient.install();
    }

    @Override
    ProxylessClient newClient(int xdsPort) throws Exception {
        return new GrpcJsClient(xdsPort);
    }
}
