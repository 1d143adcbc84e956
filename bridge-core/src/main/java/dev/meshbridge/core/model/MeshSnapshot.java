package dev.meshbridge.core.model;

import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.core.util.Hash64;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Set;
import org.pcollections.PSortedMap;
import org.pcollections.TreePMap;

/**
 * One immutable, consistent view of the whole catalog, published by the aggregator.
 *
 * <p>Snapshots form a sequence: {@link #changed()} and {@link #removed()} say what differs from the snapshot with
 * {@code sequence - 1}. A consumer that saw every snapshot can apply just those; one that missed one (its last
 * sequence is not {@code sequence - 1}) rebuilds from {@link #services()}. Consecutive snapshots share structure,
 * so keeping the previous one costs little.
 *
 * <p>{@link #version()} is a content hash of all services: equal catalogs have equal versions in every replica.
 */
public final class MeshSnapshot {

    private static final MeshSnapshot EMPTY =
            new MeshSnapshot(0, 0L, TreePMap.empty(), Set.of(), Set.of(), 0, RouteTable.empty(), false);

    private final long sequence;
    private final long versionSum;
    private final PSortedMap<String, MeshService> services;
    private final Set<String> changed;
    private final Set<String> removed;
    private final long endpointCount;
    private final RouteTable routes;
    private final boolean routesChanged;
    private final long firstEventNanos;
    private final boolean publishedAlone;

    /**
     * @param sequence position in the sequence of published snapshots (0 for the empty start)
     * @param versionSum order-independent sum of {@link #contribution(MeshService)} over all services
     * @param services every service by host
     * @param changed hosts added or changed since {@code sequence - 1}
     * @param removed hosts removed since {@code sequence - 1}
     * @param endpointCount total endpoints across services
     */
    public MeshSnapshot(
            long sequence,
            long versionSum,
            PSortedMap<String, MeshService> services,
            Set<String> changed,
            Set<String> removed,
            long endpointCount) {
        this(sequence, versionSum, services, changed, removed, endpointCount, RouteTable.empty(), false);
    }

    /**
     * @param routes the Ingress routes merged from every source
     * @param routesChanged true when {@code routes} differ from those of {@code sequence - 1}
     */
    public MeshSnapshot(
            long sequence,
            long versionSum,
            PSortedMap<String, MeshService> services,
            Set<String> changed,
            Set<String> removed,
            long endpointCount,
            RouteTable routes,
            boolean routesChanged) {
        this(sequence, versionSum, services, changed, removed, endpointCount, routes, routesChanged, 0L, false);
    }

    /**
     * @param firstEventNanos {@link System#nanoTime()} when the first registry or route event that went into this
     *     snapshot reached the aggregator; 0 when unknown. The servers measure the time from it to their clients'
     *     ACKs
     * @param publishedAlone the aggregator had nothing else due when it published this snapshot (no event waiting):
     *     a listener may then apply a small one on the aggregator's thread without holding up the next events
     */
    public MeshSnapshot(
            long sequence,
            long versionSum,
            PSortedMap<String, MeshService> services,
            Set<String> changed,
            Set<String> removed,
            long endpointCount,
            RouteTable routes,
            boolean routesChanged,
            long firstEventNanos,
            boolean publishedAlone) {
        this.sequence = sequence;
        this.versionSum = versionSum;
        this.services = Objects.requireNonNull(services);
        this.changed = immutable(changed);
        this.removed = immutable(removed);
        this.endpointCount = endpointCount;
        this.routes = Objects.requireNonNull(routes);
        this.routesChanged = routesChanged;
        this.firstEventNanos = firstEventNanos;
        this.publishedAlone = publishedAlone;
    }

    /** {@link Set#copyOf}, without its intermediate hash set for the usual one changed host. */
    private static Set<String> immutable(Set<String> hosts) {
        return switch (hosts.size()) {
            case 0 -> Set.of();
            case 1 -> Set.of(hosts.iterator().next());
            default -> Set.copyOf(hosts);
        };
    }

    public static MeshSnapshot empty() {
        return EMPTY;
    }

    /** What one service adds to a snapshot's version sum: a mix of its host and its version. */
    public static long contribution(MeshService service) {
        return Hash64.mix(new Hash64()
                .putString(service.host())
                .putString(service.version())
                .finish());
    }

    /**
     * {@link System#nanoTime()} when the first event that went into this snapshot reached the aggregator; 0 when
     * unknown (the empty start, snapshots made by hand).
     */
    public long firstEventNanos() {
        return firstEventNanos;
    }

    /**
     * Whether the aggregator had nothing else due when it published this snapshot (a change that came alone, as most
     * do in a running bridge): a server may then apply a small one on the aggregator's thread rather than wake its own
     * (see {@code AdsServer.executeSnapshot}). False while events keep coming (an ingest), so that the aggregator goes
     * on merging while the servers apply.
     */
    public boolean publishedAlone() {
        return publishedAlone;
    }

    public long sequence() {
        return sequence;
    }

    /** Content version of the whole catalog, routes included: 16 hex digits. */
    public String version() {
        long v = versionSum;
        if (!routes.isEmpty()) v += Hash64.of(routes.version());
        return Hash64.toHex(Hash64.mix(v));
    }

    /** The Ingress routes (empty when no Ingress source is configured). */
    public RouteTable routes() {
        return routes;
    }

    /**
     * True when {@link #routes()} differ from the previous snapshot's. {@link #changed()} and {@link #removed()} stay
     * about services only, so an endpoint change never looks like a route change.
     */
    public boolean routesChanged() {
        return routesChanged;
    }

    public long versionSum() {
        return versionSum;
    }

    /** Every service, sorted by host. */
    public NavigableMap<String, MeshService> services() {
        return services;
    }

    /** The persistent map behind {@link #services()}, for the aggregator to derive the next snapshot. */
    public PSortedMap<String, MeshService> servicesMap() {
        return services;
    }

    public MeshService service(String host) {
        return services.get(host);
    }

    /** Hosts added or changed since the previous snapshot. */
    public Set<String> changed() {
        return changed;
    }

    /** Hosts removed since the previous snapshot. */
    public Set<String> removed() {
        return removed;
    }

    public int serviceCount() {
        return services.size();
    }

    public long endpointCount() {
        return endpointCount;
    }

    @Override
    public String toString() {
        return "MeshSnapshot{seq=" + sequence + ", version=" + version() + ", services=" + services.size()
                + ", endpoints=" + endpointCount + ", changed=" + changed.size() + ", removed=" + removed.size()
                + ", routes=" + routes.routes().size() + (routesChanged ? " (changed)" : "") + "}";
    }
}
