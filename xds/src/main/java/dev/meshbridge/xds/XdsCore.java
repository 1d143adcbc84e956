package dev.meshbridge.xds;

import dev.meshbridge.ads.AdsClientView;
import dev.meshbridge.ads.AdsEngine;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.route.RouteTable;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The xDS producer: turns catalog snapshots into Envoy resources and puts them into the ADS engine's store, on the
 * serving thread. The protocol (subscriptions, pushes, ACKs) is the engine's ({@link AdsEngine}).
 *
 * <p>A snapshot that follows the last one seen ({@code sequence - 1}) is applied incrementally: only its changed and
 * removed hosts are translated and diffed against the index; any other snapshot is applied as a rebuild that still
 * re-translates only services whose version differs. The Ingress routes are translated again only when they or the
 * ports of a host they name change; their listeners go to gateway nodes only ({@link NodeRoles}).
 */
final class XdsCore {

    private static final Logger log = LoggerFactory.getLogger(XdsCore.class);
    private static final int MAX_WARNED = 10_000;
    /** A making of the sidecar's resources that only adds services waits this many times the last one's cost. */
    static final int SIDECAR_SPACING = 4;

    private final EnvoyTranslator translator;
    private final EnvoyIngressTranslator ingressTranslator;
    private final EnvoySidecarTranslator sidecarTranslator;
    /**
     * Per host, what decides its outbound routes; the sidecar's resources are made again when one changes. A hash map:
     * every change looks its host up, and a sorted map compared long host names down its depth; the rare translation
     * sorts them.
     */
    private final Map<String, EnvoySidecarTranslator.Entry> sidecarEntries = new HashMap<>();
    /**
     * The hosts of an incremental snapshot whose sidecar entry may have changed: each removed host, each changed or
     * relabelled host but those whose entry cannot have changed ({@link #sameSidecarEntry}), and each changed host the
     * snapshot lacks. An endpoint change, the usual lone change, leaves it empty: no entry is made and none of the 100,000s in {@link
     * #sidecarEntries} is looked up. A list, cleared in the time of its size: a hash set keeps the table an ingest
     * grew it to (100,000s of hosts) and clears all of it.
     */
    private final List<String> sidecarDirty = new ArrayList<>();

    private boolean sidecarTranslated;
    /** A sidecar entry changed since the sidecar resources were last made (their translation was put off). */
    private boolean sidecarPending;

    private long sidecarTranslations;
    /** What the last making of the sidecar's resources cost, and when it ended ({@link System#nanoTime()}). */
    private long sidecarCostNanos;

    private long sidecarEndNanos;
    /**
     * A snapshot applied since the last making, or the one that caused it, was part of a burst: another was waiting
     * behind it on this thread, or the aggregator had more due when it published it ({@link
     * MeshSnapshot#publishedAlone()} false). An ingest of 100,000 services comes as a few snapshots of tens of thousands
     * each, the last published alone.
     */
    private boolean sidecarBurst;
    /**
     * The snapshot put off last ended that burst (published alone, none waiting behind it): its making is due at once
     * rather than after the spacing, see {@link #sidecarDelayNanos}.
     */
    private boolean sidecarBurstEnded;
    /** The last making was made at a burst's end before its spacing had passed (the next one waits it out). */
    private boolean sidecarEarly;

    private long sidecarEarlyMakings;
    /** The clock of that spacing ({@link System#nanoTime()}; tests step it). */
    private java.util.function.LongSupplier nanoClock = System::nanoTime;

    private final XdsMetrics metrics;
    private final ResourceIndex index;
    private final Set<String> warned = new HashSet<>();
    private long lastSequence = -1;
    /** The last translation of the Ingress routes, served or refused: what decides whether to translate again. */
    private IngressResources lastIngressTranslation =
            IngressResources.empty(RouteTable.empty().version());

    /** Per host, the label keys the Ingress routes select subsets on: put under {@code envoy.lb} for that host. */
    private Map<String, ? extends Set<String>> routeLabelKeys = Map.of();
    /** The route table version {@link #routeLabelKeys} was computed from. */
    private String routeLabelKeysVersion = RouteTable.empty().version();

    private MeshSnapshot snapshot = MeshSnapshot.empty();
    private int skippedNow;

    XdsCore(EnvoyTranslator translator, XdsMetrics metrics, AdsEngine engine) {
        this(
                translator,
                new EnvoyIngressTranslator(translator, XdsOptions.Ingress.DEFAULTS),
                new EnvoySidecarTranslator(translator, SidecarOptions.DEFAULTS),
                metrics,
                engine);
    }

    /**
     * @param ingressTranslator null serves no resources for the Ingress routes
     * @param sidecarTranslator null serves no outbound listeners to sidecars
     */
    XdsCore(
            EnvoyTranslator translator,
            EnvoyIngressTranslator ingressTranslator,
            EnvoySidecarTranslator sidecarTranslator,
            XdsMetrics metrics,
            AdsEngine engine) {
        this.translator = translator;
        this.ingressTranslator = ingressTranslator;
        this.sidecarTranslator = sidecarTranslator;
        this.metrics = metrics;
        this.index = new ResourceIndex(engine);
    }

    ResourceIndex index() {
        return index;
    }

    MeshSnapshot snapshot() {
        return snapshot;
    }

    long lastSequence() {
        return lastSequence;
    }

    // ------------------------------------------------------------------ catalog

    /** Loads the Envoy message classes before the first snapshot needs them (about a second on a small box). */
    void warmUp() {
        MeshService probe = new MeshService(
                "warm-up.invalid",
                List.of(new ServicePort("grpc", 1, Protocol.GRPC)),
                List.of(Endpoint.builder("127.0.0.1")
                        .port("grpc", 1)
                        .label("a", "b")
                        .build()),
                new TreeMap<>(),
                new TreeSet<>(List.of(ServiceKey.of("none", "none", "warm-up"))),
                "0");
        translator.translate(probe);
        DeltaDiscoveryResponse.getDefaultInstance().getSerializedSize();
        DiscoveryResponse.getDefaultInstance().getSerializedSize();
    }

    /** Applies a snapshot: incrementally when it follows the last one seen, as a rebuild otherwise. */
    void applySnapshot(MeshSnapshot next) {
        applySnapshot(next, false);
    }

    /**
     * Applies a snapshot.
     *
     * @param later true when a later snapshot is already waiting to be applied on this thread: when this one only
     *     adds services, the sidecars' outbound listeners (made again from every service) are put off to a later
     *     snapshot, so that a burst of new services, as in a registry's first sync, costs one such translation instead
     *     of one per snapshot (quadratic in the catalog before). A new service's cluster may then reach a sidecar
     *     before its route, as make-before-break does anyway; a removal or a change is never put off, so a route never
     *     names a cluster that is gone.
     */
    void applySnapshot(MeshSnapshot next, boolean later) {
        long start = System.nanoTime();
        index.takeChanges();
        boolean incremental = lastSequence >= 0 && next.sequence() == lastSequence + 1;
        Set<String> relabeled = updateRouteLabelKeys(next.routes());
        int translated = 0;
        sidecarDirty.clear();
        if (incremental) {
            for (String host : next.removed()) {
                updateService(host, null);
                sidecarDirty.add(host);
            }
            for (String host : next.changed()) {
                MeshService s = next.service(host);
                if (s != null) {
                    retranslate(s);
                    translated++;
                } else {
                    sidecarDirty.add(host);
                }
            }
            for (String host : relabeled) {
                MeshService s = next.service(host);
                if (s != null && !next.changed().contains(host)) {
                    retranslate(s);
                    translated++;
                }
            }
        } else {
            Set<String> gone = new HashSet<>(index.services().keySet());
            for (MeshService s : next.services().values()) {
                gone.remove(s.host());
                ServiceResources current = index.service(s.host());
                if (current != null && current.serviceVersion().equals(s.version()) && !relabeled.contains(s.host()))
                    continue;
                updateService(s.host(), current, translate(s, current));
                translated++;
            }
            for (String host : gone) updateService(host, null);
            log.info(
                    "xds rebuilt from snapshot sequence={} (last seen {}): services={} translated={}",
                    next.sequence(),
                    lastSequence,
                    next.serviceCount(),
                    translated);
        }
        if (sidecarTranslator != null) applySidecar(next, incremental, later);
        if (ingressTranslator != null) applyIngress(next, incremental);
        lastSequence = next.sequence();
        snapshot = next;
        long nanos = System.nanoTime() - start;
        metrics.applied(skippedNow, nanos);
        index.engine().publishCounts();
        int[] changes = index.takeChanges();
        // one line per change at INFO formatted and wrote a line on the serving thread for every instance change: the
        // counts are in the metrics (meshbridge.xds.*), the line is for debugging
        if (log.isDebugEnabled() && Arrays.stream(changes).sum() > 0) {
            log.debug(
                    "xds push sequence={} services changed={} removed={} routes changed={} resources changed cds={}"
                            + " eds={} lds={} rds={} drds={} sds={} in {} us",
                    next.sequence(),
                    next.changed().size(),
                    next.removed().size(),
                    next.routesChanged(),
                    changes[XdsType.CLUSTER.ordinal()],
                    changes[XdsType.ENDPOINT.ordinal()],
                    changes[XdsType.LISTENER.ordinal()],
                    changes[XdsType.ROUTE.ordinal()],
                    changes[XdsType.DUBBO_ROUTE.ordinal()],
                    changes[XdsType.SECRET.ordinal()],
                    nanos / 1000);
        }
    }

    /** Translates a service again, reusing from {@code previous}, its served translation, what did not change. */
    private ServiceResources translate(MeshService s, ServiceResources previous) {
        Set<String> keys = routeLabelKeys.get(s.host());
        return translator.translate(s, previous, keys == null ? Set.of() : keys);
    }

    /**
     * Takes the label keys the routes select subsets on from a new route table; returns the hosts whose keys changed,
     * whose load assignments must be made again (an endpoint change does not change them).
     */
    private Set<String> updateRouteLabelKeys(RouteTable routes) {
        if (routes.version().equals(routeLabelKeysVersion)) return Set.of();
        Map<String, ? extends Set<String>> next = routes.subsetLabelKeys();
        Set<String> changed = new HashSet<>();
        for (Map.Entry<String, ? extends Set<String>> e : next.entrySet()) {
            if (!e.getValue().equals(routeLabelKeys.get(e.getKey()))) changed.add(e.getKey());
        }
        for (String host : routeLabelKeys.keySet()) {
            if (!next.containsKey(host)) changed.add(host);
        }
        routeLabelKeys = next;
        routeLabelKeysVersion = routes.version();
        if (!changed.isEmpty()) log.info("xds envoy.lb label keys from Ingress subsets changed for hosts {}", changed);
        return changed;
    }

    /**
     * Translates a service of an incremental snapshot again and serves it, noting its host when its sidecar entry may
     * have changed: the entry was made from the service in the last snapshot ({@link #snapshot}) and its translation
     * served until now.
     */
    private void retranslate(MeshService s) {
        // its served translation, looked up once for the translation, the entry check and the skipped items
        ServiceResources old = index.service(s.host());
        ServiceResources next = translate(s, old);
        if (sidecarTranslator != null && !sameSidecarEntry(old, next, snapshot.service(s.host()), s))
            sidecarDirty.add(s.host());
        updateService(s.host(), old, next);
    }

    private void updateService(String host, ServiceResources next) {
        updateService(host, index.service(host), next);
    }

    /** @param old what is served for the host now ({@code index.service(host)}) */
    private void updateService(String host, ServiceResources old, ServiceResources next) {
        index.apply(host, next);
        trackSkipped(host, old == null ? List.of() : old.skipped(), next == null ? List.of() : next.skipped());
    }

    private void trackSkipped(String host, List<ServiceResources.Skipped> old, List<ServiceResources.Skipped> next) {
        skippedNow += next.size() - old.size();
        if (next.isEmpty()) return;
        Set<String> known = new HashSet<>();
        for (ServiceResources.Skipped s : old) known.add(s.item() + '\n' + s.reason());
        for (ServiceResources.Skipped s : next) {
            if (known.contains(s.item() + '\n' + s.reason())) continue;
            metrics.skipped(s.reason());
            String key = host + '\n' + s.item() + '\n' + s.reason();
            if (warned.size() < MAX_WARNED && warned.add(key)) {
                log.warn("xds left out host={} item={} reason={}: {}", host, s.item(), s.reason(), s.detail());
            }
        }
    }

    /**
     * Whether a service's sidecar entry ({@link EnvoySidecarTranslator#entry}) is the same with its new translation as
     * with its old one, known without making it: the entry is the host (the same), the ports that have a cluster, and,
     * only when one of them is a Dubbo port, the Dubbo identities from the labels and sources. With the same ports, the
     * same clusters by name, and (with a Dubbo port) the same labels and sources, every part is the same. An endpoint
     * change can change the clusters: a port whose weights overflow loses its cluster ({@code weight-overflow}), and
     * then the entry is made.
     *
     * @param was the service {@code old} was translated from, {@code now} the one {@code next} was
     */
    static boolean sameSidecarEntry(ServiceResources old, ServiceResources next, MeshService was, MeshService now) {
        if (old == null || was == null || !old.ports().equals(next.ports())) return false;
        for (ServicePort p : next.ports()) {
            if (p.protocol() == Protocol.DUBBO) {
                if (!was.labels().equals(now.labels()) || !was.sources().equals(now.sources())) return false;
                break;
            }
        }
        // both sorted by type, then name: the clusters come first, in the same order when they are the same
        List<XdsResource> a = old.resources();
        List<XdsResource> b = next.resources();
        for (int i = 0; ; i++) {
            boolean ac = i < a.size() && a.get(i).type() == XdsType.CLUSTER;
            boolean bc = i < b.size() && b.get(i).type() == XdsType.CLUSTER;
            if (ac != bc) return false;
            if (!ac) return true;
            if (!a.get(i).name().equals(b.get(i).name())) return false;
        }
    }

    // ------------------------------------------------------------------ Ingress routes

    /**
     * Translates the snapshot's Ingress routes again when they changed, or when a host they name appeared, went, or
     * changed its served ports; an endpoint change costs nothing here. A translation Envoy would refuse is not
     * served: the last good one stays, and the problem is reported.
     */
    private void applyIngress(MeshSnapshot next, boolean incremental) {
        IngressResources current = index.ingress();
        IngressResources last = lastIngressTranslation;
        RouteTable table = next.routes();
        boolean redo = next.routesChanged() || !table.version().equals(last.routesVersion());
        if (!redo && !last.dependencies().isEmpty()) {
            redo = incremental
                    ? dependencyChanged(next.changed(), last) || dependencyChanged(next.removed(), last)
                    : dependencyChanged(last.dependencies().keySet(), last);
        }
        if (!redo) return;
        IngressResources translated = ingressTranslator.translate(table, this::servedPorts);
        lastIngressTranslation = translated;
        metrics.ingressTranslated(translated.unavailable().size());
        List<String> problems = new ArrayList<>();
        for (XdsResource r : translated.resources()) {
            // a resource with the version already served was checked when it was first made
            XdsResource served = index.get(r.type(), r.name());
            if (served != null && served.versionHash() == r.versionHash()) continue;
            for (String p : EnvoySemantics.check(r)) problems.add(r.type().shortName() + " " + r.name() + ": " + p);
        }
        if (!problems.isEmpty()) {
            // never sent: Envoy would NACK it; what was served stays
            metrics.skipped("invalid-resource");
            log.error(
                    "xds Ingress routes version={} not served, Envoy would refuse them; the last good ones stay: {}",
                    table.version(),
                    problems);
            return;
        }
        index.applyIngress(translated);
        lastIngressTranslation = index.ingress(); // the same, held packed
        trackSkipped(EnvoyIngressTranslator.OWNER, current.skipped(), translated.skipped());
        Set<String> before = new HashSet<>(current.unavailable());
        for (String u : translated.unavailable()) {
            if (!before.contains(u)) log.info("xds Ingress route answers 503: {}", u);
        }
        log.info(
                "xds Ingress routes version={} translated: resources={} hosts depended on={} answering 503={}",
                table.version(),
                translated.resources().size(),
                translated.dependencies().size(),
                translated.unavailable().size());
    }

    private boolean dependencyChanged(Set<String> hosts, IngressResources current) {
        Map<String, Long> deps = current.dependencies();
        Set<String> smaller = hosts.size() <= deps.size() ? hosts : deps.keySet();
        for (String h : smaller) {
            Long was = deps.get(h);
            if (was != null && hosts.contains(h) && was != EnvoyIngressTranslator.signature(servedPorts(h)))
                return true;
        }
        return false;
    }

    /** The ports of a catalog host that have a cluster, or null when the host is not served. */
    private List<ServicePort> servedPorts(String host) {
        ServiceResources r = index.service(host);
        return r == null ? null : EnvoyTranslator.servedPorts(r);
    }

    // ------------------------------------------------------------------ sidecar outbound listeners

    /**
     * Makes the sidecars' outbound listeners and routes again when a service appeared, went, or changed what decides
     * its routes (its served ports, its Dubbo interfaces); an endpoint change costs a comparison of its clusters' names
     * ({@link #sameSidecarEntry}). The result is diffed per resource, so only the route configurations that differ are
     * pushed.
     */
    private void applySidecar(MeshSnapshot next, boolean incremental, boolean later) {
        boolean changed = !sidecarTranslated || sidecarPending;
        boolean onlyAdded = true;
        Set<String> hosts = new HashSet<>();
        if (incremental) {
            // the changed and removed hosts whose entry may have changed
            hosts.addAll(sidecarDirty);
        } else {
            hosts.addAll(sidecarEntries.keySet());
            hosts.addAll(next.services().keySet());
        }
        for (String h : hosts) {
            ServiceResources served = index.service(h);
            MeshService s = next.service(h);
            EnvoySidecarTranslator.Entry e =
                    served == null || s == null ? null : EnvoySidecarTranslator.entry(s, served);
            EnvoySidecarTranslator.Entry old = e == null ? sidecarEntries.remove(h) : sidecarEntries.put(h, e);
            if (!java.util.Objects.equals(old, e)) {
                changed = true;
                if (old != null) onlyAdded = false;
            }
        }
        // a burst: another snapshot waits behind this one, or the aggregator had more due when it published it
        boolean partOfBurst = later || !next.publishedAlone();
        if (!changed) {
            sidecarBurst |= partOfBurst;
            return;
        }
        if (onlyAdded && sidecarTranslated && (later || spacingLeftNanos() > 0)) {
            sidecarPending = true;
            sidecarBurstEnded = !partOfBurst && sidecarBurst;
            sidecarBurst |= partOfBurst;
            return;
        }
        translateSidecar();
        sidecarBurst = partOfBurst;
    }

    /** How long until {@link #SIDECAR_SPACING} times the last making's cost has passed since it ended. */
    private long spacingLeftNanos() {
        return sidecarEndNanos + SIDECAR_SPACING * sidecarCostNanos - nanoClock.getAsLong();
    }

    /**
     * How long a making of the sidecar's resources that only adds services still waits: until {@link
     * #SIDECAR_SPACING} times the cost of the last one has passed since it ended, so that during a first sync, when the
     * serving thread keeps up with the snapshots, at most a fifth of it goes to making them again from every service (one
     * per snapshot was most of its time at 100,000 services). A new service waits that long for its sidecar route;
     * its cluster and endpoints are served at once. 0 or less: now.
     *
     * <p>Except at the end of a burst: when the snapshot put off last was published alone with none waiting behind it,
     * after snapshots that were not (the last of a registry's first sync), nothing is left to batch, and waiting would
     * only leave the thread idle while the burst's new services lack their routes (about 10 s after an ingest of
     * 100,000 services, issue 22): the making is due at once. It is made by the serving thread's own task ({@link
     * XdsServer}), never inline, so that a snapshot applied on the aggregator's thread does not carry it. One such early
     * making at most per spacing: the next waits the spacing out, so a registry that flaps in bursts takes at most
     * twice the throttle's share of the thread. A trickle of lone additions (each published alone) is spaced as
     * before.
     */
    long sidecarDelayNanos() {
        long left = spacingLeftNanos();
        return left > 0 && sidecarBurstEnded && !sidecarEarly ? 0 : left;
    }

    /** Replaces the clock that spaces the sidecar's translations (tests). */
    XdsCore nanoClock(java.util.function.LongSupplier clock) {
        this.nanoClock = clock;
        return this;
    }

    /** Whether a making of the sidecar's resources was put off (a later snapshot or {@link #flushSidecar} makes it). */
    boolean sidecarPending() {
        return sidecarPending;
    }

    /** Makes the sidecar's resources that were put off, from the last snapshot applied; nothing when none were. */
    void flushSidecar() {
        if (!sidecarPending || sidecarTranslator == null) return;
        boolean early = spacingLeftNanos() > 0;
        index.takeChanges();
        translateSidecar();
        if (early) {
            sidecarEarly = true;
            sidecarEarlyMakings++;
        }
        index.engine().publishCounts();
        index.takeChanges();
    }

    private void translateSidecar() {
        long start = nanoClock.getAsLong();
        sidecarEarly = false;
        sidecarBurst = false;
        sidecarBurstEnded = false;
        try {
            serveSidecar();
        } finally {
            sidecarEndNanos = nanoClock.getAsLong();
            sidecarCostNanos = sidecarEndNanos - start;
        }
    }

    private void serveSidecar() {
        sidecarPending = false;
        SidecarResources translated = sidecarTranslator.translate(new TreeMap<>(sidecarEntries));
        sidecarTranslated = true;
        sidecarTranslations++;
        List<String> problems = new ArrayList<>();
        for (XdsResource r : translated.resources()) {
            XdsResource served = index.get(r.type(), r.name());
            if (served != null && served.versionHash() == r.versionHash()) continue;
            for (String p : EnvoySemantics.check(r)) problems.add(r.type().shortName() + " " + r.name() + ": " + p);
        }
        if (!problems.isEmpty()) {
            metrics.skipped("invalid-resource");
            log.error(
                    "xds sidecar listeners not served, Envoy would refuse them; the last good ones stay: {}", problems);
            return;
        }
        index.applySidecar(translated);
    }

    /** How often the sidecar's resources were made again (for tests and benchmarks). */
    long sidecarTranslations() {
        return sidecarTranslations;
    }

    /** How many of those were made before their spacing had passed, at a burst's end (tests). */
    long sidecarEarlyMakings() {
        return sidecarEarlyMakings;
    }

    // ------------------------------------------------------------------ debug

    XdsDebugView debugView(Map<String, String> query) {
        String nodeFilter = query.getOrDefault("node", "");
        String typeFilter = query.getOrDefault("type", "");
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (XdsType t : XdsType.all()) counts.put(t.shortName(), index.size(t));
        List<AdsClientView> clients = index.engine().clients(nodeFilter, typeFilter);
        List<ServiceResources.Skipped> skipped = new ArrayList<>();
        for (ServiceResources r : new TreeMap<>(index.services()).values()) skipped.addAll(r.skipped());
        IngressResources ingress = index.ingress();
        skipped.addAll(ingress.skipped());
        List<String> ingressResources = new ArrayList<>();
        for (XdsResource r : ingress.resources()) ingressResources.add(r.type().shortName() + " " + r.name());
        return new XdsDebugView(
                new XdsDebugView.Catalog(
                        snapshot.sequence(), snapshot.version(), snapshot.serviceCount(), snapshot.endpointCount()),
                counts,
                clients,
                skipped,
                new XdsDebugView.Ingress(
                        ingressTranslator != null,
                        snapshot.routes().version(),
                        ingress.routesVersion(),
                        ingressResources,
                        ingress.unavailable()),
                new XdsDebugView.Sidecar(
                        sidecarTranslator != null,
                        index.sidecar().resources().stream()
                                .map(r -> r.type().shortName() + " " + r.name())
                                .toList(),
                        index.sidecar().notes()),
                null);
    }
}
