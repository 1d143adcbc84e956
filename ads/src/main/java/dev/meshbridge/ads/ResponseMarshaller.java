package dev.meshbridge.ads;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Writes the server's responses into gRPC's frames through one scratch buffer per sending thread, where protobuf's
 * {@code writeTo(OutputStream)} allocates a buffer of the message's size for every message and drops it.
 *
 * <p>One change to 10,000 streams is 10,000 responses serialized on the serving thread; that buffer was four fifths
 * of what the serving thread allocated (JFR, many-streams phase of the benchmark), and the garbage brings young
 * collections, whose pauses stop every stream's push. The bytes on the wire are the same (protobuf's serialization
 * of the same message); a message larger than the scratch buffer is written as before. Parsing is the delegate's.
 *
 * <p>It also writes the engine's {@link SotwResponse}, which {@link AdsStream} passes through the stream's observer in
 * place of the {@code DiscoveryResponse} it stands for (gRPC hands the message to this marshaller untouched).
 */
final class ResponseMarshaller<T> implements MethodDescriptor.Marshaller<T> {

    /** The largest message written through the scratch buffer (a change's response is about 0.5 to 2 KB). */
    static final int SCRATCH_BYTES = 16 * 1024;

    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[SCRATCH_BYTES]);

    private final MethodDescriptor.Marshaller<T> delegate;

    private ResponseMarshaller(MethodDescriptor.Marshaller<T> delegate) {
        this.delegate = delegate;
    }

    /** The service with every method's responses written through the scratch buffer; requests as before. */
    static ServerServiceDefinition wrap(ServerServiceDefinition service) {
        io.grpc.ServiceDescriptor old = service.getServiceDescriptor();
        java.util.List<ServerMethodDefinition<?, ?>> methods = new java.util.ArrayList<>();
        io.grpc.ServiceDescriptor.Builder d =
                io.grpc.ServiceDescriptor.newBuilder(old.getName()).setSchemaDescriptor(old.getSchemaDescriptor());
        for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
            ServerMethodDefinition<?, ?> w = wrap(m);
            methods.add(w);
            d.addMethod(w.getMethodDescriptor());
        }
        ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(d.build());
        for (ServerMethodDefinition<?, ?> m : methods) b.addMethod(m);
        return b.build();
    }

    private static <Q, R> ServerMethodDefinition<Q, R> wrap(ServerMethodDefinition<Q, R> m) {
        MethodDescriptor<Q, R> d = m.getMethodDescriptor();
        MethodDescriptor<Q, R> scratch = d.toBuilder()
                .setResponseMarshaller(new ResponseMarshaller<>(d.getResponseMarshaller()))
                .build();
        return ServerMethodDefinition.create(scratch, m.getServerCallHandler());
    }

    @Override
    public InputStream stream(T value) {
        if (value instanceof MessageLite message) return new Serialized(message, null, message.getSerializedSize());
        if (value instanceof SotwResponse response) return new Serialized(null, response, response.serializedSize());
        return delegate.stream(value);
    }

    @Override
    public T parse(InputStream stream) {
        return delegate.parse(stream);
    }

    /**
     * A message on its way into a frame: drained once by gRPC's framer (through the scratch buffer when it fits), or
     * read as bytes by anything else.
     */
    private static final class Serialized extends InputStream implements Drainable, KnownLength {

        /** One of the two is set: a protobuf message, or the engine's SotwResponse. */
        private final MessageLite message;

        private final SotwResponse response;
        private final int size;
        /** False once drained or turned into {@link #bytes}. */
        private boolean pending = true;

        private ByteArrayInputStream bytes;

        Serialized(MessageLite message, SotwResponse response, int size) {
            this.message = message;
            this.response = response;
            this.size = size;
        }

        private void write(CodedOutputStream out) throws IOException {
            if (message != null) message.writeTo(out);
            else response.writeTo(out);
        }

        private void write(OutputStream out) throws IOException {
            if (message != null) message.writeTo(out);
            else response.writeTo(out);
        }

        private byte[] toByteArray() throws IOException {
            return message != null ? message.toByteArray() : response.toByteArray();
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            if (!pending) {
                // read partly already: the rest
                int n = bytes == null ? 0 : bytes.available();
                if (bytes != null) bytes.transferTo(target);
                return n;
            }
            pending = false;
            if (size > SCRATCH_BYTES) {
                write(target);
                return size;
            }
            byte[] buf = SCRATCH.get();
            CodedOutputStream out = CodedOutputStream.newInstance(buf, 0, size);
            write(out);
            out.checkNoSpaceLeft();
            target.write(buf, 0, size);
            return size;
        }

        private ByteArrayInputStream bytes() {
            if (bytes == null) {
                byte[] all;
                try {
                    all = pending ? toByteArray() : new byte[0];
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                bytes = new ByteArrayInputStream(all);
                pending = false;
            }
            return bytes;
        }

        @Override
        public int read() {
            return bytes().read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return bytes().read(b, off, len);
        }

        @Override
        public int available() {
            if (pending) return size;
            return bytes == null ? 0 : bytes.available();
        }
    }
}
