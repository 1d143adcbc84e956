package dev.meshbridge.ads;

import java.time.Duration;
import java.util.Objects;

/**
 * How one ADS server listens and serves. Immutable; the xDS and MCP servers make theirs from their own sections of
 * {@code bridge.yaml}.
 *
 * @param server the server's name in metric names, logs and its thread's name ({@code xds}, {@code mcp})
 * @param bindAddress the address to bind (an IP literal or {@code localhost})
 * @param port the port; 0 picks a free one
 * @param keepaliveTime how often the server pings an idle client connection to find dead peers (0 turns it off)
 * @param maxConnectionAge after this long a client connection is asked to reconnect (0 never)
 * @param limits what the server grants its clients (connections, streams, names, request rate, message size)
 * @param initialSyncTimeout how long first answers are held when {@link AdsServer#markReady} is not called (0 answers
 *     at once)
 * @param minPushInterval the least time between two pushes of changes to one stream (0 pushes every change at once)
 * @param ioThreads the threads that read and write the clients' connections; 0 picks {@link #automaticIoThreads()}
 */
public record AdsOptions(
        String server,
        String bindAddress,
        int port,
        Duration keepaliveTime,
        Duration maxConnectionAge,
        AdsLimits limits,
        Duration initialSyncTimeout,
        Duration minPushInterval,
        int ioThreads) {

    /** The most I/O threads a server may be given. */
    public static final int MAX_IO_THREADS = 64;

    /** Options with the automatic number of I/O threads. */
    public AdsOptions(
            String server,
            String bindAddress,
            int port,
            Duration keepaliveTime,
            Duration maxConnectionAge,
            AdsLimits limits,
            Duration initialSyncTimeout,
            Duration minPushInterval) {
        this(
                server,
                bindAddress,
                port,
                keepaliveTime,
                maxConnectionAge,
                limits,
                initialSyncTimeout,
                minPushInterval,
                0);
    }

    public AdsOptions {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(keepaliveTime, "keepaliveTime");
        Objects.requireNonNull(maxConnectionAge, "maxConnectionAge");
        Objects.requireNonNull(initialSyncTimeout, "initialSyncTimeout");
        Objects.requireNonNull(minPushInterval, "minPushInterval");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port must be 0..65535");
        if (keepaliveTime.isNegative()
                || maxConnectionAge.isNegative()
                || initialSyncTimeout.isNegative()
                || minPushInterval.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative");
        }
        Objects.requireNonNull(limits, "limits");
        if (ioThreads < 0 || ioThreads > MAX_IO_THREADS) {
            throw new IllegalArgumentException("ioThreads must be 0..." + MAX_IO_THREADS);
        }
    }

    /**
     * The I/O threads when none are configured: half the cores, at least one. Every response is made on the server's
     * one serving thread, so the I/O threads only move bytes between it and the sockets; on 2 cores one of them fanned
     * changes out to 10,000 streams for the same CPU as two once the JVM was warm, and for less while it was not
     * (bench/README.md, the sixteenth session), where gRPC's default is twice the cores.
     */
    public static int automaticIoThreads() {
        return Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    }

    /** The I/O threads the server runs: {@link #ioThreads()}, or {@link #automaticIoThreads()} when that is 0. */
    public int ioThreadCount() {
        return ioThreads == 0 ? automaticIoThreads() : ioThreads;
    }

    /** The largest request accepted, in bytes. */
    public int maxInboundMessageSize() {
        return limits.maxInboundMessageSize();
    }
}
