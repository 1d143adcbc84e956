package dev.meshbridge.registry.zookeeper;

import org.apache.dubbo.common.URL;
import org.apache.dubbo.registry.Registry;
import org.apache.dubbo.registry.RegistryFactory;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * Registers and unregisters provider URLs with Dubbo's own ZooKeeper registry ({@code ZookeeperRegistry}), which
 * writes exactly the znodes a Dubbo provider writes ({@code /dubbo/<interface>/providers/<encoded URL>}), for any
 * address: a real provider would refuse to register a 127.x address.
 */
public final class DubboRegistryWriter implements AutoCloseable {

    private final FrameworkModel framework = new FrameworkModel();
    private final Registry registry;

    public DubboRegistryWriter(String zookeeperAddress) {
        this(zookeeperAddress, "/dubbo");
    }

    /** A writer under another root ({@code /gray}: Dubbo's registry {@code group=gray}). */
    public DubboRegistryWriter(String zookeeperAddress, String root) {
        ApplicationModel app = framework.newApplication();
        URL url = URL.valueOf("zookeeper://" + zookeeperAddress
                        + "/org.apache.dubbo.registry.RegistryService?file.cache=false&check=true&group="
                        + root.substring(1))
                .setScopeModel(app);
        RegistryFactory factory = app.getExtensionLoader(RegistryFactory.class).getExtension("zookeeper");
        registry = factory.getRegistry(url);
    }

    public void register(String providerUrl) {
        registry.register(URL.valueOf(providerUrl));
    }

    public void unregister(String providerUrl) {
        registry.unregister(URL.valueOf(providerUrl));
    }

    @Override
    public void close() {
        registry.destroy();
        framework.destroy();
    }
}
