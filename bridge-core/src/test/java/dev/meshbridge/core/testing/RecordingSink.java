package dev.meshbridge.core.testing;

import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.spi.EventSink;
import dev.meshbridge.core.spi.RegistryEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Records every event a watcher sends, in order. */
public final class RecordingSink implements EventSink {

    private final List<RegistryEvent> events = new ArrayList<>();

    @Override
    public synchronized void accept(RegistryEvent event) {
        events.add(event);
    }

    public synchronized List<RegistryEvent> events() {
        return List.copyOf(events);
    }

    public synchronized void clear() {
        events.clear();
    }

    public <T extends RegistryEvent> List<T> events(Class<T> type) {
        return events().stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** Waits for an event matching the predicate and returns it. */
    public RegistryEvent awaitEvent(Predicate<RegistryEvent> match) {
        RegistryEvent[] found = new RegistryEvent[1];
        await().atMost(TestCatalog.TIMEOUT).until(() -> {
            for (RegistryEvent e : events()) {
                if (match.test(e)) {
                    found[0] = e;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }
}
