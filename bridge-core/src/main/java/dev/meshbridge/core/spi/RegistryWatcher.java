package dev.meshbridge.core.spi;

/**
 * Watches one configured registry and sends {@link RegistryEvent}s (see there for the contract).
 *
 * <p>Lifecycle: {@link #start()} once, returning quickly (connecting and the first sync happen in the background);
 * {@link #close()} stops all threads and watches and returns when the watcher will send nothing more; a second close
 * does nothing. Retries with backoff stay inside the watcher and show on its {@link RegistryStatus}.
 */
public interface RegistryWatcher extends AutoCloseable {

    void start();

    @Override
    void close();
}
