package dev.meshbridge.ads;

import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFactory;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.IoHandlerFactory;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sockets under an {@link AdsServer}: its accepting and I/O event loops and its listening channel. Linux gets
 * Netty's native epoll transport (shipped inside grpc-netty-shaded) when it loads; anything else, or a native library
 * that fails to load, gets the JDK's NIO. Both count the connections they accept and close one past {@link
 * AdsLimits#maxConnections()} at once, before gRPC gives it buffers, a handshake or a timer.
 */
final class ServerTransport {

    /** Which socket layer serves. */
    enum Kind {
        EPOLL,
        NIO;

        String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    final Kind kind;
    final EventLoopGroup boss;
    final EventLoopGroup workers;
    final ChannelFactory<ServerChannel> channels;

    private ServerTransport(Kind kind, String name, int ioThreads, AdsServer server) {
        this.kind = kind;
        IoHandlerFactory io = kind == Kind.EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.boss = new MultiThreadIoEventLoopGroup(1, daemonThreads(name + "-accept"), io);
        this.workers = new MultiThreadIoEventLoopGroup(ioThreads, daemonThreads(name + "-io"), io);
        ConnectionLimit limit = new ConnectionLimit(server);
        this.channels = () -> {
            ServerChannel ch = kind == Kind.EPOLL ? new EpollServerSocketChannel() : new NioServerSocketChannel();
            // first in the listening channel's pipeline: it sees each accepted connection before gRPC's acceptor
            ch.pipeline().addLast(limit);
            return ch;
        };
    }

    /**
     * The system property that makes every server use NIO where epoll would load ({@code -Dmeshbridge.transport=nio}):
     * the way out should the native transport misbehave on some kernel.
     */
    static final String PROPERTY = "meshbridge.transport";

    /** The transport for a server whose threads are named after {@code name}, with {@code ioThreads} I/O threads. */
    static ServerTransport open(String name, int ioThreads, AdsServer server) {
        boolean nio = "nio".equalsIgnoreCase(System.getProperty(PROPERTY, "")) || !Epoll.isAvailable();
        return new ServerTransport(nio ? Kind.NIO : Kind.EPOLL, name, ioThreads, server);
    }

    /** Which transport serves and, for NIO, why: for the start-up line. */
    String describe() {
        if (kind == Kind.EPOLL) return "epoll";
        if (Epoll.isAvailable()) return "NIO, as -D" + PROPERTY + "=nio asks";
        return "NIO; the native epoll transport did not load: " + Epoll.unavailabilityCause();
    }

    void shutdown() {
        for (EventLoopGroup g : new EventLoopGroup[] {boss, workers}) {
            g.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    private static ThreadFactory daemonThreads(String name) {
        AtomicLong n = new AtomicLong();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Reads the accepted connections off the listening channel: admits each, or closes it past the limit. */
    @ChannelHandler.Sharable
    private static final class ConnectionLimit extends ChannelInboundHandlerAdapter {
        private final AdsServer server;

        ConnectionLimit(AdsServer server) {
            this.server = server;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Channel child = (Channel) msg;
            if (server.connectionOpened()) {
                child.closeFuture().addListener(f -> server.connectionClosed());
                ctx.fireChannelRead(child);
            } else {
                child.unsafe().closeForcibly();
            }
        }
    }
}
