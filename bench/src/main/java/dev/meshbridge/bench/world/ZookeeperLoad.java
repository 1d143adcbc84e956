package dev.meshbridge.bench.world;

import dev.meshbridge.bench.load.ChangeIds;
import dev.meshbridge.bench.load.ZookeeperCatalog;
import dev.meshbridge.registry.zookeeper.DubboRegistryWriter;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.dubbo.common.URL;
import org.apache.zookeeper.CreateMode;

/**
 * The ZooKeeper side of the load: a real ZooKeeper server (curator-test, on 127.0.0.1), the catalog written as Dubbo
 * providers (the znode names Dubbo's {@code ZookeeperRegistry} writes, built with Dubbo's own {@link URL}), and instance
 * changes made with Dubbo's registry itself: a provider comes back on a new port (registered), then its old
 * registration goes (unregistered).
 */
final class ZookeeperLoad implements AutoCloseable {

    private final ZkServer server;
    private final CuratorFramework client;
    private DubboRegistryWriter dubbo;
    private ZookeeperCatalog catalog;
    private final Map<Long, String> current = new HashMap<>();
    private final Map<Integer, Integer> cursor = new HashMap<>();

    ZookeeperLoad() throws Exception {
        System.setProperty("zookeeper.forceSync", "no");
        server = new ZkServer();
        client = server.client();
    }

    String address() {
        return server.address();
    }

    /** The znode Dubbo's ZookeeperRegistry writes for a provider URL. */
    static String znode(String providerUrl) {
        URL url = URL.valueOf(providerUrl);
        return "/dubbo/" + URL.encode(url.getServiceInterface()) + "/providers/" + URL.encode(url.toFullString());
    }

    /**
     * Writes {@code services x instances} providers (ephemeral, as Dubbo registers them) in multi-op transactions.
     *
     * @return the time it took, ms
     */
    long write(ZookeeperCatalog catalog) throws Exception {
        this.catalog = catalog;
        long start = System.nanoTime();
        if (client.checkExists().forPath("/dubbo") == null) client.create().forPath("/dubbo");
        Semaphore window = new Semaphore(100);
        int batch = 10;
        int batches = (catalog.services() + batch - 1) / batch;
        CountDownLatch done = new CountDownLatch(batches);
        AtomicInteger failures = new AtomicInteger();
        for (int b = 0; b < batches; b++) {
            List<CuratorOp> ops = new ArrayList<>();
            for (int s = b * batch; s < Math.min(catalog.services(), b * batch + batch); s++) {
                String dir = "/dubbo/" + URL.encode(ZookeeperCatalog.iface(s));
                ops.add(client.transactionOp().create().forPath(dir));
                ops.add(client.transactionOp().create().forPath(dir + "/providers"));
                for (int slot = 0; slot < catalog.instances(); slot++) {
                    String url = catalog.providerUrl(s, slot, 20880);
                    current.put(key(s, slot), url);
                    ops.add(client.transactionOp()
                            .create()
                            .withMode(CreateMode.EPHEMERAL)
                            .forPath(znode(url)));
                }
            }
            window.acquire();
            client.transaction()
                    .inBackground((c, e) -> {
                        if (e.getResultCode() != 0) failures.incrementAndGet();
                        window.release();
                        done.countDown();
                    })
                    .forOperations(ops);
        }
        if (!done.await(10, TimeUnit.MINUTES)) throw new IllegalStateException("ZooKeeper writes did not finish");
        if (failures.get() > 0) throw new IllegalStateException(failures.get() + " ZooKeeper transactions failed");
        dubbo = new DubboRegistryWriter(server.address());
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    private static long key(int service, int slot) {
        return (long) service << 16 | slot;
    }

    /**
     * Makes instance changes at a steady rate with Dubbo's registry, recording each one's id and the time just before
     * the write.
     *
     * @param firstId the id of the first change
     */
    List<AdsFleet.Change> changes(int firstId, double perSecond, double seconds, int probeEvery, long seed) {
        List<AdsFleet.Change> made = new ArrayList<>();
        Random random = new Random(seed);
        long period = (long) (1e9 / perSecond);
        int count = (int) Math.round(perSecond * seconds);
        long start = System.nanoTime();
        for (int k = 0; k < count; k++) {
            long due = start + k * period;
            long wait = due - System.nanoTime();
            if (wait > 0) LockSupport.parkNanos(wait);
            int id = firstId + k;
            int service = k % probeEvery == 0 ? catalog.probe() : random.nextInt(catalog.services());
            int slot = cursor.merge(service, 1, Integer::sum) % catalog.instances();
            String next = catalog.providerUrl(service, slot, ChangeIds.port(id));
            String previous = current.put(key(service, slot), next);
            long t0 = System.nanoTime();
            dubbo.register(next);
            if (previous != null) dubbo.unregister(previous);
            made.add(new AdsFleet.Change(id, t0, service));
        }
        return made;
    }

    /**
     * Lists the providers of every service the changes touched, as ZooKeeper holds them now, against what the changes
     * should have left there: {@code services}, {@code missing} (znodes expected but absent), {@code extra} (znodes
     * present but not expected: an old registration not removed).
     */
    Map<String, String> verify(List<AdsFleet.Change> changes) throws Exception {
        java.util.Set<Integer> services = new java.util.TreeSet<>();
        for (AdsFleet.Change c : changes) services.add(c.service());
        int missing = 0;
        int extra = 0;
        for (int s : services) {
            java.util.Set<String> expected = new java.util.HashSet<>();
            for (int slot = 0; slot < catalog.instances(); slot++) {
                String url = current.get(key(s, slot));
                String node = znode(url);
                expected.add(node.substring(node.lastIndexOf('/') + 1));
            }
            String dir = "/dubbo/" + URL.encode(ZookeeperCatalog.iface(s)) + "/providers";
            java.util.Set<String> present =
                    new java.util.HashSet<>(client.getChildren().forPath(dir));
            for (String e : expected) if (!present.remove(e)) missing++;
            extra += present.size();
        }
        Map<String, String> r = new java.util.LinkedHashMap<>();
        r.put("services", Integer.toString(services.size()));
        r.put("missing", Integer.toString(missing));
        r.put("extra", Integer.toString(extra));
        return r;
    }

    @Override
    public void close() throws Exception {
        if (dubbo != null) dubbo.close();
        client.close();
        server.close();
    }
}
