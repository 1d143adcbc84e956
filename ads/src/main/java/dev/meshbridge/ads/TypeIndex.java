package dev.meshbridge.ads;

import dev.meshbridge.core.util.Hash64;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * The current resources of one type, by a dense int id per name, so that per-stream state (subscriptions, pending
 * changes) is bit sets and primitive maps rather than sets of strings. Owned by the serving thread.
 *
 * <p>Ids are given to every name the server makes and every name a client subscribes to. An id is kept while anything
 * refers to it (a served or retired resource, a stream naming it, a stream's pending change of it) and reclaimed after
 * that ({@link #reclaim()}, at the end of each task of the serving thread), so the names clients ever asked for do not
 * accumulate: the index holds what is served and subscribed now, and its id space is as large as that at its peak. A
 * resource that a wildcard subscription includes carries a
 * mask of the node roles whose wildcard subscriptions see it ({@link AdsEngine#ALL_ROLES} for everyone). A removed
 * resource's last body is kept ({@link #retired}) until every stream was told of the removal, so that a
 * state-of-the-world response sent before the removal (make before break) can still carry it.
 */
final class TypeIndex {

    /** The client has no version of the resource. */
    static final long ABSENT = 0;

    /** The client's version is not known: send the resource if it exists, say it does not exist otherwise. */
    static final long UNKNOWN = Long.MIN_VALUE;

    final ResourceType type;
    /** The streams' subscriptions of this type, by resource. */
    final Subscribers subscribers = new Subscribers();

    /**
     * The ids by name: an open-addressed table (linear probing) of {@code id + 1}, 0 for an empty slot, placed by the
     * name's hash and compared through {@link #names}. A {@code HashMap<String, Integer>} cost about 80 bytes per name
     * (node, boxed id, table); this costs 8 at most (a power of two at least twice the names).
     */
    private int[] slots = new int[128];
    /** How many names have an id now. */
    private int live;

    private String[] names = new String[64];
    private long[] nameHashes = new long[64];
    private Resource[] resources = new Resource[64];
    /** Per id, the roles whose wildcard subscriptions include it ({@link AdsEngine#MAX_ROLES} is 8: one byte). */
    private byte[] roleMasks = new byte[64];
    /** The last bodies of removed resources, by id: few and short-lived, so not an array over every id. */
    private Map<Integer, Resource> retired = new HashMap<>();
    /** Per id, how many streams hold a pending change of it. */
    private int[] holds = new int[64];
    /** Ids that may have lost their last reference since the last {@link #reclaim()}. */
    private int[] candidates = new int[16];

    private int candidateCount;
    private int[] free = new int[16];
    private int freeCount;
    private int nextId;
    private int present;
    private final long[] wildcardSums = new long[AdsEngine.MAX_ROLES];

    TypeIndex(ResourceType type) {
        this.type = type;
    }

    /** The id of a name, given one when new. */
    int id(String name) {
        int slot = slotOf(name);
        if (slot >= 0) return slots[slot] - 1;
        int n;
        if (freeCount > 0) {
            n = free[--freeCount];
        } else {
            n = nextId++;
            if (n == names.length) {
                int len = names.length * 2;
                names = Arrays.copyOf(names, len);
                nameHashes = Arrays.copyOf(nameHashes, len);
                resources = Arrays.copyOf(resources, len);
                roleMasks = Arrays.copyOf(roleMasks, len);
                holds = Arrays.copyOf(holds, len);
            }
        }
        names[n] = name;
        nameHashes[n] = Hash64.of(name);
        if (2 * (live + 1) > slots.length) {
            rehash(slots.length * 2);
            slots[-1 - slotOf(name)] = n + 1;
        } else {
            slots[-1 - slot] = n + 1;
        }
        live++;
        candidate(n); // a name asked for and then not subscribed (a refused request) goes again
        return n;
    }

    /** A stream now holds a pending change of this id. */
    void hold(int id) {
        holds[id]++;
    }

    /** A stream no longer holds a pending change of this id. */
    void release(int id) {
        if (--holds[id] == 0) candidate(id);
    }

    /** The id may have lost its last reference; {@link #reclaim()} checks. */
    void candidate(int id) {
        if (candidateCount == candidates.length) candidates = Arrays.copyOf(candidates, candidateCount * 2);
        candidates[candidateCount++] = id;
    }

    /**
     * Forgets the names nothing refers to any more (no resource, no retired body, no stream naming it, no pending
     * change), and keeps their ids for new names. Called by the serving thread between tasks, never while a task may
     * still hold an id in a local variable.
     *
     * @return how many names were forgotten
     */
    int reclaim() {
        if (candidateCount == 0) return 0;
        int n = 0;
        for (int i = 0; i < candidateCount; i++) {
            int id = candidates[i];
            String name = names[id];
            if (name == null
                    || resources[id] != null
                    || (!retired.isEmpty() && retired.containsKey(id))
                    || holds[id] != 0
                    || !subscribers.naming(id).isEmpty()) {
                continue;
            }
            removeSlot(slotOf(name));
            live--;
            names[id] = null;
            nameHashes[id] = 0;
            roleMasks[id] = 0;
            if (freeCount == free.length) free = Arrays.copyOf(free, freeCount * 2);
            free[freeCount++] = id;
            n++;
        }
        candidateCount = 0;
        if (candidates.length > 1024) candidates = new int[16];
        if (slots.length > 8192 && 8 * live < slots.length) rehash(Math.max(128, Integer.highestOneBit(live) * 4));
        return n;
    }

    /** How many names have an id now (served, retired or subscribed). */
    int liveNames() {
        return live;
    }

    /** The id of a known name, or -1. */
    int find(String name) {
        int slot = slotOf(name);
        return slot >= 0 ? slots[slot] - 1 : -1;
    }

    private static int spread(String name) {
        int h = name.hashCode() * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /** The slot holding the name's id, or {@code -1 - slot} of the empty slot where it would go. */
    private int slotOf(String name) {
        int mask = slots.length - 1;
        for (int i = spread(name) & mask; ; i = (i + 1) & mask) {
            int v = slots[i];
            if (v == 0) return -1 - i;
            if (names[v - 1].equals(name)) return i;
        }
    }

    /** Empties a slot and moves back the entries after it that could not sit at their place (linear probing). */
    private void removeSlot(int i) {
        int mask = slots.length - 1;
        int hole = i;
        for (int j = (i + 1) & mask; slots[j] != 0; j = (j + 1) & mask) {
            int home = spread(names[slots[j] - 1]) & mask;
            // the entry at j stays when its home lies cyclically in (hole, j]
            boolean stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
            if (!stays) {
                slots[hole] = slots[j];
                hole = j;
            }
        }
        slots[hole] = 0;
    }

    private void rehash(int capacity) {
        int[] old = slots;
        slots = new int[capacity];
        int mask = capacity - 1;
        for (int v : old) {
            if (v == 0) continue;
            int i = spread(names[v - 1]) & mask;
            while (slots[i] != 0) i = (i + 1) & mask;
            slots[i] = v;
        }
    }

    String name(int id) {
        return names[id];
    }

    Resource get(int id) {
        return resources[id];
    }

    /** The last body of a removed resource, while a stream may still need it; null otherwise. */
    Resource retired(int id) {
        return retired.isEmpty() ? null : retired.get(id);
    }

    /** The current version hash of the resource, {@link #ABSENT} when there is none. */
    long version(int id) {
        Resource r = resources[id];
        return r == null ? ABSENT : r.versionHash();
    }

    /** The roles whose wildcard subscriptions include the resource (0 when none or absent). */
    int roleMask(int id) {
        return resources[id] == null ? 0 : roleMasks[id] & 0xff;
    }

    boolean wildcardVisible(int id, int role) {
        return (roleMask(id) & (1 << role)) != 0;
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

    /** The sum of {@link #contribution} over every resource a wildcard subscription of this role includes. */
    long wildcardSum(int role) {
        return wildcardSums[role];
    }

    /**
     * Sets the resource of an id.
     *
     * @param mask the roles whose wildcard subscriptions include it (ignored when {@code r.wildcard()} is false)
     * @return the version it replaces ({@link #ABSENT} when none)
     */
    long put(int id, Resource r, int mask) {
        Resource old = resources[id];
        if (old != null) {
            addWildcard(id, old.versionHash(), roleMasks[id] & 0xff, -1);
        } else {
            present++;
        }
        int m = r.wildcard() ? mask : 0;
        resources[id] = r;
        roleMasks[id] = (byte) m;
        if (!retired.isEmpty()) retired.remove(id);
        addWildcard(id, r.versionHash(), m, 1);
        return old == null ? ABSENT : old.versionHash();
    }

    /**
     * Removes the resource of an id; returns its version ({@link #ABSENT} when there was none).
     *
     * @param keep keep its body until every stream was told (some stream subscribes to it)
     */
    long remove(int id, boolean keep) {
        Resource old = resources[id];
        if (old == null) return ABSENT;
        addWildcard(id, old.versionHash(), roleMasks[id] & 0xff, -1);
        resources[id] = null;
        if (keep) {
            retired.put(id, old);
        } else {
            candidate(id);
        }
        present--;
        return old.versionHash();
    }

    /** Forgets the bodies of removed resources: every stream has been told. */
    void clearRetired() {
        if (retired.isEmpty()) return;
        int[] ids = new int[retired.size()];
        int n = 0;
        for (int id : retired.keySet()) ids[n++] = id;
        Arrays.sort(ids); // in id order, as the ids are freed
        for (int id : ids) candidate(id);
        retired = new HashMap<>(); // a HashMap keeps the table it grew to
    }

    private void addWildcard(int id, long version, int mask, int sign) {
        if (mask == 0) return;
        long c = contribution(id, version) * sign;
        for (int role = 0; role < AdsEngine.MAX_ROLES; role++) {
            if ((mask & (1 << role)) != 0) wildcardSums[role] += c;
        }
    }

    /** Visits the ids of every present resource a wildcard subscription of this role includes. */
    void forEachWildcard(int role, IntConsumer action) {
        int bit = 1 << role;
        for (int i = 0; i < nextId; i++) {
            if (resources[i] != null && (roleMasks[i] & 0xff & bit) != 0) action.accept(i);
        }
    }
}
