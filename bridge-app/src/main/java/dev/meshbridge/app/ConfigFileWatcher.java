package dev.meshbridge.app;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches {@code bridge.yaml} by content (so a Kubernetes ConfigMap's symlink swap is seen too) and hands each new,
 * valid configuration to a consumer. A file that does not parse or validate is refused with every problem logged, and
 * the running configuration stays.
 */
final class ConfigFileWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConfigFileWatcher.class);

    /** Parses the file's text into a configuration. */
    interface Loader {
        BridgeConfig load(Path file) throws ConfigException;
    }

    /** Applies a valid configuration; false when it refuses it (the running state stays). */
    interface Applier {
        boolean apply(BridgeConfig config);
    }

    private final Path file;
    private final Loader loader;
    private final Applier onChange;
    private final ScheduledExecutorService scheduler;
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong applied = new AtomicLong();
    private byte[] lastContent;

    ConfigFileWatcher(Path file, byte[] initialContent, Duration interval, Loader loader, Applier onChange) {
        this.file = file;
        this.lastContent = initialContent;
        this.loader = loader;
        this.onChange = onChange;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "meshbridge-config-watch");
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(this::check, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Checks the file now (also called on the interval). */
    synchronized void check() {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            log.warn("config file={} cannot be read, keeping the running configuration: {}", file, e.toString());
            return;
        }
        if (Arrays.equals(content, lastContent)) return;
        lastContent = content;
        BridgeConfig config;
        try {
            config = loader.load(file);
        } catch (ConfigException e) {
            refused.incrementAndGet();
            log.error(
                    "config file={} changed but is refused; the running configuration stays. {}", file, e.getMessage());
            return;
        }
        log.info("config file={} changed; applying", file);
        try {
            if (onChange.apply(config)) {
                applied.incrementAndGet();
            } else {
                refused.incrementAndGet();
            }
        } catch (RuntimeException e) {
            log.error("applying the changed configuration failed", e);
        }
    }

    long refusedCount() {
        return refused.get();
    }

    long appliedCount() {
        return applied.get();
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
