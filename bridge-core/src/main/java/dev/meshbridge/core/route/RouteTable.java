package dev.meshbridge.core.route;

import dev.meshbridge.core.util.Hash64;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The HTTP routes and TLS certificates of every Ingress from every source, merged into what is served, with a
 * content version. Immutable; built by {@link #merge}.
 *
 * <p>Merge rules:
 *
 * <ol>
 *   <li>contributions are taken oldest first ({@link IngressRef} order: creation time, then namespace, then name,
 *       then source), as Kubernetes controllers do;
 *   <li>a route whose match (host, path type, path) an older Ingress already claimed is left out and reported as a
 *       {@link RouteConflict} naming both Ingresses; inside one Ingress, the first declaration counts;
 *   <li>only one default backend is served: the oldest; the others are conflicts;
 *   <li>a TLS host gets the Secret of the oldest Ingress naming it; another Ingress naming the same Secret for it is
 *       no conflict, one naming a different Secret is;
 *   <li>{@link #version()} hashes what is served (routes with their rewrites, default backend, TLS hosts with the
 *       fingerprint of their material) and nothing else: equal tables have equal versions in every replica, and a conflict that changes
 *       nothing served changes no version.
 * </ol>
 */
public final class RouteTable {

    private static final RouteTable EMPTY = merge(List.of());

    private final List<HttpRoute> routes;
    private final Optional<HttpRoute> defaultBackend;
    private final NavigableMap<String, TlsEntry> tls;
    private final List<RouteConflict> conflicts;
    private final SortedSet<IngressRef> ingresses;
    private final String version;

    private RouteTable(
            List<HttpRoute> routes,
            Optional<HttpRoute> defaultBackend,
            NavigableMap<String, TlsEntry> tls,
            List<RouteConflict> conflicts,
            SortedSet<IngressRef> ingresses) {
        this.routes = List.copyOf(routes);
        this.defaultBackend = defaultBackend;
        this.tls = Collections.unmodifiableNavigableMap(tls);
        this.conflicts = List.copyOf(conflicts);
        this.ingresses = Collections.unmodifiableSortedSet(ingresses);
        this.version = computeVersion();
    }

    public static RouteTable empty() {
        return EMPTY;
    }

    /**
     * Merges the contributions of all Ingresses of all sources.
     *
     * @throws IllegalArgumentException when two contributions have the same owner
     */
    public static RouteTable merge(Collection<IngressRoutes> contributions) {
        List<IngressRoutes> ordered = new ArrayList<>(contributions);
        ordered.sort(Comparator.comparing(IngressRoutes::owner));
        SortedSet<IngressRef> owners = new TreeSet<>();
        TreeMap<RouteMatch, HttpRoute> winners = new TreeMap<>();
        HttpRoute defaultBackend = null;
        TreeMap<String, TlsEntry> tls = new TreeMap<>();
        List<RouteConflict> conflicts = new ArrayList<>();
        for (IngressRoutes c : ordered) {
            if (!owners.add(c.owner())) throw new IllegalArgumentException("two contributions of " + c.owner());
            for (HttpRoute r : c.routes()) {
                HttpRoute earlier = winners.putIfAbsent(r.match(), r);
                if (earlier != null) {
                    conflicts.add(new RouteConflict(
                            RouteConflict.Kind.ROUTE, r.match().toString(), earlier.owner(), r.owner()));
                }
            }
            if (c.defaultBackend().isPresent()) {
                HttpRoute d = c.defaultBackend().get();
                if (defaultBackend == null) {
                    defaultBackend = d;
                } else {
                    conflicts.add(new RouteConflict(
                            RouteConflict.Kind.DEFAULT_BACKEND, "*", defaultBackend.owner(), d.owner()));
                }
            }
            for (TlsEntry t : c.tls()) {
                for (String host : t.hosts().isEmpty() ? List.of("") : t.hosts()) {
                    TlsEntry earlier = tls.putIfAbsent(host, t);
                    if (earlier != null && !earlier.secret().equals(t.secret())) {
                        conflicts.add(new RouteConflict(
                                RouteConflict.Kind.TLS, host.isEmpty() ? "*" : host, earlier.owner(), t.owner()));
                    }
                }
            }
        }
        conflicts.sort(Comparator.comparing(RouteConflict::loser)
                .thenComparing(RouteConflict::kind)
                .thenComparing(RouteConflict::claim));
        return new RouteTable(
                new ArrayList<>(winners.values()), Optional.ofNullable(defaultBackend), tls, conflicts, owners);
    }

    /** The served routes, sorted by match. */
    public List<HttpRoute> routes() {
        return routes;
    }

    /** The served default backend: requests that no route matches. */
    public Optional<HttpRoute> defaultBackend() {
        return defaultBackend;
    }

    /** The served TLS entry per host, sorted; the empty host is the certificate for hosts without their own. */
    public NavigableMap<String, TlsEntry> tls() {
        return tls;
    }

    /** Every claim that lost, sorted by the losing Ingress. */
    public List<RouteConflict> conflicts() {
        return conflicts;
    }

    /** Every Ingress that contributed, winners and losers. */
    public SortedSet<IngressRef> ingresses() {
        return ingresses;
    }

    /** The hosts of every registry service a served route (or the default backend) sends traffic to. */
    public SortedSet<String> registryHosts() {
        SortedSet<String> hosts = new TreeSet<>();
        for (HttpRoute r : servedRoutes()) {
            for (WeightedDestination d : r.destinations()) {
                if (d.destination() instanceof RegistryDestination rd) hosts.add(rd.host());
            }
        }
        return Collections.unmodifiableSortedSet(hosts);
    }

    /**
     * Per registry host, the endpoint label keys the served routes' subsets select on (a subset given by labels): what
     * an Envoy subset load balancer needs on that host's endpoints. Hosts no subset selects on are absent. Sorted.
     */
    public SortedMap<String, SortedSet<String>> subsetLabelKeys() {
        SortedMap<String, SortedSet<String>> keys = new TreeMap<>();
        for (HttpRoute r : servedRoutes()) {
            for (WeightedDestination d : r.destinations()) {
                if (d.destination() instanceof RegistryDestination rd
                        && !rd.subsetLabels().isEmpty()) {
                    keys.computeIfAbsent(rd.host(), h -> new TreeSet<>())
                            .addAll(rd.subsetLabels().keySet());
                }
            }
        }
        return keys;
    }

    /** The routes and then the default backend, if any. */
    public List<HttpRoute> servedRoutes() {
        if (defaultBackend.isEmpty()) return routes;
        List<HttpRoute> all = new ArrayList<>(routes);
        all.add(defaultBackend.get());
        return Collections.unmodifiableList(all);
    }

    public boolean isEmpty() {
        return routes.isEmpty() && defaultBackend.isEmpty() && tls.isEmpty();
    }

    /** Content version of what is served: 16 hex digits. */
    public String version() {
        return version;
    }

    private String computeVersion() {
        Hash64 h = new Hash64();
        h.putInt(routes.size());
        for (HttpRoute r : routes) putRoute(h, r);
        h.putBoolean(defaultBackend.isPresent());
        defaultBackend.ifPresent(d -> putRoute(h, d));
        h.putInt(tls.size());
        for (Map.Entry<String, TlsEntry> e : tls.entrySet()) {
            TlsEntry t = e.getValue();
            h.putString(e.getKey());
            putOwner(h, t.owner());
            h.putString(t.secret().namespace()).putString(t.secret().name());
            h.putBoolean(t.material().isPresent());
            h.putLong(t.material().map(TlsMaterial::fingerprint).orElse(0L));
        }
        return h.hex();
    }

    private static void putRoute(Hash64 h, HttpRoute r) {
        h.putString(r.match().host())
                .putInt(r.match().pathType().ordinal())
                .putString(r.match().path());
        putOwner(h, r.owner());
        h.putInt(r.destinations().size());
        for (WeightedDestination wd : r.destinations()) {
            h.putInt(wd.weight());
            switch (wd.destination()) {
                case RegistryDestination d -> {
                    h.putInt(1).putString(d.host()).putInt(d.port()).putString(d.subset());
                    h.putInt(d.subsetLabels().size());
                    d.subsetLabels().forEach((k, v) -> h.putString(k).putString(v));
                }
                case KubernetesServiceDestination d ->
                    h.putInt(2)
                            .putString(d.namespace())
                            .putString(d.name())
                            .putString(d.host())
                            .putInt(d.port())
                            .putString(d.portName());
            }
        }
        // hashed only when present, so the versions of tables without rewrites are what they were before rewrites
        r.rewrite().ifPresent(w -> h.putInt(3).putInt(w.kind().ordinal()).putString(w.target()));
    }

    private static void putOwner(Hash64 h, IngressRef o) {
        h.putString(o.source()).putString(o.namespace()).putString(o.name());
        h.putLong(o.created().getEpochSecond()).putInt(o.created().getNano());
    }

    @Override
    public String toString() {
        return "RouteTable{version=" + version + ", routes=" + routes.size() + ", defaultBackend="
                + defaultBackend.isPresent() + ", tlsHosts=" + tls.size() + ", conflicts=" + conflicts.size()
                + ", ingresses=" + ingresses.size() + "}";
    }
}
