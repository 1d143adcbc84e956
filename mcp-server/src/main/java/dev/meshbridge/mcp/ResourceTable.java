package dev.meshbridge.mcp;

import com.google.protobuf.Any;
import com.google.protobuf.Timestamp;
import dev.meshbridge.core.util.Hash64;
import java.util.Collection;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

/**
 * Every resource of one kind the server serves, by {@code namespace/name}, with a version of the whole set that is
 * kept up to date in O(1) per change (an order-independent sum of per-resource hashes). Owned by the server's
 * thread.
 */
final class ResourceTable {

    /**
     * A resource as it is on the wire (only what serving needs is kept, so the catalog is held once).
     *
     * @param name {@code namespace/name}
     * @param version the resource's content version
     * @param host the catalog host it was made from
     * @param createTime when the server first served this name (kept while the resource exists)
     * @param wire the {@code istio.mcp.v1alpha1.Resource} Any that goes into responses
     */
    record Served(String name, String version, String host, Timestamp createTime, Any wire) {}

    private final TreeMap<String, Served> byName = new TreeMap<>();
    private long sum;

    /** Version of an empty table (also what a kind the bridge does not produce answers with). */
    static final String EMPTY_VERSION = Hash64.toHex(Hash64.mix(0));

    Served get(String name) {
        return byName.get(name);
    }

    Served put(Served served) {
        Served previous = byName.put(served.name(), served);
        if (previous != null) sum -= contribution(previous);
        sum += contribution(served);
        return previous;
    }

    Served remove(String name) {
        Served previous = byName.remove(name);
        if (previous != null) sum -= contribution(previous);
        return previous;
    }

    int size() {
        return byName.size();
    }

    Collection<Served> all() {
        return byName.values();
    }

    Set<String> names() {
        return byName.keySet();
    }

    NavigableMap<String, Served> map() {
        return byName;
    }

    /** Content version of the whole set: equal sets, equal versions. */
    String version() {
        return Hash64.toHex(Hash64.mix(sum));
    }

    /** Content version of a subset (a client that asked for named resources). */
    String version(Collection<String> names) {
        long s = 0;
        for (String n : names) {
            Served served = byName.get(n);
            if (served != null) s += contribution(served);
        }
        return Hash64.toHex(Hash64.mix(s));
    }

    private static long contribution(Served s) {
        return Hash64.mix(
                new Hash64().putString(s.name()).putString(s.version()).finish());
    }
}
