package dev.meshbridge.registry.nacos;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.common.Constants;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.pojo.Instance;
import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.dubbo.DubboUrl;
import dev.meshbridge.core.spi.EventSink;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.testing.TestCatalog;
import dev.meshbridge.core.watch.HostResolver;
import dev.meshbridge.core.watch.Ticker;
import dev.meshbridge.core.watch.WatcherRuntime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/** Test helpers: configurations written as a user writes them, and registrations made as real frameworks make them. */
final class NacosTestSupport {

    static {
        // as the watcher does before its first client: nacos-client logs through the bridge's logging configuration,
        // never through its own (which writes files under ~/logs/nacos)
        if (System.getProperty("nacos.logging.default.config.enabled") == null) {
            System.setProperty("nacos.logging.default.config.enabled", "false");
        }
    }

    private NacosTestSupport() {}

    /**
     * A validated registry entry from YAML, through the same parser the bridge uses.
     *
     * @param fields the entry's fields after {@code type}, {@code name} and {@code addresses}, as YAML lines
     */
    static RegistryConfig config(String name, String address, String... fields) {
        StringBuilder yaml = new StringBuilder("registries:\n  - type: nacos\n    name: ")
                .append(name)
                .append("\n    addresses: [\"")
                .append(address)
                .append("\"]\n");
        for (String f : fields) yaml.append("    ").append(f).append('\n');
        try {
            ConfigNode root = ConfigNode.parse("bridge.yaml", yaml.toString());
            List<RegistryConfig> parsed = RegistriesConfig.parse(root, Map.of("nacos", new NacosWatcherProvider()));
            root.finish();
            return parsed.get(0);
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * A watcher's context on {@code ticker}'s time, with the catalog's status for the registry, whose events go to
     * {@code first} and then into the catalog.
     */
    static WatcherContext context(RegistryConfig config, TestCatalog catalog, Ticker ticker, EventSink first) {
        WatcherContext forCatalog = catalog.context(config);
        return new WatcherContext(
                config,
                e -> {
                    first.accept(e);
                    forCatalog.events().accept(e);
                },
                forCatalog.status(),
                new WatcherRuntime(ticker, HostResolver.Lookup.SYSTEM));
    }

    /**
     * A second, independent nacos-client, as an application uses it to register itself (one gRPC connection, like
     * one application process).
     */
    static NamingService registrant(String address, String namespace, String username, String password)
            throws NacosException {
        return registrant(address, namespace, username, password, null);
    }

    /**
     * As {@link #registrant(String, String, String, String)}, with nacos-client's redo period ({@code redoDelayTime},
     * 3 s by default) changed. The redo task re-sends a registration that is still in flight; a benchmark that
     * re-registers hundreds of times in a row sets it long, so that a re-sent older registration cannot overtake a
     * newer one.
     */
    static NamingService registrant(
            String address, String namespace, String username, String password, Duration redoDelay)
            throws NacosException {
        Properties p = new Properties();
        if (redoDelay != null) p.setProperty(PropertyKeyConst.REDO_DELAY_TIME, Long.toString(redoDelay.toMillis()));
        if (username != null) {
            p.setProperty(PropertyKeyConst.USERNAME, username);
            p.setProperty(PropertyKeyConst.PASSWORD, password);
        }
        return registrant(address, namespace, p);
    }

    /**
     * A registrant whose nacos-client is configured with these properties on top of the usual ones, as an
     * application writes them ({@code nacos.remote.client.rpc.tls.*}, {@code accessKey}/{@code secretKey}).
     */
    static NamingService registrant(String address, String namespace, Properties extra) throws NacosException {
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, address);
        p.setProperty(PropertyKeyConst.NAMESPACE, namespace);
        p.setProperty(PropertyKeyConst.NAMING_LOAD_CACHE_AT_START, "false");
        p.setProperty(
                "JM.SNAPSHOT.PATH",
                Path.of("target", "nacos-registrants").toAbsolutePath().toString());
        p.setProperty(PropertyKeyConst.ENABLE_CLIENT_METRICS, "false");
        p.putAll(extra);
        return NamingFactory.createNamingService(p);
    }

    /**
     * A config client as Dubbo's config center on Nacos (or dubbo-admin) uses to write rules: {@code
     * publishConfig(dataId, "dubbo", content)}.
     */
    static com.alibaba.nacos.api.config.ConfigService configClient(String address, String namespace)
            throws NacosException {
        // the config client reads its snapshot path once per process, from the system property only
        String snapshots =
                Path.of("target", "nacos-registrants").toAbsolutePath().toString();
        if (System.getProperty("JM.SNAPSHOT.PATH") == null) System.setProperty("JM.SNAPSHOT.PATH", snapshots);
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, address);
        p.setProperty(PropertyKeyConst.NAMESPACE, namespace);
        p.setProperty(PropertyKeyConst.ENABLE_CLIENT_METRICS, "false");
        return com.alibaba.nacos.api.config.ConfigFactory.createConfigService(p);
    }

    static void shutDown(NamingService n) {
        if (n == null) return;
        try {
            n.shutDown();
        } catch (NacosException e) {
            // test cleanup
        }
    }

    /**
     * The instance Spring Cloud Alibaba's {@code NacosServiceRegistry} registers for an application: cluster
     * {@code DEFAULT}, the configured weight, enabled, ephemeral, and the registration metadata with
     * {@code preserved.register.source=SPRING_CLOUD}.
     */
    static Instance springCloudInstance(String ip, int port, double weight, Map<String, String> metadata) {
        Instance i = new Instance();
        i.setIp(ip);
        i.setPort(port);
        i.setWeight(weight);
        i.setClusterName("DEFAULT");
        i.setEnabled(true);
        i.setEphemeral(true);
        Map<String, String> m = new HashMap<>(metadata);
        m.put("preserved.register.source", "SPRING_CLOUD");
        i.setMetadata(m);
        return i;
    }

    static Instance springCloudInstance(String ip, int port) {
        return springCloudInstance(ip, port, 1.0, Map.of());
    }

    /** The Nacos service name Dubbo's {@code NacosRegistry} gives a provider URL: {@code providers:<iface>:<ver>:<grp>}. */
    static String dubboServiceName(String providerUrl) {
        DubboUrl url = DubboUrl.parse(providerUrl);
        return "providers:" + url.interfaceName() + ":" + url.version() + ":" + url.group();
    }

    /**
     * The instance Dubbo's {@code NacosRegistry.createInstance} builds from a provider URL: the URL's host and port,
     * and as metadata every URL parameter plus {@code category}, {@code protocol} and {@code path}. Dubbo sets no
     * Nacos weight (its {@code weight} parameter travels in the metadata).
     */
    static Instance dubboInterfaceInstance(String providerUrl) {
        DubboUrl url = DubboUrl.parse(providerUrl);
        Map<String, String> metadata = new HashMap<>(url.parameters());
        metadata.put("category", url.category());
        metadata.put("protocol", url.protocol());
        metadata.put("path", url.path());
        Instance i = new Instance();
        i.setIp(url.host());
        i.setPort(url.port());
        i.setMetadata(metadata);
        return i;
    }

    /**
     * The instance Dubbo 3's {@code NacosServiceDiscovery} registers for an application: service name = application,
     * host and port of the instance, and the service-instance metadata ({@code dubbo.endpoints},
     * {@code dubbo.metadata.revision}, {@code dubbo.metadata.storage-type}).
     */
    static Instance dubboApplicationInstance(String ip, int port, String endpointsJson, String revision) {
        Map<String, String> metadata = new HashMap<>();
        metadata.put("dubbo.endpoints", endpointsJson);
        metadata.put("dubbo.metadata.revision", revision);
        metadata.put("dubbo.metadata.storage-type", "local");
        metadata.put("timestamp", "1700000000000");
        Instance i = new Instance();
        i.setIp(ip);
        i.setPort(port);
        i.setMetadata(metadata);
        i.setEnabled(true);
        i.setHealthy(true);
        return i;
    }

    static String defaultGroup() {
        return Constants.DEFAULT_GROUP;
    }
}
