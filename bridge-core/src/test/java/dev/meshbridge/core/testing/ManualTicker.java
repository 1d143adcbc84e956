package dev.meshbridge.core.testing;

import dev.meshbridge.core.watch.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A {@link Ticker} whose time moves only when a test says so: {@link #advance} runs every task that falls due, in due
 * order, on the calling thread (tasks only hand work to a watcher's owner thread, so the test then waits for the
 * effect with Awaitility).
 */
public final class ManualTicker implements Ticker {

    private record Task(long due, long seq, Runnable run, boolean[] cancelled) {}

    private final Instant start;
    private final PriorityQueue<Task> tasks = new PriorityQueue<>(
            (a, b) -> a.due() != b.due() ? Long.compare(a.due(), b.due()) : Long.compare(a.seq(), b.seq()));
    private long nanos;
    private long seq;

    public ManualTicker() {
        this(Instant.parse("2025-01-01T00:00:00Z"));
    }

    public ManualTicker(Instant start) {
        this.start = start;
    }

    @Override
    public synchronized long nanoTime() {
        return nanos;
    }

    @Override
    public synchronized Clock clock() {
        return Clock.fixed(start.plusNanos(nanos), ZoneOffset.UTC);
    }

    @Override
    public synchronized Cancellable schedule(Duration delay, Runnable task) {
        boolean[] cancelled = {false};
        tasks.add(new Task(nanos + Math.max(0, delay.toNanos()), seq++, task, cancelled));
        return () -> {
            synchronized (ManualTicker.this) {
                cancelled[0] = true;
            }
        };
    }

    /** Moves time forward, running every task that falls due on the way. */
    public void advance(Duration d) {
        long target;
        synchronized (this) {
            target = nanos + d.toNanos();
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.due() > target) {
                    nanos = target;
                    return;
                }
                tasks.poll();
                nanos = Math.max(nanos, next.due());
                if (next.cancelled()[0]) continue;
            }
            next.run().run();
        }
    }

    /** Tasks waiting (not cancelled). */
    public synchronized int pending() {
        int n = 0;
        for (Task t : tasks) if (!t.cancelled()[0]) n++;
        return n;
    }

    /** The delays from now of the tasks waiting, soonest first. */
    public synchronized List<Duration> pendingDelays() {
        List<Task> sorted = new ArrayList<>(tasks);
        sorted.sort((a, b) -> Long.compare(a.due(), b.due()));
        List<Duration> out = new ArrayList<>();
        for (Task t : sorted) if (!t.cancelled()[0]) out.add(Duration.ofNanos(t.due() - nanos));
        return out;
    }
}
