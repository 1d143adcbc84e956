package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.testing.Differential.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.utils.UrlUtils;
import org.apache.dubbo.registry.NotifyListener;
import org.apache.dubbo.registry.Registry;
import org.apache.dubbo.registry.RegistryFactory;
import org.apache.dubbo.rpc.Protocol;
import org.apache.dubbo.rpc.cluster.Configurator;
import org.apache.dubbo.rpc.cluster.configurator.parser.ConfigParser;
import org.apache.dubbo.rpc.cluster.support.ClusterUtils;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * Dubbo's own consumer side of interface-level discovery, as the oracle of the differential suite: Dubbo's ZooKeeper
 * registry subscribes to an interface's {@code providers} and {@code configurators} under one root and its {@link
 * NotifyListener} gets the full lists; for one service identity the providers a consumer would call are then chosen
 * with Dubbo's own code, in the order Dubbo's {@code RegistryDirectory} does it:
 *
 * <ol>
 *   <li>the registry notifies that consumer (subscribed with the identity's consumer URL, as a real reference does)
 *       the providers and Dubbo 2.6 {@code override://} URLs that match it (Dubbo's {@link UrlUtils#isMatch}:
 *       interface, category, {@code enabled}, group, version, classifier);
 *   <li>unknown protocols and {@code empty://} are left out;
 *   <li>the provider URL is merged with the consumer's parameters ({@link ClusterUtils#mergeUrl}) and the
 *       configurators are applied to it: the registry's {@code override://} URLs, then the config center's rule of the
 *       service ({@code <interface>:<version>:<group>.configurators}, Dubbo 2.7+ YAML parsed by {@link ConfigParser});
 *   <li>the provider is called unless {@code disabled=true}, or, without {@code disabled}, {@code enabled=false}; its
 *       weight is the merged URL's {@code weight} (default 100). Warm-up (a weight that grows for 10 minutes after the
 *       provider's {@code timestamp}) is not modelled: the suite's providers are older than that.
 * </ol>
 */
final class DubboConsumerOracle implements AutoCloseable {

    static final String CONSUMER_APPLICATION = "diff-consumer";

    private final FrameworkModel framework = new FrameworkModel();
    private final ApplicationModel app = framework.newApplication();
    private final ClusterUtils cluster = new ClusterUtils();
    private final Registry registry;
    private final String root;
    private final Map<String, Listener> listeners = new ConcurrentHashMap<>();

    /** A consumer of the root {@code root} (e.g. {@code /dubbo}) of the ZooKeeper at {@code address}. */
    DubboConsumerOracle(String address, String root) {
        this.root = root;
        cluster.setApplicationModel(app);
        URL url = URL.valueOf("zookeeper://" + address + "/org.apache.dubbo.registry.RegistryService?file.cache=false"
                        + "&check=true&delay-notification=0&group=" + root.substring(1))
                .setScopeModel(app);
        // delay-notification=0: Dubbo's ZooKeeper registry otherwise holds each change of a path for up to 5 s (its
        // default, by sleeping on the ZooKeeper event thread); the lists it notifies are the same, only later
        registry = app.getExtensionLoader(RegistryFactory.class)
                .getExtension("zookeeper")
                .getRegistry(url);
    }

    /** The latest lists Dubbo notified for one interface, by category. */
    private static final class Listener implements NotifyListener {
        final Map<String, List<URL>> byCategory = new ConcurrentHashMap<>();

        @Override
        public void notify(List<URL> urls) {
            if (urls.isEmpty()) return;
            String category = urls.get(0).getCategory("providers");
            List<URL> real = new ArrayList<>();
            for (URL u : urls) if (!"empty".equals(u.getProtocol())) real.add(u);
            byCategory.put(category, List.copyOf(real));
        }
    }

    /** Subscribes (once) as a consumer of {@code (iface, version, group)} does. */
    void subscribe(String iface, String version, String group) {
        listeners.computeIfAbsent(key(iface, version, group), k -> {
            Listener l = new Listener();
            registry.subscribe(consumerUrl(iface, version, group), l);
            return l;
        });
    }

    private static String key(String iface, String version, String group) {
        return iface + ":" + version + ":" + group;
    }

    /** The provider URLs Dubbo has notified to the consumer of {@code (iface, version, group)}. */
    List<URL> providers(String iface, String version, String group) {
        Listener l = listeners.get(key(iface, version, group));
        return l == null ? List.of() : l.byCategory.getOrDefault("providers", List.of());
    }

    /** The {@code override://} URLs Dubbo has notified to that consumer. */
    List<URL> overrides(String iface, String version, String group) {
        Listener l = listeners.get(key(iface, version, group));
        return l == null ? List.of() : l.byCategory.getOrDefault("configurators", List.of());
    }

    /** Whether Dubbo's registry gives {@code url} (as written) to the consumer of {@code (iface, version, group)}. */
    boolean matches(String iface, String version, String group, String url) {
        return UrlUtils.isMatch(consumerUrl(iface, version, group), URL.valueOf(url));
    }

    /**
     * The providers a consumer of {@code (iface, version, group)} would call, with their weights and protocols.
     *
     * @param configCenterRule the YAML in the config center for this service, or null
     */
    SortedSet<Target> callable(String iface, String version, String group, String configCenterRule) {
        URL consumer = consumerUrl(iface, version, group);
        List<Configurator> configurators = new ArrayList<>();
        Configurator.toConfigurators(new ArrayList<>(overrides(iface, version, group)))
                .ifPresent(configurators::addAll);
        if (configCenterRule != null) {
            List<URL> parsed = new ArrayList<>();
            for (URL u : ConfigParser.parseConfigurators(configCenterRule)) parsed.add(u.setScopeModel(app));
            Configurator.toConfigurators(parsed).ifPresent(configurators::addAll);
        }
        SortedSet<Target> out = new TreeSet<>();
        for (URL provider : providers(iface, version, group)) {
            if (!framework.getExtensionLoader(Protocol.class).hasExtension(provider.getProtocol())) continue;
            URL merged = cluster.mergeUrl(provider, consumer.getParameters());
            for (Configurator c : configurators) merged = c.configure(merged);
            boolean enabled = merged.hasParameter("disabled")
                    ? !merged.getParameter("disabled", false)
                    : merged.getParameter("enabled", true);
            if (!enabled) continue;
            int weight = merged.getParameter("weight", 100);
            if (weight <= 0) continue;
            out.add(new Target(
                    provider.getHost(),
                    provider.getPort(),
                    weight,
                    new TreeMap<>(Map.of("protocol", provider.getProtocol()))));
        }
        return out;
    }

    /** The config-center key of a service's rule, as Dubbo's consumer looks it up ({@code iface:version:group}). */
    static String ruleKey(String iface, String version, String group) {
        return iface + ":" + version + ":" + group + ".configurators";
    }

    private URL consumerUrl(String iface, String version, String group) {
        Map<String, String> p = new HashMap<>();
        p.put("interface", iface);
        p.put("category", "providers,configurators,routers");
        p.put("check", "false");
        p.put("side", "consumer");
        p.put("application", CONSUMER_APPLICATION);
        if (!version.isEmpty()) p.put("version", version);
        if (!group.isEmpty()) p.put("group", group);
        StringBuilder sb =
                new StringBuilder("consumer://127.0.0.1/").append(iface).append('?');
        p.forEach((k, v) -> sb.append(k).append('=').append(v).append('&'));
        return URL.valueOf(sb.substring(0, sb.length() - 1)).setScopeModel(app);
    }

    String root() {
        return root;
    }

    @Override
    public void close() {
        registry.destroy();
        framework.destroy();
    }
}
