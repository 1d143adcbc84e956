package dev.meshbridge.ads;

import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import java.util.List;

/**
 * The listening socket of an {@link AdsServer}: counts the connections it accepts and closes one past {@link
 * AdsLimits#maxConnections()} at once, before gRPC gives it buffers, a handshake or a timer.
 */
final class LimitedServerChannel extends NioServerSocketChannel {

    private final AdsServer server;

    LimitedServerChannel(AdsServer server) {
        this.server = server;
    }

    @Override
    protected int doReadMessages(List<Object> buf) throws Exception {
        int from = buf.size();
        int read = super.doReadMessages(buf);
        for (int i = buf.size() - 1; i >= from; i--) {
            Channel child = (Channel) buf.get(i);
            if (server.connectionOpened()) {
                child.closeFuture().addListener(f -> server.connectionClosed());
            } else {
                buf.remove(i);
                read--;
                child.unsafe().closeForcibly();
            }
        }
        return read;
    }
}
