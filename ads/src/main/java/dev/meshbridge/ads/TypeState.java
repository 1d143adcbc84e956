package dev.meshbridge.ads;

import dev.meshbridge.core.util.Hash64;
import java.time.Instant;
import java.util.BitSet;

/**
 * What one stream has asked for and been sent of one type. Owned by the server's thread.
 *
 * <p>The invariant that keeps it small: for every subscribed resource that is not in {@link #pending}, the client
 * has been sent the index's current version. {@link #pending} holds, for each resource that changed (or was newly
 * subscribed) since, the version the client was last sent ({@link TypeIndex#ABSENT} or {@link TypeIndex#UNKNOWN}
 * when it has none or we do not know).
 */
final class TypeState {

    /** A NACK as the client sent it. */
    record Nack(String version, String nonce, String message, Instant at) {}

    private static final int REMEMBERED_NONCES = 4;

    final TypeIndex index;
    final AdsStream stream;
    /** The type URL the client asked for (one of the type's, or one the server does not serve). */
    final String typeUrl;
    /** True when the server does not serve the type URL: the subscription is answered, always empty. */
    final boolean unknown;

    boolean requested;
    /** Read freely; changed only through {@link #wildcard(boolean)}, which keeps {@link Subscribers} in step. */
    boolean wildcard;
    /** SotW only: the client used the legacy form (no names in its first request). */
    boolean legacyWildcard;
    /** SotW only: a hash of the resource names of the last request, to skip unchanged subscriptions cheaply. */
    long namesHash;

    /** Read freely; changed only through {@link #name}, {@link #names(BitSet)} and {@link #unsubscribeAll()}. */
    final BitSet names = new BitSet();

    final IntLongMap pending = new IntLongMap();
    /** Sum of {@link TypeIndex#contribution} over what the client has been sent of its subscription. */
    long viewSum;
    /** A response is owed even when nothing changed (first request, a full-state subscription change). */
    boolean respond;

    String lastSentVersion;
    String lastSentNonce;
    Instant lastSentAt;
    String lastAckedVersion;
    Instant lastAckedAt;
    boolean lastSentAcked;
    Nack lastNack;
    long responses;
    long nacks;
    /** The changes this subscription owes an ACK for, for the event-to-ACK time ({@link Propagation}). */
    final Propagation.Owed owed = new Propagation.Owed(REMEMBERED_NONCES);

    /**
     * The recent nonces as numbers ({@link AdsStream#nonceNumber}), matched against an ACK's nonce without touching
     * the strings: an ACK of a change to 10,000 streams finds its response in one array per stream, not in four strings
     * scattered over the heap (comparing them was about 8% of the serving thread's samples).
     */
    private final long[] recentNonces = new long[REMEMBERED_NONCES];

    private final String[] recentVersions = new String[REMEMBERED_NONCES];
    private int recent;
    /** {@link #lastSentNonce} as a number; 0 when none. */
    private long lastSentNonceNumber;

    TypeState(TypeIndex index, AdsStream stream, String typeUrl, boolean unknown) {
        this.index = index;
        this.stream = stream;
        this.typeUrl = typeUrl;
        this.unknown = unknown;
    }

    void wildcard(boolean on) {
        if (on == wildcard) return;
        wildcard = on;
        index.subscribers.wildcard(this, on);
    }

    /** Adds the resource of this id to, or removes it from, the names subscribed to. */
    void name(int id, boolean on) {
        if (names.get(id) == on) return;
        names.set(id, on);
        index.subscribers.named(this, id, on);
    }

    /** Replaces the names subscribed to. */
    void names(BitSet next) {
        for (int id = names.nextSetBit(0); id >= 0; id = names.nextSetBit(id + 1)) {
            if (!next.get(id)) index.subscribers.named(this, id, false);
        }
        for (int id = next.nextSetBit(0); id >= 0; id = next.nextSetBit(id + 1)) {
            if (!names.get(id)) index.subscribers.named(this, id, true);
        }
        names.clear();
        names.or(next);
    }

    /** The stream is gone: its subscription leaves {@link Subscribers}, its pending changes let go of their ids. */
    void unsubscribeAll() {
        wildcard(false);
        names(new BitSet());
        clearPending();
    }

    /** Takes one entry off {@link #pending}. */
    void unpend(int id) {
        if (pending.remove(id)) index.release(id);
    }

    /** Empties {@link #pending}. */
    void clearPending() {
        if (pending.isEmpty()) return;
        pending.forEach((id, was) -> index.release(id));
        pending.clear();
    }

    ResourceType type() {
        return index.type;
    }

    /** Whether the subscription includes the resource of this id (with its wildcard visibility). */
    boolean subscribes(int id, boolean wildcardVisible) {
        return (wildcard && wildcardVisible) || names.get(id);
    }

    boolean subscribes(int id) {
        return subscribes(id, index.wildcardVisible(id, stream.role));
    }

    /** The version of the resource this subscription should hold now: the current one, or absent when not included. */
    long currentVersion(int id) {
        return subscribes(id) ? index.version(id) : TypeIndex.ABSENT;
    }

    /** The version the client was last sent of a subscribed resource. */
    long sentVersion(int id) {
        return pending.containsKey(id) ? pending.get(id, TypeIndex.ABSENT) : index.version(id);
    }

    /** A subscribed resource changed from {@code oldVersion}: the client still has that one, unless already pending. */
    void changed(int id, long oldVersion) {
        if (pending.containsKey(id)) return;
        pending.put(id, oldVersion);
        index.hold(id);
    }

    /** The resource joins the subscription; the client has {@code clientVersion} of it. */
    void added(int id, long clientVersion) {
        if (pending.containsKey(id)) return;
        long current = currentVersion(id);
        if (clientVersion == current && current != TypeIndex.ABSENT) {
            viewSum += index.contribution(id, current);
        } else {
            pending.put(id, clientVersion);
            index.hold(id);
            viewSum += index.contribution(id, clientVersion);
        }
    }

    /** The resource leaves the subscription. */
    void dropped(int id) {
        viewSum -= index.contribution(id, sentVersion(id));
        unpend(id);
    }

    /** The client now holds the current version of {@code id} (called as it is sent). */
    void sent(int id, long wasVersion) {
        viewSum += index.contribution(id, currentVersion(id)) - index.contribution(id, wasVersion);
    }

    String viewVersion() {
        return versionOf(viewSum);
    }

    /** The version string of a view sum: 16 hex digits, equal in every replica for equal content. */
    static String versionOf(long viewSum) {
        return Hash64.toHex(Hash64.mix(viewSum));
    }

    /** The version hash of a resource version string, {@link TypeIndex#ABSENT} when it is not one of ours. */
    static long parseVersion(String version) {
        if (version.length() != 16) return TypeIndex.ABSENT;
        try {
            return Long.parseUnsignedLong(version, 16);
        } catch (NumberFormatException e) {
            return TypeIndex.ABSENT;
        }
    }

    /** A reconnecting client holds exactly what we would send: count it as sent and acknowledged. */
    void resumed(String version, Instant at) {
        lastSentNonce = "";
        lastSentNonceNumber = 0;
        lastSentVersion = version;
        lastSentAt = at;
        lastAckedVersion = version;
        lastAckedAt = at;
        lastSentAcked = true;
    }

    /** Returns the ring slot the nonce is remembered in. */
    int recordSent(String nonce, String version, Instant at) {
        lastSentNonce = nonce;
        lastSentNonceNumber = AdsStream.nonceNumber(nonce);
        lastSentVersion = version;
        lastSentAt = at;
        lastSentAcked = false;
        responses++;
        int slot = recent % REMEMBERED_NONCES;
        recentNonces[slot] = lastSentNonceNumber;
        recentVersions[slot] = version;
        recent++;
        return slot;
    }

    /** The ring slot of the oldest remembered response (the next to be overwritten). */
    int oldestSlot() {
        return recent % REMEMBERED_NONCES;
    }

    /** The ring slot of a recently sent response, by its nonce number; -1 when too old or not one of ours. */
    int slotOfNonce(long nonceNumber) {
        if (nonceNumber <= 0) return -1;
        for (int i = 0; i < REMEMBERED_NONCES; i++) {
            if (recentNonces[i] == nonceNumber) return i;
        }
        return -1;
    }

    /** The version sent in a ring slot ({@link #slotOfNonce}). */
    String versionInSlot(int slot) {
        return recentVersions[slot];
    }

    /** Whether a nonce number is that of the last response sent. */
    boolean isLastSent(long nonceNumber) {
        return nonceNumber > 0 && nonceNumber == lastSentNonceNumber;
    }

    void recordAck(long nonceNumber, String version, Instant at) {
        if (version != null) lastAckedVersion = version;
        lastAckedAt = at;
        if (isLastSent(nonceNumber)) lastSentAcked = true;
    }

    /** The longest NACK message a stream keeps. */
    static final int MAX_NACK_TEXT = 4096;

    void recordNack(String nonce, String version, String message, Instant at) {
        // the client's error detail is kept for the debug pages, bounded (a client writes what it likes there)
        lastNack = new Nack(version, nonce, Printable.cut(message, MAX_NACK_TEXT), at);
        nacks++;
    }

    /** SYNCED, NOT SENT or STALE, as {@code istioctl proxy-status} shows them. */
    String status() {
        if (lastSentNonce == null) return "NOT SENT";
        if (lastSentAcked && pending.isEmpty() && !respond) return "SYNCED";
        return "STALE";
    }
}
