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
    private final dev.meshbridge.core.config.RegistryLimits limits;
    /** Services left out by {@code maxServices} or {@code maxInstances}, tried again when room is made. */
    private final Set<ServiceKey> refused = new java.util.LinkedHashSet<>();

    private long instances;

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
        this(registry, sink, status, policy, resolver, open, dev.meshbridge.core.config.RegistryLimits.DEFAULTS);
    }

    /** @param limits how much the registry may put into the catalog; what passes them is left out and reported */
    public ShardPublisher(
            String registry,
            EventSink sink,
            RegistryStatus status,
            HostNamePolicy policy,
            HostResolver resolver,
            BooleanSupplier open,
            dev.meshbridge.core.config.RegistryLimits limits) {
        this.limits = java.util.Objects.requireNonNull(limits, "limits");
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
        refused.remove(key);
        index(key, Set.of());
        ServiceUpsert was = sent.remove(key);
        if (was != null) {
            instances -= was.endpoints().size();
            emit(new ServiceRemoval(key));
            retryRefused();
        }
    }

    /** Services left out by a limit get another try once room was made. */
    private void retryRefused() {
        if (refused.isEmpty()) return;
        for (ServiceKey k : List.copyOf(refused)) {
            if (sent.size() >= limits.maxServices()) return;
            refused.remove(k);
            if (given.containsKey(k)) publish(k);
        }
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
        ServiceUpsert u = bounded(resolved(given.get(key)));
        ServiceUpsert previous = sent.get(key);
        if (u.endpoints().isEmpty()) {
            if (previous != null) {
                sent.remove(key);
                instances -= previous.endpoints().size();
                emit(new ServiceRemoval(key));
                retryRefused();
            }
            return;
        }
        if (u.equals(previous)) return;
        if (previous == null && sent.size() >= limits.maxServices()) {
            refused.add(key);
            status.skipped(
                    key.toString(),
                    "the registry serves maxServices=" + limits.maxServices()
                            + " services already (registries[].limits.maxServices); left out until one goes");
            return;
        }
        long next = instances
                - (previous == null ? 0 : previous.endpoints().size())
                + u.endpoints().size();
        if (next > limits.maxInstances()) {
            refused.add(key);
            status.skipped(
                    key.toString(),
                    "this change would bring the registry past maxInstances=" + limits.maxInstances()
                            + " instances (registries[].limits.maxInstances); left out, the service keeps what it"
                            + " had");
            return;
        }
        refused.remove(key);
        instances = next;
        sent.put(key, u);
        emit(u);
    }

    /**
     * The upsert without the instances no client can use (an address that is not unicast: unspecified, broadcast,
     * multicast) and with at most {@code maxLabelsPerInstance} labels per instance; each left out thing is reported.
     */
    private ServiceUpsert bounded(ServiceUpsert u) {
        List<Endpoint> out = null;
        for (int i = 0; i < u.endpoints().size(); i++) {
            Endpoint e = u.endpoints().get(i);
            Endpoint kept = e;
            String notUnicast = notUnicast(e.address());
            if (notUnicast != null) {
                status.skipped(
                        u.key() + " instance " + e.address() + ":" + e.ports().values(),
                        "address " + e.address() + " is " + notUnicast + ", not an instance's address");
                kept = null;
            } else if (e.labels().size() > limits.maxLabelsPerInstance()) {
                java.util.TreeMap<String, String> labels = new java.util.TreeMap<>();
                List<dev.meshbridge.core.naming.Labels.Dropped> dropped = new ArrayList<>();
                for (Map.Entry<String, String> l : new java.util.TreeMap<>(e.labels()).entrySet()) {
                    if (labels.size() < limits.maxLabelsPerInstance()) {
                        labels.put(l.getKey(), l.getValue());
                    } else if (dropped.size() < 16) {
                        dropped.add(new dev.meshbridge.core.naming.Labels.Dropped(
                                l.getKey(),
                                "",
                                "more than maxLabelsPerInstance=" + limits.maxLabelsPerInstance()
                                        + " labels (registries[].limits.maxLabelsPerInstance)"));
                    }
                }
                status.droppedLabels(
                        u.key() + " instance " + e.address(),
                        dropped,
                        e.labels().size() - limits.maxLabelsPerInstance());
                kept = new Endpoint(e.address(), e.ports(), e.weight(), e.enabled(), e.health(), labels, e.locality());
            }
            if (kept != e && out == null) out = new ArrayList<>(u.endpoints().subList(0, i));
            if (out != null && kept != null) out.add(kept);
        }
        return out == null ? u : new ServiceUpsert(u.key(), u.host(), u.ports(), out, u.labels());
    }

    /** Why an IP literal is not a unicast address, or null when it is one. */
    static String notUnicast(String address) {
        if (!IpAddresses.isLiteral(address)) return null;
        java.net.InetAddress a;
        try {
            a = java.net.InetAddress.getByName(address); // a literal: no lookup
        } catch (java.net.UnknownHostException e) {
            return null;
        }
        if (a.isAnyLocalAddress()) return "the unspecified address";
        if (a.isMulticastAddress()) return "a multicast address";
        byte[] b = a.getAddress();
        if (b.length == 4 && (b[0] & 0xff) >= 240) {
            return (b[0] & b[1] & b[2] & b[3]) == (byte) 0xff
                    ? "the broadcast address"
                    : "a reserved (class E) address";
        }
        if (b.length == 4 && b[0] == 0) return "in 0.0.0.0/8 (this network)";
        return null;
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
