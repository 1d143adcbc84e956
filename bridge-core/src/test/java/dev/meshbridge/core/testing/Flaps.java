package dev.meshbridge.core.testing;

import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.watch.Duplicates;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What a client of the catalog would have seen go away: every event after a mark that takes away an endpoint (by
 * address and ports) or a service that was served at the mark. A registry restart the bridge rides out gives none.
 */
public final class Flaps {

    private Flaps() {}

    /**
     * While a restarted registry is held in a partial state and the watcher is back: with the rules on ({@code
     * protectedRestart}), nothing served at {@code mark} may leave during a second of reads; without them (a negative
     * control), waits until something has left.
     */
    public static void awaitWhilePartial(boolean protectedRestart, Supplier<List<RegistryEvent>> events, int mark) {
        if (protectedRestart) {
            // what left stays in the events, so a longer bound only gives a loaded machine time to look for a second
            await().during(Duration.ofSeconds(1))
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> since(events.get(), mark).isEmpty());
        } else {
            await().atMost(TestCatalog.TIMEOUT)
                    .until(() -> !since(events.get(), mark).isEmpty());
        }
    }

    /**
     * The events after {@code mark} (an index into {@code events}) that removed something served at the mark, one line
     * each: {@code removal <service>} or {@code <service> lost [addresses]}.
     */
    public static List<String> since(List<RegistryEvent> events, int mark) {
        Map<ServiceKey, Set<String>> baseline = new HashMap<>();
        for (RegistryEvent e : events.subList(0, mark)) {
            switch (e) {
                case ServiceUpsert u -> baseline.put(u.key(), identities(u));
                case ServiceRemoval r -> baseline.remove(r.key());
                default -> {}
            }
        }
        List<String> out = new ArrayList<>();
        for (RegistryEvent e : events.subList(mark, events.size())) {
            switch (e) {
                case ServiceRemoval r -> {
                    if (baseline.containsKey(r.key())) out.add("removal " + r.key());
                }
                case ServiceUpsert u -> {
                    Set<String> before = baseline.get(u.key());
                    if (before == null) continue;
                    Set<String> lost = new HashSet<>(before);
                    lost.removeAll(identities(u));
                    if (!lost.isEmpty()) out.add(u.key() + " lost " + lost);
                }
                default -> {}
            }
        }
        return out;
    }

    private static Set<String> identities(ServiceUpsert u) {
        Set<String> ids = new HashSet<>();
        for (Endpoint e : u.endpoints()) ids.add(Duplicates.identity(e));
        return ids;
    }
}
