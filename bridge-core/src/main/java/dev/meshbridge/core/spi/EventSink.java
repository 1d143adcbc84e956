package dev.meshbridge.core.spi;

/** Where watchers send events. Thread-safe and non-blocking: callers may be client library callback threads. */
@FunctionalInterface
public interface EventSink {

    void accept(RegistryEvent event);
}
