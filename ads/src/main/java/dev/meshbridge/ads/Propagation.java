package dev.meshbridge.ads;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Measures how long a change takes to reach every client that subscribes to it: from the registry event (the time the
 * producer passes with the change) to the ACK of the last subscribed client. Owned by the serving thread.
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>a producer wraps its puts and removals in {@link #begin}/{@link #end}; every subscription the change marks
 *       becomes an owner of that change ({@link #attribute});
 *   <li>a subscription hands what it owes to the response that carries it ({@link Owed#sent}); the ACK of that
 *       response, or of a later one, settles it; a NACK, a closed stream, or a change that needed no response
 *       (the client already held it) releases it without an ACK;
 *   <li>once no owner is left, the time to the last ACK is recorded, if any owner ACKed. Nothing is recorded for a
 *       change no client subscribed to;
 *   <li>memory is bounded: a subscription owes at most {@link #MAX_OWED} changes (the oldest is released beyond),
 *       and a response that is neither ACKed nor NACKed is released after {@link TypeState}'s last remembered nonces.
 * </ol>
 */
final class Propagation {

    static final int MAX_OWED = 64;
    /** Longer than this is not a measurement (a clock from another source, an event from before a restart). */
    private static final long MAX_NANOS = 3_600_000_000_000L;

    /** One change: when its event happened, how many subscriptions still owe an answer, the last ACK. */
    static final class Change {
        final long eventNanos;
        int outstanding;
        long lastAckNanos;
        boolean open = true;

        Change(long eventNanos) {
            this.eventNanos = eventNanos;
        }
    }

    private final LongSupplier nanoTime;
    private final LongConsumer record;
    private Change current;

    /**
     * @param nanoTime the clock the producers' event times come from ({@link System#nanoTime()})
     * @param record receives each change's time from event to the last ACK, in nanoseconds
     */
    Propagation(LongSupplier nanoTime, LongConsumer record) {
        this.nanoTime = nanoTime;
        this.record = record;
    }

    /** The producer starts applying a change whose first event happened at {@code eventNanos} (0: unknown). */
    void begin(long eventNanos) {
        end();
        if (eventNanos != 0) current = new Change(eventNanos);
    }

    /** The producer is done; a change no subscription took is forgotten. */
    void end() {
        Change c = current;
        current = null;
        if (c == null) return;
        c.open = false;
        settleIfDone(c);
    }

    /** A subscription was marked by the change being applied: it owes an answer. */
    void attribute(Owed owed) {
        Change c = current;
        if (c == null || owed.lastPending() == c) return;
        c.outstanding++;
        Change dropped = owed.addPending(c);
        if (dropped != null) release(dropped);
    }

    /** The subscription's ACK of a response that carried the change. */
    void acked(Change c) {
        c.lastAckNanos = nanoTime.getAsLong();
        c.outstanding--;
        settleIfDone(c);
    }

    /** The subscription will not ACK the change (NACK, stream closed, nothing needed sending). */
    void release(Change c) {
        c.outstanding--;
        settleIfDone(c);
    }

    private void settleIfDone(Change c) {
        if (c.open || c.outstanding > 0 || c.lastAckNanos == 0) return;
        long nanos = c.lastAckNanos - c.eventNanos;
        c.lastAckNanos = 0; // recorded once
        if (nanos >= 0 && nanos <= MAX_NANOS) record.accept(nanos);
    }

    /**
     * What one subscription owes: the changes pending (not sent yet) and those sent with each remembered nonce. The
     * slots follow {@link TypeState}'s ring of recent nonces.
     */
    static final class Owed {
        private final List<Change> pending = new ArrayList<>(2);
        private final List<Change>[] sent;

        @SuppressWarnings("unchecked")
        Owed(int slots) {
            sent = new List[slots];
        }

        Change lastPending() {
            return pending.isEmpty() ? null : pending.get(pending.size() - 1);
        }

        /** Returns a change dropped to keep the bound, or null. */
        Change addPending(Change c) {
            pending.add(c);
            return pending.size() > MAX_OWED ? pending.remove(0) : null;
        }

        boolean hasPending() {
            return !pending.isEmpty();
        }

        /** The pending changes went out in the response remembered in ring slot {@code slot}. */
        void sent(Propagation p, int slot) {
            List<Change> older = sent[slot];
            if (older != null) older.forEach(p::release); // never answered: forgotten with its nonce
            sent[slot] = pending.isEmpty() ? null : new ArrayList<>(pending);
            pending.clear();
        }

        /** Nothing needed sending for the pending changes (the client already held them). */
        void releasePending(Propagation p) {
            pending.forEach(p::release);
            pending.clear();
        }

        /**
         * The client ACKed the response remembered in ring slot {@code slot}: it holds what that response and every
         * earlier one carried.
         *
         * @param oldest the ring slot of the oldest remembered response
         */
        void acked(Propagation p, int slot, int oldest) {
            for (int i = 0; i < sent.length; i++) {
                int s = (oldest + i) % sent.length;
                List<Change> changes = sent[s];
                if (changes != null) changes.forEach(p::acked);
                sent[s] = null;
                if (s == slot) return;
            }
        }

        /** The client NACKed the response remembered in ring slot {@code slot}: it did not take those changes. */
        void nacked(Propagation p, int slot) {
            if (sent[slot] != null) {
                sent[slot].forEach(p::release);
                sent[slot] = null;
            }
        }

        /** The stream is gone. */
        void releaseAll(Propagation p) {
            releasePending(p);
            for (int i = 0; i < sent.length; i++) {
                if (sent[i] != null) sent[i].forEach(p::release);
                sent[i] = null;
            }
        }
    }
}
