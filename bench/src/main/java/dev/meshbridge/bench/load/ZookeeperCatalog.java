package dev.meshbridge.bench.load;

import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.xds.XdsNames;
import java.util.List;

/**
 * The catalog written into ZooKeeper: Dubbo interface-level providers, {@code /dubbo/<interface>/providers/<encoded
 * URL>}, as Dubbo 3 registers them. The bridge reads it with the real ZooKeeper watcher (registry name {@value
 * #REGISTRY}), so the hosts are the watcher's default names.
 */
public final class ZookeeperCatalog implements Catalog {

    public static final String REGISTRY = "bench-zk";
    public static final String VERSION = "1.0.0";

    private static final HostTemplate HOSTS = DubboNaming.interfaceTemplate(null);

    private final Size size;

    public ZookeeperCatalog(int services, int instances) {
        this.size = new Size(services, instances);
    }

    @Override
    public Size size() {
        return size;
    }

    @Override
    public int probe() {
        return 0;
    }

    public static String iface(int i) {
        return "com.example.pay.s" + i + ".PaymentService";
    }

    static String application(int i) {
        return "pay-app-" + i;
    }

    @Override
    public String host(int i) {
        return DubboNaming.interfaceHost(HOSTS, REGISTRY, iface(i), VERSION, "", application(i));
    }

    @Override
    public Subscription subscription(int i) {
        return new Subscription(List.of(XdsNames.cluster(host(i), 20880)), List.of(), List.of());
    }

    /** The provider URL of an instance; {@code port} 20880 for the original, a change port after a change. */
    public String providerUrl(int i, int slot, int port) {
        return SyntheticCatalog.providerUrl(
                SyntheticCatalog.address(i, slot), port, iface(i), VERSION, "", application(i));
    }
}
