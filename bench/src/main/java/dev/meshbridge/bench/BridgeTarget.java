package dev.meshbridge.bench;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.mcp.McpOptions;
import dev.meshbridge.mcp.McpServer;
import dev.meshbridge.xds.XdsOptions;
import dev.meshbridge.xds.XdsServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;

/** The bridge as bridge-app wires it: the aggregator, the xDS server and the MCP server, default options. */
final class BridgeTarget extends Target {

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final XdsServer xds;
    private final McpServer mcp;

    BridgeTarget() throws IOException {
        // -Dbench.xdsIoThreads: the xDS server's I/O threads (xds.ioThreads), its automatic count when unset
        xds = new XdsServer(
                        XdsOptions.loopbackEphemeral().withIoThreads(Integer.getInteger("bench.xdsIoThreads", 0)),
                        meters)
                .start();
        mcp = new McpServer(
                        McpOptions.builder().bindAddress("127.0.0.1").port(0).build(), meters)
                .start();
        subscribeAll();
    }

    @Override
    String name() {
        return "bridge";
    }

    @Override
    void subscribeServers(ServiceAggregator aggregator) {
        aggregator.subscribe(xds).join();
        aggregator.subscribe(mcp).join();
    }

    @Override
    int adsPort() {
        return xds.port();
    }

    @Override
    int mcpPort() {
        return mcp.port();
    }

    @Override
    void awaitServed(long sequence, long timeoutMillis) throws Exception {
        awaitSequence(xds::servedSequence, sequence, timeoutMillis, "the xDS server");
        // polled, as the xDS server's: waiting with mcp.idle() queued two tasks on the MCP thread per change, whose
        // wake-ups counted in the change's CPU although no running bridge has them
        awaitSequence(mcp::servedSequence, sequence, timeoutMillis, "the MCP server");
    }

    @Override
    void awaitTaken(long sequence, long timeoutMillis) throws Exception {
        awaitSequence(xds::servedSequence, sequence, timeoutMillis, "the xDS server");
        awaitSequence(mcp::takenSequence, sequence, timeoutMillis, "the MCP server");
    }

    @Override
    void applyPaced(long timeoutMillis) throws Exception {
        mcp.idle().get(timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    @Override
    String[] changeGroups() {
        return new String[] {"aggregator", "xds", "mcp"};
    }

    @Override
    void catalogReady() {
        xds.markCatalogReady();
        mcp.markCatalogReady();
    }

    @Override
    void closeServers() {
        mcp.close();
        xds.close();
    }

    @Override
    java.util.function.LongSupplier xdsServed() {
        return xds::servedSequence;
    }

    @Override
    java.util.concurrent.CompletableFuture<Void> xdsIdle() {
        // the snapshots handed so far applied and their pushes handed to gRPC; not the ACKs queued meanwhile, which
        // the serving thread handles after the producers' tasks
        return xds.pushed();
    }
}
