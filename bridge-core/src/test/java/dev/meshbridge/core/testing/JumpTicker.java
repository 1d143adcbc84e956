package dev.meshbridge.core.testing;

import dev.meshbridge.core.watch.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Ticker} that runs in real time (so a watcher against a real client library polls, retries and refreshes as
 * it would in production) and that a test can make {@link #jump} ahead, running at once what falls due: a warm-up of a
 * minute then takes no time. Tasks run on one daemon thread of its own.
 */
public final class JumpTicker implements Ticker, AutoCloseable {

    private record Task(long due, long seq, Runnable run, boolean[] cancelled) {}

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final PriorityQueue<Task> tasks = new PriorityQueue<>(
            (a, b) -> a.due() != b.due() ? Long.compare(a.due(), b.due()) : Long.compare(a.seq(), b.seq()));
    private final Instant start = Instant.now();
    private final long origin = System.nanoTime();
    private final Thread runner;
    private long offset;
    private long seq;
    private boolean closed;

    public JumpTicker() {
        runner = Thread.ofPlatform().name("jump-ticker").daemon().start(this::run);
    }

    @Override
    public long nanoTime() {
        lock.lock();
        try {
            return System.nanoTime() - origin + offset;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Clock clock() {
        return Clock.fixed(start.plusNanos(nanoTime()), ZoneOffset.UTC);
    }

    @Override
    public Cancellable schedule(Duration delay, Runnable task) {
        boolean[] cancelled = {false};
        lock.lock();
        try {
            tasks.add(new Task(nanoTime() + Math.max(0, delay.toNanos()), seq++, task, cancelled));
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        return () -> {
            lock.lock();
            try {
                cancelled[0] = true;
            } finally {
                lock.unlock();
            }
        };
    }

    /** Moves time forward by {@code d} at once; what falls due runs now (on the ticker's thread). */
    public void jump(Duration d) {
        lock.lock();
        try {
            offset += d.toNanos();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        while (true) {
            Task next;
            lock.lock();
            try {
                while (true) {
                    if (closed) return;
                    Task head = tasks.peek();
                    long wait = head == null ? Long.MAX_VALUE : head.due() - nanoTime();
                    if (head != null && wait <= 0) {
                        next = tasks.poll();
                        break;
                    }
                    try {
                        if (head == null) changed.await();
                        else changed.awaitNanos(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (next.cancelled()[0]) continue;
            } finally {
                lock.unlock();
            }
            try {
                next.run().run();
            } catch (RuntimeException e) {
                // a task's failure is its owner's business; the ticker goes on
            }
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        runner.interrupt();
    }
}
