package dev.meshbridge.core.model;

import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.util.CompactSortedMap;
import dev.meshbridge.core.util.Interner;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One instance of a service, normalized.
 *
 * <p>Uniform semantics, whatever the registry:
 *
 * <ol>
 *   <li>an endpoint that is not {@link #enabled()} or whose {@link #weight()} is 0 gets no traffic ({@link
 *       #routable()} is false); translators leave it out;
 *   <li>an endpoint that is not {@link Health#HEALTHY} is kept and marked: xDS sends it as UNHEALTHY, ServiceEntry
 *       leaves it out;
 *   <li>weights are relative within a service; {@link #DEFAULT_WEIGHT} is the weight of an ordinary instance
 *       (Dubbo's default of 100), and registries with fractional weights scale by it (Nacos 0.5 becomes 50);
 *   <li>labels are already valid Kubernetes labels (see {@link Labels#sanitize}).
 * </ol>
 *
 * @param address IP address (or, where a registry gives only that, a host name)
 * @param ports real port numbers by service port name, e.g. {@code {dubbo=20880, tri=50051}}
 * @param weight relative weight, >= 0
 * @param enabled false when the registry marks the instance disabled
 * @param health health as the registry reports it
 * @param labels sanitized labels, sorted by key
 * @param locality region, zone, sub-zone
 */
public record Endpoint(
        String address,
        SortedMap<String, Integer> ports,
        int weight,
        boolean enabled,
        Health health,
        SortedMap<String, String> labels,
        Locality locality)
        implements Comparable<Endpoint> {

    /** The weight of an ordinary instance. */
    public static final int DEFAULT_WEIGHT = 100;

    /** The largest weight an endpoint may carry (keeps sums of weights per locality far below 2^32). */
    public static final int MAX_WEIGHT = 1_000_000;

    private static final Interner<Locality> LOCALITIES = new Interner<>(1 << 12);

    public Endpoint {
        Objects.requireNonNull(address, "address");
        address = address.intern();
        if (address.isBlank()) throw new IllegalArgumentException("endpoint address is empty");
        Objects.requireNonNull(health, "health");
        locality = Objects.requireNonNullElse(locality, Locality.NONE);
        if (weight < 0 || weight > MAX_WEIGHT) {
            throw new IllegalArgumentException(
                    "endpoint " + address + ": weight " + weight + " is out of 0.." + MAX_WEIGHT);
        }
        if (ports.isEmpty()) throw new IllegalArgumentException("endpoint " + address + " has no port");
        for (Map.Entry<String, Integer> p : ports.entrySet()) {
            int n = p.getValue();
            if (n < 1 || n > 65535) {
                throw new IllegalArgumentException(
                        "endpoint " + address + ": port " + p.getKey() + "=" + n + " is out of 1..65535");
            }
        }
        for (Map.Entry<String, String> l : labels.entrySet()) {
            if (!Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue())) {
                throw new IllegalArgumentException("endpoint " + address + ": label " + l.getKey() + "=" + l.getValue()
                        + " is not a valid Kubernetes label (sanitize it first)");
            }
        }
        // equal maps and localities are shared across endpoints (see CompactSortedMap and Interner)
        ports = CompactSortedMap.copyOf(ports);
        labels = CompactSortedMap.copyOf(labels);
        locality = locality.isEmpty() ? Locality.NONE : LOCALITIES.intern(locality);
    }

    /** True when the endpoint may get traffic at all: enabled and weight > 0 (health is separate). */
    public boolean routable() {
        return enabled && weight > 0;
    }

    /** The real port of the given service port name, or 0 when this endpoint does not serve it. */
    public int port(String portName) {
        Integer p = ports.get(portName);
        return p == null ? 0 : p;
    }

    public static Builder builder(String address) {
        return new Builder(address);
    }

    /**
     * Orders by address, ports, weight, locality, labels, health, enabled; maps compare as their {@code toString} forms
     * (the order every release used), but only when they differ: equal maps, most often one shared instance, are not
     * formatted.
     */
    @Override
    public int compareTo(Endpoint o) {
        if (this == o) return 0;
        int c = address.compareTo(o.address);
        if (c != 0) return c;
        c = compareForms(ports, o.ports);
        if (c != 0) return c;
        c = Integer.compare(weight, o.weight);
        if (c != 0) return c;
        c = locality.compareTo(o.locality);
        if (c != 0) return c;
        c = compareForms(labels, o.labels);
        if (c != 0) return c;
        c = health.compareTo(o.health);
        return c != 0 ? c : Boolean.compare(enabled, o.enabled);
    }

    private static int compareForms(Map<String, ?> a, Map<String, ?> b) {
        if (a == b || a.equals(b)) return 0;
        return a.toString().compareTo(b.toString());
    }

    /** Builds an endpoint; defaults: enabled, healthy, {@link #DEFAULT_WEIGHT}, no labels, no locality. */
    public static final class Builder {
        private final String address;
        private final TreeMap<String, Integer> ports = new TreeMap<>();
        private int weight = DEFAULT_WEIGHT;
        private boolean enabled = true;
        private Health health = Health.HEALTHY;
        private final TreeMap<String, String> labels = new TreeMap<>();
        private Locality locality = Locality.NONE;

        private Builder(String address) {
            this.address = address;
        }

        public Builder port(String name, int number) {
            ports.put(name, number);
            return this;
        }

        public Builder weight(int weight) {
            this.weight = weight;
            return this;
        }

        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        public Builder health(Health health) {
            this.health = health;
            return this;
        }

        /** Adds labels that are already valid; use {@link Labels#sanitize} on registry data first. */
        public Builder labels(Map<String, String> labels) {
            this.labels.putAll(labels);
            return this;
        }

        public Builder label(String key, String value) {
            labels.put(key, value);
            return this;
        }

        public Builder locality(Locality locality) {
            this.locality = locality;
            return this;
        }

        public Endpoint build() {
            return new Endpoint(address, ports, weight, enabled, health, labels, locality);
        }
    }
}
