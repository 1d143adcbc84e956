package dev.meshbridge.xds;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes protobuf wire format by hand, for the resources of a fixed shape the translator makes per service (EDS
 * clusters, API listeners, proxyless routes): the bytes deterministic serialization of the same message gives (fields
 * in number order, proto3 defaults left out, sub-messages always written once set), without building the message.
 * The message path stays the reference: the tests compare both byte for byte.
 */
final class ProtoWriter {

    private static final int VARINT = 0;
    private static final int LENGTH_DELIMITED = 2;

    private byte[] buf;
    private int size;

    ProtoWriter(int capacity) {
        buf = new byte[Math.max(16, capacity)];
    }

    /** A string field; an empty string is left out, as proto3 does. */
    ProtoWriter string(int field, String value) {
        if (value.isEmpty()) return this;
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        return bytes(field, utf8, utf8.length);
    }

    /** A string field written even when empty (a map entry's key or value, or a oneof member). */
    ProtoWriter stringAlways(int field, String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        return bytes(field, utf8, utf8.length);
    }

    /** An enum or integer field; 0 is left out, as proto3 does. */
    ProtoWriter varint(int field, long value) {
        if (value == 0) return this;
        tag(field, VARINT);
        return varint(value);
    }

    /** A sub-message field (written even when empty: it is set). */
    ProtoWriter message(int field, ProtoWriter message) {
        return bytes(field, message.buf, message.size);
    }

    /** A sub-message field from its serialized bytes. */
    ProtoWriter message(int field, byte[] message) {
        return bytes(field, message, message.length);
    }

    /**
     * The head of a length-delimited field whose {@code length} bytes the caller writes next (with {@link #raw} and
     * the field methods), so a sub-message of known size needs no writer of its own.
     */
    ProtoWriter head(int field, int length) {
        tag(field, LENGTH_DELIMITED);
        return varint(length);
    }

    /** The size of a length-delimited field of {@code length} bytes: tag, length and the bytes. */
    static int fieldSize(int field, int length) {
        return varintSize((long) field << 3) + varintSize(length) + length;
    }

    /** The size of a varint field as {@link #varint(int, long)} writes it: none for 0. */
    static int varintFieldSize(int field, long value) {
        return value == 0 ? 0 : varintSize((long) field << 3) + varintSize(value);
    }

    static int varintSize(long value) {
        int n = 1;
        while ((value & ~0x7FL) != 0) {
            value >>>= 7;
            n++;
        }
        return n;
    }

    /** Bytes already in wire format (whole fields). */
    ProtoWriter raw(byte[] fields) {
        ensure(fields.length);
        System.arraycopy(fields, 0, buf, size, fields.length);
        size += fields.length;
        return this;
    }

    byte[] toByteArray() {
        return Arrays.copyOf(buf, size);
    }

    private ProtoWriter bytes(int field, byte[] value, int length) {
        tag(field, LENGTH_DELIMITED);
        varint(length);
        ensure(length);
        System.arraycopy(value, 0, buf, size, length);
        size += length;
        return this;
    }

    private void tag(int field, int wireType) {
        varint(((long) field << 3) | wireType);
    }

    private ProtoWriter varint(long value) {
        ensure(10);
        while ((value & ~0x7FL) != 0) {
            buf[size++] = (byte) ((value & 0x7F) | 0x80);
            value >>>= 7;
        }
        buf[size++] = (byte) value;
        return this;
    }

    private void ensure(int more) {
        if (size + more > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
    }
}
