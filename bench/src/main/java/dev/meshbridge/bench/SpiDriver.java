package dev.meshbridge.bench;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.spi.EventSink;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

/**
 * Instance changes through the watcher SPI, as a watcher sends them: the full endpoint list of the changed service, in
 * which one instance came back on a new port (the port carries the change id). The time a change enters the bridge
 * (just before {@code accept}) goes to the load process, whose clients time its arrival.
 */
final class SpiDriver {

    private final SyntheticCatalog catalog;
    private final EventSink sink;
    private final World world;
    private final IntSupplier ids;
    private final Random random;
    private final Map<Integer, int[]> slots = new HashMap<>();
    private final Map<Integer, Integer> cursor = new HashMap<>();
    private int lastService = -1;
    private ProbeListener probes;

    /** Told of every change to the probe service, with the time it entered the bridge. */
    interface ProbeListener {
        void changed(int id, long t0);
    }

    SpiDriver probes(ProbeListener listener) {
        this.probes = listener;
        return this;
    }

    /**
     * @param world where the change times go; null when no client measures them
     * @param ids the change ids: for windows that clients time, one growing sequence shared by every such driver (a
     *     client reads the largest id of a service as its latest change); with no client, ids below those
     */
    SpiDriver(SyntheticCatalog catalog, EventSink sink, World world, IntSupplier ids, long seed) {
        this.catalog = catalog;
        this.sink = sink;
        this.world = world;
        this.ids = ids;
        this.random = new Random(seed);
    }

    /** Changes one instance of {@code service}; returns the change id. */
    int change(int service) {
        int id = ids.getAsInt();
        int slot = cursor.merge(service, 1, Integer::sum) % catalog.instances();
        int[] s = slots.computeIfAbsent(service, k -> new int[catalog.instances()]);
        if (s[slot] == id) id = ids.getAsInt(); // a change must change something
        s[slot] = id;
        ServiceUpsert upsert = catalog.upsert(service, s);
        long t0 = System.nanoTime();
        sink.accept(upsert);
        lastService = service;
        if (probes != null && service == catalog.probe()) probes.changed(id, t0);
        if (world != null) {
            try {
                world.t0(id, t0, service);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return id;
    }

    /** A service other than the probe, at random. */
    int randomService() {
        int s;
        do {
            s = random.nextInt(catalog.services());
        } while (s == catalog.probe());
        return s;
    }

    int lastService() {
        return lastService;
    }

    /**
     * Makes {@code count} changes at a steady rate; every {@code probeEvery}-th goes to the probe service, the others to
     * services at random.
     *
     * @return the id of the last change
     */
    int run(double perSecond, int count, int probeEvery) {
        long period = (long) (1e9 / perSecond);
        long start = System.nanoTime();
        int last = -1;
        for (int k = 0; k < count; k++) {
            long wait = start + k * period - System.nanoTime();
            if (wait > 0) LockSupport.parkNanos(wait);
            last = change(k % probeEvery == 0 ? catalog.probe() : randomService());
        }
        return last;
    }
}
