package dev.meshbridge.core.watch;

import dev.meshbridge.core.config.HostNamePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.WatcherContext;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The shape every watcher has, in one place: its {@link Lifecycle}, the {@link SerialExecutor} that owns its state
 * (with the injected {@link Ticker}), the {@link HostResolver} for instances registered under host names, and the
 * {@link ShardPublisher} every outgoing change passes through.
 *
 * <p>Use: create in the watcher's constructor; {@link #start()} in {@code start()}; in {@code close()}, when {@link
 * #beginClose()} is true, stop the registry client, then {@link #close()}.
 */
public final class WatcherKit implements AutoCloseable {

    private final WatcherContext context;
    private final Lifecycle lifecycle;
    private final SerialExecutor loop;
    private final ExecutorService lookups;
    private final HostResolver resolver;
    private final ShardPublisher publisher;

    /** @param threadName the name of the owner thread, e.g. {@code meshbridge-zk-prod} */
    public WatcherKit(WatcherContext context, String threadName) {
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
        this.publisher = new ShardPublisher(
                config.name(),
                context.events(),
                context.status(),
                policy,
                resolver,
                lifecycle::isStarted,
                config.limits());
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
        loop.close();
        if (lookups != null) lookups.shutdownNow();
        context.status().stopped();
    }
}
