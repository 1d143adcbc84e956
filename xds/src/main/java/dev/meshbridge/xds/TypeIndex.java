package dev.meshbridge.xds;

import dev.meshbridge.core.util.Hash64;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * The current resources of one type, by a dense int id per name, so that per-stream state (subscriptions, pending
 * changes) is bit sets and primitive maps rather than sets of strings. Owned by the server's thread.
 *
 * <p>Ids are given to every name the server makes and every name a client subscribes to, and are kept for the life
 * of the server (a name that comes back gets its old id).
 */
final class TypeIndex {

    /** The client has no version of the resource. */
    static final long ABSENT = 0;

    /** The client's version is not known: send the resource if it exists, say it does not exist otherwise. */
    static final long UNKNOWN = Long.MIN_VALUE;

    final XdsType type;
    /** The streams' subscriptions of this type, by resource. */
    final Subscribers subscribers = new Subscribers();

    private final Map<String, Integer> ids = new HashMap<>();
    private String[] names = new String[64];
    private long[] nameHashes = new long[64];
    private XdsResource[] resources = new XdsResource[64];
    private int nextId;
    private int present;
    private long wildcardSum;

    TypeIndex(XdsType type) {
        this.type = type;
    }

    /** The id of a name, given one when new. */
    int id(String name) {
        Integer id = ids.get(name);
        if (id != null) return id;
        int n = nextId++;
        if (n == names.length) {
            int len = names.length * 2;
            names = Arrays.copyOf(names, len);
            nameHashes = Arrays.copyOf(nameHashes, len);
            resources = Arrays.copyOf(resources, len);
        }
        names[n] = name;
        nameHashes[n] = Hash64.of(name);
        ids.put(name, n);
        return n;
    }

    /** The id of a known name, or -1. */
    int find(String name) {
        Integer id = ids.get(name);
        return id == null ? -1 : id;
    }

    String name(int id) {
        return names[id];
    }

    XdsResource get(int id) {
        return resources[id];
    }

    /** The current version hash of the resource, {@link #ABSENT} when there is none. */
    long version(int id) {
        XdsResource r = resources[id];
        return r == null ? ABSENT : r.versionHash();
    }

    boolean wildcardVisible(int id) {
        XdsResource r = resources[id];
        return r != null && r.wildcard();
    }

    /** Ids ever given; every id is below this. */
    int idLimit() {
        return nextId;
    }

    int size() {
        return present;
    }

    /**
     * What one resource at one version adds to a view version (an order-independent sum over the resources a client
     * holds); 0 for absent or unknown.
     */
    long contribution(int id, long version) {
        if (version == ABSENT || version == UNKNOWN) return 0;
        return Hash64.mix(nameHashes[id] * 0x9E3779B97F4A7C15L + version);
    }

    /** The sum of {@link #contribution} over every resource a wildcard subscription includes. */
    long wildcardSum() {
        return wildcardSum;
    }

    /** Sets the resource of an id; returns the version it replaces ({@link #ABSENT} when none). */
    long put(int id, XdsResource r) {
        XdsResource old = resources[id];
        if (old != null) {
            if (old.wildcard()) wildcardSum -= contribution(id, old.versionHash());
        } else {
            present++;
        }
        resources[id] = r;
        if (r.wildcard()) wildcardSum += contribution(id, r.versionHash());
        return old == null ? ABSENT : old.versionHash();
    }

    /** Removes the resource of an id; returns its version ({@link #ABSENT} when there was none). */
    long remove(int id) {
        XdsResource old = resources[id];
        if (old == null) return ABSENT;
        if (old.wildcard()) wildcardSum -= contribution(id, old.versionHash());
        resources[id] = null;
        present--;
        return old.versionHash();
    }

    /** Visits the ids of every present resource a wildcard subscription includes. */
    void forEachWildcard(IntConsumer action) {
        for (int i = 0; i < nextId; i++) {
            XdsResource r = resources[i];
            if (r != null && r.wildcard()) action.accept(i);
        }
    }
}
