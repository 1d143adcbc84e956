package dev.meshbridge.core.model;

import dev.meshbridge.core.naming.IpAddresses;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.util.CompactSortedMap;
import dev.meshbridge.core.util.Hash64;
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
 */
public final class Endpoint implements Comparable<Endpoint> {

    /** The weight of an ordinary instance. */
    public static final int DEFAULT_WEIGHT = 100;

    /** The largest weight an endpoint may carry (keeps sums of weights per locality far below 2^32). */
    public static final int MAX_WEIGHT = 1_000_000;

    private static final Interner<Locality> LOCALITIES = new Interner<>(1 << 12);

    // Endpoints are built a service at a time (a registry's listing), so a small table finds the shape its siblings
    // share; one evicted early only costs that endpoint its own shape.
    private static final Interner<Shape> SHAPES = new Interner<>(1 << 14);

    private static final Health[] HEALTHS = Health.values();
    private static final int WEIGHT_BITS = 20; // MAX_WEIGHT < 2^20
    private static final int WEIGHT_MASK = (1 << WEIGHT_BITS) - 1;
    private static final int ENABLED_BIT = 1 << WEIGHT_BITS;
    private static final int HEALTH_SHIFT = WEIGHT_BITS + 1;

    // A million endpoints are held at once, so an endpoint is packed into 24 bytes: a canonical dotted IPv4 address
    // (the common case) as its 32 bits, with no address string (about 56 bytes) next to it; weight, enabled and health
    // in one int; and what the instances of one service nearly always have in common (ports, labels, locality) as one
    // shared, interned Shape. Any other address (a host name, IPv6) is held in a Shape of its own, with its interned
    // string.
    private final int ipv4;
    private final int bits;
    private final Shape shape;

    /**
     * Ports, labels, locality and, for an address that is not IPv4, that address: shared by every endpoint with equal
     * ones (interned when the address is IPv4), with a 64-bit hash of them made once, which a service's version feeds
     * in place of their strings ({@link #putContent}).
     */
    private static final class Shape {
        final String host; // null when the address is ipv4
        final SortedMap<String, Integer> ports;
        final SortedMap<String, String> labels;
        final Locality locality;
        final long hash;

        Shape(String host, SortedMap<String, Integer> ports, SortedMap<String, String> labels, Locality locality) {
            this.host = host;
            this.ports = ports;
            this.labels = labels;
            this.locality = locality;
            Hash64 h = host == null ? new Hash64().putBoolean(true) : new Hash64().putString(host);
            this.hash = h.putMap(ports)
                    .putMap(labels)
                    .putString(locality.region())
                    .putString(locality.zone())
                    .putString(locality.subZone())
                    .finish();
        }

        @Override
        public boolean equals(Object o) {
            return o == this
                    || o instanceof Shape s
                            && hash == s.hash
                            && Objects.equals(host, s.host)
                            && ports.equals(s.ports)
                            && labels.equals(s.labels)
                            && locality.equals(s.locality);
        }

        @Override
        public int hashCode() {
            return (int) (hash ^ (hash >>> 32));
        }
    }

    public Endpoint(
            String address,
            SortedMap<String, Integer> ports,
            int weight,
            boolean enabled,
            Health health,
            SortedMap<String, String> labels,
            Locality locality) {
        Objects.requireNonNull(address, "address");
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
        long packed = IpAddresses.ipv4Bits(address);
        this.ipv4 = (int) packed;
        this.bits = weight | (enabled ? ENABLED_BIT : 0) | (health.ordinal() << HEALTH_SHIFT);
        // equal maps, localities and shapes are shared across endpoints (see CompactSortedMap and Interner)
        Shape made = new Shape(
                packed < 0 ? address.intern() : null,
                CompactSortedMap.copyOf(ports),
                CompactSortedMap.copyOf(labels),
                locality.isEmpty() ? Locality.NONE : LOCALITIES.intern(locality));
        this.shape = made.host == null ? SHAPES.intern(made) : made;
    }

    /**
     * IP address (or, where a registry gives only that, a host name), exactly as given. A dotted IPv4 address is held
     * packed, so each call returns a new string; compare with {@link #sameAddress} where no string is needed.
     */
    public String address() {
        String host = shape.host;
        return host != null ? host : IpAddresses.ipv4Text(ipv4);
    }

    /** True when the address is a canonical dotted IPv4 address (then held as its 32 bits). */
    public boolean isIpv4() {
        return shape.host == null;
    }

    /** True when both endpoints have the same {@link #address()}, without making either string. */
    public boolean sameAddress(Endpoint o) {
        String host = shape.host;
        return host == null ? o.shape.host == null && ipv4 == o.ipv4 : host.equals(o.shape.host);
    }

    /** Real port numbers by service port name, e.g. {@code {dubbo=20880, tri=50051}}. */
    public SortedMap<String, Integer> ports() {
        return shape.ports;
    }

    /** Relative weight, >= 0. */
    public int weight() {
        return bits & WEIGHT_MASK;
    }

    /** False when the registry marks the instance disabled. */
    public boolean enabled() {
        return (bits & ENABLED_BIT) != 0;
    }

    /** Health as the registry reports it. */
    public Health health() {
        return HEALTHS[bits >>> HEALTH_SHIFT];
    }

    /** Sanitized labels, sorted by key. */
    public SortedMap<String, String> labels() {
        return shape.labels;
    }

    /** Region, zone, sub-zone ({@link Locality#NONE} when unknown). */
    public Locality locality() {
        return shape.locality;
    }

    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof Endpoint e && bits == e.bits && ipv4 == e.ipv4 && shape.equals(e.shape);
    }

    @Override
    public int hashCode() {
        String host = shape.host;
        int h = host != null ? host.hashCode() : ipv4;
        h = 31 * h + shape.ports.hashCode();
        h = 31 * h + bits;
        h = 31 * h + shape.labels.hashCode();
        return 31 * h + shape.locality.hashCode();
    }

    @Override
    public String toString() {
        return "Endpoint[address=" + address() + ", ports=" + shape.ports + ", weight=" + weight() + ", enabled="
                + enabled() + ", health=" + health() + ", labels=" + shape.labels + ", locality=" + shape.locality
                + "]";
    }

    /**
     * Feeds everything the endpoint holds into {@code h}, as a service's content version is made: the address, weight,
     * enabled flag and health, and for ports, labels and locality (and an address that is not IPv4) a 64-bit hash of
     * them made once per shared shape, so that their strings are not hashed again for every version. Equal endpoints
     * feed equal values.
     */
    public Hash64 putContent(Hash64 h) {
        Shape s = shape;
        if (s.host == null) h.putInt(ipv4);
        return h.putInt(bits).putLong(s.hash);
    }

    /** True when the endpoint may get traffic at all: enabled and weight > 0 (health is separate). */
    public boolean routable() {
        return enabled() && weight() > 0;
    }

    /** The real port of the given service port name, or 0 when this endpoint does not serve it. */
    public int port(String portName) {
        Integer p = shape.ports.get(portName);
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
        int c = compareAddress(o);
        if (c != 0) return c;
        Shape a = shape;
        Shape b = o.shape;
        if (a != b) {
            c = compareForms(a.ports, b.ports);
            if (c != 0) return c;
        }
        c = Integer.compare(weight(), o.weight());
        if (c != 0) return c;
        if (a != b) {
            c = a.locality.compareTo(b.locality);
            if (c != 0) return c;
            c = compareForms(a.labels, b.labels);
        }
        if (c != 0) return c;
        c = health().compareTo(o.health());
        return c != 0 ? c : Boolean.compare(enabled(), o.enabled());
    }

    /** Orders by {@link #address()} as the strings would, without making them when both are IPv4. */
    public int compareAddress(Endpoint o) {
        if (shape.host == null && o.shape.host == null) return IpAddresses.compareIpv4Text(ipv4, o.ipv4);
        return address().compareTo(o.address());
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
