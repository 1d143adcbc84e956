package dev.meshbridge.ads;

import com.google.protobuf.Any;

/**
 * One resource as the engine serves it, serialized once: every client that receives it gets these bytes.
 *
 * <p>Contract for implementations (records are the natural fit):
 *
 * <ol>
 *   <li>{@link #versionHash()} is a content hash of the name and the bytes: equal content, equal version, in every
 *       replica; never 0 or {@code Long.MIN_VALUE} (reserved for "absent" and "unknown");
 *   <li>{@link #delta()} is the same resource wrapped for Delta responses, with the same name and
 *       {@code Hash64.toHex(versionHash())} as version;
 *   <li>it is immutable.
 * </ol>
 */
public interface Resource {

    String name();

    long versionHash();

    /** The body as it goes into a state-of-the-world response. */
    Any any();

    /** The body as it goes into a Delta response. */
    io.envoyproxy.envoy.service.discovery.v3.Resource delta();

    /** False for a resource a client gets only by naming it (never through a wildcard subscription). */
    boolean wildcard();

    /**
     * The held form of {@link #any()}'s value, packed ({@link PackedBytes}) with {@link #packedWith()}, for a resource
     * held that way: a state-of-the-world response then unpacks it straight into the transport's buffers when it is
     * written, and never makes the Any (a whole-set push to istiod is 197 MB of them at a million endpoints). Null (the
     * default): the response carries {@link #any()}. The array is never modified.
     */
    default byte[] packedValue() {
        return null;
    }

    /** The dictionary {@link #packedValue()} is packed with. */
    default PackedBytes.Dictionary packedWith() {
        return null;
    }

    /** The type URL of {@link #any()} (read without making it when the value is {@linkplain #packedValue packed}). */
    default String anyTypeUrl() {
        return any().getTypeUrl();
    }
}
