package dev.meshbridge.core.watch;

import dev.meshbridge.core.config.HostNamePolicy;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.naming.IpAddresses;
import dev.meshbridge.core.spi.EventSink;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every change a watcher makes leaves it: the one component between a watcher's own view of its registry and
 * the aggregator. Used on the watcher's owner thread only.
 *
 * <p>Contract:
 *
 * <ol>
 *   <li>the watcher hands in the <em>full</em> current endpoint list of a service ({@link #upsert}), or that it is gone
 *       ({@link #remove}), as often as it likes; only what differs from what was last sent leaves (the last-sent
 *       diff), so a resync after a reconnect sends only real changes;
 *   <li>an IPv6 literal loses its brackets; an endpoint whose address is a host name is resolved here, per the registry's {@link HostNamePolicy}: sent
 *       with its address once the name resolves, left out and reported per instance while it does not (or always,
 *       with {@code skip}); when a name's address changes, every service using it is sent again;
 *   <li>two endpoints that resolve to the same address and ports are one, by the {@link Duplicates} rule;
 *   <li>a service left with no endpoint is sent as a {@link ServiceRemoval} (the registry's empty-service policy
 *       decides what that means);
 *   <li>{@link #synced()} sends {@link RegistrySynced} with every service currently sent;
 *   <li>nothing is sent once the watcher is closed.
 * </ol>
 */
public final class ShardPublisher {

    private static final Logger log = LoggerFactory.getLogger(ShardPublisher.class);

    private final String registry;
    private final EventSink sink;
    private final RegistryStatus status;
    private final HostNamePolicy policy;
    private final HostResolver resolver;
    private final BooleanSupplier open;
    private final Map<ServiceKey, ServiceUpsert> given = new HashMap<>();
    private final Map<ServiceKey, ServiceUpsert> sent = new HashMap<>();
    private final Map<String, Set<ServiceKey>> byName = new HashMap<>();
    private final Map<ServiceKey, Set<String>> namesOf = new HashMap<>();

    /**
     * @param resolver resolves host names (null with {@link HostNamePolicy.Mode#SKIP})
     * @param open false once the watcher is closing: nothing more is sent
     */
    public ShardPublisher(
            String registry,
            EventSink sink,
            RegistryStatus status,
            HostNamePolicy policy,
            HostResolver resolver,
            BooleanSupplier open) {
        this.registry = registry;
        this.sink = sink;
        this.status = status;
        this.policy = policy;
        this.resolver = resolver;
        this.open = open;
    }

    /** The full current endpoint list of one service; sent when it differs from what was sent before. */
    public void upsert(ServiceUpsert u) {
        given.put(u.key(), u);
        publish(u.key());
    }

    /** The service has no instances any more (or is no longer watched). */
    public void remove(ServiceKey key) {
        given.remove(key);
        index(key, Set.of());
        if (sent.remove(key) != null) emit(new ServiceRemoval(key));
    }

    /** A full sync is complete: tells the aggregator every service this registry has now. */
    public void synced() {
        emit(new RegistrySynced(registry, Set.copyOf(sent.keySet())));
    }

    /** The services sent and not removed since. */
    public Set<ServiceKey> services() {
        return Set.copyOf(sent.keySet());
    }

    /** What was last sent for a service, or null. */
    public ServiceUpsert lastSent(ServiceKey key) {
        return sent.get(key);
    }

    /** What the watcher last handed in for a service (before host names were resolved), or null. */
    public ServiceUpsert lastGiven(ServiceKey key) {
        return given.get(key);
    }

    /** Called (on the owner thread) when a host name's address changed: its services are sent again. */
    public void hostNameChanged(String name) {
        Set<ServiceKey> keys = byName.get(name);
        if (keys == null) return;
        for (ServiceKey k : new TreeSet<>(keys)) {
            if (given.containsKey(k)) publish(k);
        }
    }

    private void publish(ServiceKey key) {
        ServiceUpsert u = resolved(given.get(key));
        ServiceUpsert previous = sent.get(key);
        if (u.endpoints().isEmpty()) {
            if (previous != null) {
                sent.remove(key);
                emit(new ServiceRemoval(key));
            }
            return;
        }
        if (u.equals(previous)) return;
        sent.put(key, u);
        emit(u);
    }

    /** The upsert with host names replaced by addresses; instances that cannot be addressed are left out. */
    private ServiceUpsert resolved(ServiceUpsert u) {
        boolean plain = true;
        for (Endpoint e : u.endpoints()) {
            if (!e.address().equals(IpAddresses.literal(e.address()))) {
                plain = false;
                break;
            }
        }
        if (plain) {
            index(u.key(), Set.of());
            return u;
        }
        Set<String> used = new HashSet<>();
        List<Duplicates.Candidate> out = new ArrayList<>(u.endpoints().size());
        for (Endpoint e : u.endpoints()) {
            String address = e.address();
            String literal = IpAddresses.literal(address);
            if (literal != null) {
                out.add(new Duplicates.Candidate(literal.equals(address) ? e : withAddress(e, literal), 0, address));
                continue;
            }
            String item = u.key() + " instance " + address + ":" + e.ports().values();
            if (policy.mode() == HostNamePolicy.Mode.SKIP || resolver == null) {
                status.skipped(item, "address '" + address + "' is a host name, not an IP (nonIpAddress: skip)");
                continue;
            }
            used.add(address);
            switch (resolver.resolve(address)) {
                case HostResolver.Resolved r ->
                    out.add(new Duplicates.Candidate(withAddress(e, r.address()), 0, address));
                case HostResolver.Pending p -> {
                    // sent as soon as the first lookup answers (hostNameChanged)
                }
                case HostResolver.Failed f ->
                    status.skipped(
                            item,
                            "host name '" + address + "' does not resolve (" + f.reason()
                                    + "); the instance gets traffic once it does (nonIpAddress: resolve)");
            }
        }
        index(u.key(), used);
        Duplicates.Result picked = Duplicates.pick(out);
        if (!picked.dropped().isEmpty() && log.isDebugEnabled()) {
            log.debug(
                    "registry={} service={} same address twice after resolving: {}",
                    registry,
                    u.key(),
                    picked.dropped());
        }
        return new ServiceUpsert(u.key(), u.host(), u.ports(), picked.endpoints(), u.labels());
    }

    private static Endpoint withAddress(Endpoint e, String address) {
        return new Endpoint(address, e.ports(), e.weight(), e.enabled(), e.health(), e.labels(), e.locality());
    }

    private void index(ServiceKey key, Set<String> names) {
        Set<String> before = names.isEmpty() ? namesOf.remove(key) : namesOf.put(key, names);
        if (before != null) {
            for (String n : before) {
                if (names.contains(n)) continue;
                Set<ServiceKey> keys = byName.get(n);
                if (keys != null && keys.remove(key) && keys.isEmpty()) byName.remove(n);
            }
        }
        for (String n : names) byName.computeIfAbsent(n, x -> new HashSet<>()).add(key);
    }

    private void emit(RegistryEvent event) {
        if (!open.getAsBoolean()) return;
        if (log.isDebugEnabled()) log.debug("registry={} event {}", registry, event);
        sink.accept(event);
    }

    /** Counts for debugging: services given, sent, and host names in use. */
    public Map<String, Integer> counts() {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("given", given.size());
        m.put("sent", sent.size());
        m.put("hostNames", byName.size());
        return m;
    }
}
