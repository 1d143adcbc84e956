package dev.meshbridge.core.watch;

import dev.meshbridge.core.config.HostNamePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The shape every watcher has, in one place: its {@link Lifecycle}, the {@link SerialExecutor} that owns its state
 * (with the injected {@link Ticker}), the {@link HostResolver} for instances registered under host names, and the
 * {@link ShardPublisher} every outgoing change passes through (with the registry's removal rules: re-registration
 * window, warm-up after a reconnect, deletion guard).
 *
 * <p>Use: create in the watcher's constructor with the type's default warm-up; {@link #start()} in {@code start()};
 * {@link #reconnected(String)} when the registry is back after an outage or restarted; {@link
 * ShardPublisher#onFullRead} to say how the registry is read in full; in {@code close()}, when {@link #beginClose()} is
 * true, stop the registry client, then {@link #close()}.
 */
public final class WatcherKit implements AutoCloseable {

    private final WatcherContext context;
    private final Lifecycle lifecycle;
    private final SerialExecutor loop;
    private final ExecutorService lookups;
    private final HostResolver resolver;
    private final ShardPublisher publisher;
    private final Duration warmUp;

    /**
     * @param threadName the name of the owner thread, e.g. {@code meshbridge-zk-prod}
     * @param defaultWarmUp the registry type's warm-up, used unless the entry sets {@code warmUp}: long enough for its
     *     clients to re-register after the server is back (derived from the type's heartbeat or session rules)
     */
    public WatcherKit(WatcherContext context, String threadName, Duration defaultWarmUp) {
        this.context = context;
        RegistryConfig config = context.config();
        this.lifecycle = new Lifecycle(config.type() + " watcher " + config.name());
        this.loop = new SerialExecutor(threadName, context.runtime().ticker(), context.status());
        HostNamePolicy policy = config.hostNames();
        if (policy.mode() == HostNamePolicy.Mode.RESOLVE) {
            this.lookups = Executors.newThreadPerTaskExecutor(
                    Thread.ofVirtual().name(threadName + "-dns-", 0).factory());
            this.resolver = new HostResolver(
                    loop,
                    context.runtime().lookup(),
                    lookups,
                    policy.refresh(),
                    name -> publisher().hostNameChanged(name));
        } else {
            this.lookups = null;
            this.resolver = null;
        }
        this.warmUp = config.removals().warmUpOr(defaultWarmUp);
        this.publisher = new ShardPublisher(
                config.name(),
                context.events(),
                context.status(),
                policy,
                resolver,
                lifecycle::isStarted,
                loop,
                config.removals(),
                warmUp,
                config.limits());
        context.status().onRelease(() -> loop.execute(publisher::release));
        context.status().warmUp(warmUp);
    }

    /** The warm-up in force. */
    public Duration warmUp() {
        return warmUp;
    }

    /**
     * The registry is back after an outage, or its server restarted (call on the owner thread): removals are held for
     * the warm-up, then the registry is read in full.
     */
    public void reconnected(String why) {
        publisher.warmUp(why);
    }

    /** The registry cannot be reached (call on the owner thread): removals wait for its return and warm-up. */
    public void disconnected() {
        publisher.outage();
    }

    public void start() {
        lifecycle.start();
    }

    /** Marks the watcher closed (nothing more is sent from now on); true only for the first call. */
    public boolean beginClose() {
        return lifecycle.close();
    }

    public Lifecycle lifecycle() {
        return lifecycle;
    }

    /** True between start and close. */
    public boolean open() {
        return lifecycle.isStarted();
    }

    public SerialExecutor loop() {
        return loop;
    }

    public Ticker ticker() {
        return loop.ticker();
    }

    public ShardPublisher publisher() {
        return publisher;
    }

    /** The resolver, or null when host names are skipped. */
    public HostResolver resolver() {
        return resolver;
    }

    public RegistryConfig config() {
        return context.config();
    }

    public RegistryStatus status() {
        return context.status();
    }

    public String registry() {
        return context.registry();
    }

    /** Stops the owner thread and the lookups, and reports the watcher stopped. Call after {@link #beginClose()}. */
    @Override
    public void close() {
        lifecycle.close();
        context.status().onRelease(null);
        context.status().warmingUntil(null);
        loop.close();
        if (lookups != null) lookups.shutdownNow();
        context.status().stopped();
    }
}
