package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * Real RPCs in a loop on a thread of its own, over each channel in turn, counting the answers per backend and
 * every failure.
 */
final class RpcTraffic {

    private final List<ManagedChannel> channels;
    private final AtomicLong answered = new AtomicLong();
    private final Map<String, LongAdder> byBackend = new ConcurrentHashMap<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    RpcTraffic(List<ManagedChannel> channels) {
        this.channels = List.copyOf(channels);
        thread = Thread.ofPlatform().name("e2e-traffic").daemon().start(this::run);
    }

    private void run() {
        while (running) {
            for (ManagedChannel c : channels) {
                try {
                    String who = IdentityBackend.ask(c);
                    byBackend.computeIfAbsent(who, k -> new LongAdder()).increment();
                    answered.incrementAndGet();
                } catch (StatusRuntimeException e) {
                    failures.add(e.getStatus().toString());
                }
            }
        }
    }

    /** Waits until {@code n} more RPCs have been answered. */
    void awaitMore(long n) {
        long target = answered.get() + n;
        await().atMost(Duration.ofSeconds(30)).until(() -> answered.get() >= target || !thread.isAlive());
        assertThat(thread.isAlive()).isTrue();
    }

    long answered() {
        return answered.get();
    }

    List<String> failures() {
        return List.copyOf(failures);
    }

    Map<String, Long> answeredBy() {
        return byBackend.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().sum()));
    }

    /** Stops the loop and waits for the RPC in flight. */
    void stop() throws InterruptedException {
        running = false;
        assertThat(thread.join(Duration.ofSeconds(10))).as("traffic stopped").isTrue();
    }
}
