package dev.meshbridge.bench;

import dev.meshbridge.bench.baseline.BaselineServer;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.xds.EnvoyTranslator;
import java.io.IOException;

/** The same aggregator serving through java-control-plane's SimpleCache, a whole snapshot per change. */
final class BaselineTarget extends Target {

    private final BaselineServer server;

    BaselineTarget() throws IOException {
        server = new BaselineServer(new EnvoyTranslator());
        subscribeAll();
    }

    @Override
    String name() {
        return "baseline";
    }

    @Override
    void subscribeServers(ServiceAggregator aggregator) {
        aggregator.subscribe(server).join();
    }

    @Override
    int adsPort() {
        return server.port();
    }

    @Override
    int mcpPort() {
        return -1;
    }

    @Override
    void awaitServed(long sequence, long timeoutMillis) throws Exception {
        awaitSequence(server::servedSequence, sequence, timeoutMillis, "the baseline");
    }

    @Override
    String[] changeGroups() {
        return new String[] {"aggregator", "baseline"};
    }

    @Override
    void closeServers() {
        server.close();
    }
}
