package dev.meshbridge.core.testing;

import dev.meshbridge.core.watch.HostResolver;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A host-name lookup from a table the test edits: a name not in it does not resolve. Counts lookups per name. */
public final class TableLookup implements HostResolver.Lookup {

    private final Map<String, List<String>> table = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

    public TableLookup put(String name, String... addresses) {
        table.put(name, List.of(addresses));
        return this;
    }

    public TableLookup remove(String name) {
        table.remove(name);
        return this;
    }

    public int lookups(String name) {
        AtomicInteger c = counts.get(name);
        return c == null ? 0 : c.get();
    }

    @Override
    public InetAddress[] lookup(String host) throws UnknownHostException {
        counts.computeIfAbsent(host, h -> new AtomicInteger()).incrementAndGet();
        List<String> addresses = table.get(host);
        if (addresses == null) throw new UnknownHostException(host);
        InetAddress[] out = new InetAddress[addresses.size()];
        for (int i = 0; i < out.length; i++) out[i] = InetAddress.getByName(addresses.get(i)); // literals only
        return out;
    }
}
