package dev.meshbridge.core.watch;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The lifecycle of a watcher or any started component, as Curator keeps it: {@code LATENT -> STARTED -> CLOSED} by
 * compare-and-set. {@link #start()} works once; {@link #close()} is true exactly once, so a second close does nothing.
 */
public final class Lifecycle {

    /** Where a component is in its life. */
    public enum State {
        LATENT,
        STARTED,
        CLOSED
    }

    private final String what;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);

    /** @param what names the component in the error of a second start, e.g. {@code "watcher zk-prod"} */
    public Lifecycle(String what) {
        this.what = what;
    }

    /**
     * Moves from LATENT to STARTED.
     *
     * @throws IllegalStateException when it was started or closed before
     */
    public void start() {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw new IllegalStateException(what + " was already started or closed");
        }
    }

    /** Moves to CLOSED; true only for the call that did it, so the caller releases resources once. */
    public boolean close() {
        return state.getAndSet(State.CLOSED) != State.CLOSED;
    }

    /** True between start and close. */
    public boolean isStarted() {
        return state.get() == State.STARTED;
    }

    public boolean isClosed() {
        return state.get() == State.CLOSED;
    }

    public State state() {
        return state.get();
    }
}
