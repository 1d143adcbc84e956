package dev.meshbridge.mcp;

import java.util.concurrent.CompletableFuture;

/**
 * The benchmark's window on the MCP server's package-private views (as {@code McpPushBenchmark} uses them): when the
 * server's thread has done everything queued so far.
 */
public final class McpProbe {

    private McpProbe() {}

    /** Completes once the server's thread has done everything queued before this call. */
    public static CompletableFuture<Void> idle(McpServer server) {
        return server.idle();
    }
}
