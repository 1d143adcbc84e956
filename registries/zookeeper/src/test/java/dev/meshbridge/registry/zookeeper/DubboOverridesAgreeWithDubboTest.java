package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.dubbo.DubboOverrides;
import dev.meshbridge.core.dubbo.DubboUrl;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.cluster.Configurator;
import org.apache.dubbo.rpc.cluster.configurator.parser.ConfigParser;
import org.apache.dubbo.rpc.cluster.support.ClusterUtils;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.model.ModuleModel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link DubboOverrides} against Dubbo's own consumer-side code on randomized rules and providers: Dubbo 3.3's {@code
 * ConfigParser} and {@code Configurator}s applied to the provider URL merged with a consumer's parameters ({@code
 * ClusterUtils.mergeUrl}), then the registry's {@code enabled} filter and {@code RegistryDirectory}'s rule, and the weight. Each case prints its seed
 * when it fails.
 */
class DubboOverridesAgreeWithDubboTest {

    private static final String IFACE = "org.demo.Greeter";
    private static final int ROUNDS = 600;

    private static FrameworkModel framework;
    private static ModuleModel module;
    private static ClusterUtils clusterUtils;

    @BeforeAll
    static void dubbo() {
        framework = new FrameworkModel();
        ApplicationModel app = framework.newApplication();
        module = app.newModule();
        clusterUtils = new ClusterUtils();
        clusterUtils.setApplicationModel(app);
    }

    @AfterAll
    static void close() {
        framework.destroy();
    }

    private record Case(String provider, String consumerApp, List<String> registryUrls, String serviceRule) {}

    @Test
    void randomizedRulesAndProviders_giveWhatDubbosConsumerGives() {
        long base = new Random().nextLong();
        java.util.Set<String> outcomes = new java.util.TreeSet<>();
        List<String> wanted = List.of("false/100", "true/30", "true/400", "true/70", "true/300");
        // at least ROUNDS rounds, and more (bounded) until the rounds have produced every outcome below
        for (int round = 0; round < ROUNDS || (!outcomes.containsAll(wanted) && round < 20 * ROUNDS); round++) {
            long seed = base + round;
            Case c = generate(new Random(seed));
            String dubbo = dubbo(c);
            String ours = ours(c);
            assertThat(ours)
                    .as(
                            "seed %d: provider %s, consumer app %s, registry rules %s, service rule:%n%s",
                            seed, c.provider(), c.consumerApp(), c.registryUrls(), c.serviceRule())
                    .isEqualTo(dubbo);
            outcomes.add(dubbo);
        }
        // the rounds exercised rules that disable, enable and reweigh, not only providers left as they were
        assertThat(outcomes).containsAll(wanted);
    }

    private static String pick(Random r, String... options) {
        return options[r.nextInt(options.length)];
    }

    private static Case generate(Random r) {
        String ip = pick(r, "10.0.0.1", "10.0.0.2");
        String port = pick(r, "20880", "20881");
        String version = pick(r, "", "1.0.0");
        String group = pick(r, "", "blue");
        StringBuilder provider = new StringBuilder("dubbo://" + ip + ":" + port + "/" + IFACE + "?application=greeter"
                + "&interface=" + IFACE + "&side=provider");
        if (!version.isEmpty()) provider.append("&version=").append(version);
        if (!group.isEmpty()) provider.append("&group=").append(group);
        if (r.nextInt(4) == 0) provider.append("&weight=").append(pick(r, "0", "50", "200"));
        if (r.nextInt(5) == 0) provider.append("&disabled=").append(pick(r, "true", "false"));
        if (r.nextInt(5) == 0) provider.append("&enabled=").append(pick(r, "true", "false"));
        if (r.nextInt(4) == 0) provider.append("&region=").append(pick(r, "east", "west"));
        String consumerApp = pick(r, "shop", "web");

        List<String> registryUrls = new ArrayList<>();
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) {
            String host = pick(r, "0.0.0.0", ip + ":" + port, ip + ":20889", "10.0.0.9", ip);
            StringBuilder u = new StringBuilder("override://" + host + "/" + pick(r, IFACE, "org.demo.Other", "*")
                    + "?category=configurators&dynamic=false");
            if (r.nextBoolean()) u.append("&enabled=").append(pick(r, "true", "false"));
            if (!version.isEmpty() && r.nextBoolean()) u.append("&version=").append(pick(r, version, "9.9"));
            if (!group.isEmpty() && r.nextBoolean()) u.append("&group=").append(group);
            if (r.nextInt(4) == 0) u.append("&application=").append(pick(r, "shop", "web", "*", "greeter"));
            if (r.nextInt(5) == 0) u.append("&side=").append(pick(r, "consumer", "provider"));
            if (r.nextInt(5) == 0) u.append("&~region=").append(pick(r, "east", "west", "*"));
            if (r.nextInt(6) == 0) u.append("&priority=").append(r.nextInt(3));
            if (r.nextBoolean()) u.append("&disabled=").append(pick(r, "true", "false"));
            if (r.nextBoolean()) u.append("&weight=").append(pick(r, "0", "30", "400"));
            if (u.indexOf("&disabled=") < 0 && u.indexOf("&weight=") < 0) u.append("&timeout=100");
            registryUrls.add(u.toString());
        }

        String serviceRule = null;
        if (r.nextInt(3) > 0) {
            String key = IFACE + (version.isEmpty() ? "" : ":" + version);
            if (!group.isEmpty()) key = group + "/" + key;
            if (r.nextInt(6) == 0) key = IFACE + ":9.9";
            StringBuilder y = new StringBuilder(
                    "configVersion: " + pick(r, "v2.7", "v3.0") + "\n" + "scope: service\nkey: " + key + "\n");
            if (r.nextInt(4) == 0) y.append("enabled: ").append(r.nextBoolean()).append('\n');
            y.append("configs:\n");
            int items = 1 + r.nextInt(3);
            for (int i = 0; i < items; i++) {
                y.append("- side: ")
                        .append(pick(r, "consumer", "consumer", "provider"))
                        .append('\n');
                if (r.nextBoolean())
                    y.append("  addresses: [")
                            .append(pick(r, "0.0.0.0", "10.0.0.9"))
                            .append("]\n");
                if (r.nextBoolean()) {
                    y.append("  providerAddresses: [\"")
                            .append(pick(r, ip + ":" + port, ip, "0.0.0.0:*", "0.0.0.0:" + port, "10.0.0.9:20880"))
                            .append("\"]\n");
                }
                if (r.nextInt(4) == 0)
                    y.append("  applications: [").append(pick(r, "shop", "web")).append("]\n");
                y.append("  parameters:\n");
                if (r.nextBoolean())
                    y.append("    disabled: ").append(pick(r, "true", "false")).append('\n');
                y.append("    weight: ").append(pick(r, "0", "70", "300")).append('\n');
            }
            serviceRule = y.toString();
        }
        return new Case(provider.toString(), consumerApp, registryUrls, serviceRule);
    }

    /** What Dubbo's consumer ends with: {@code enabled/weight}. */
    private static String dubbo(Case c) {
        URL provider = URL.valueOf(c.provider()).setScopeModel(module);
        Map<String, String> consumer = new HashMap<>();
        consumer.put("side", "consumer");
        consumer.put("application", c.consumerApp());
        consumer.put("interface", IFACE);
        URL merged = clusterUtils.mergeUrl(provider, consumer);
        List<URL> registry = new ArrayList<>();
        for (String u : c.registryUrls()) registry.add(URL.valueOf(u).setScopeModel(module));
        merged = apply(Configurator.toConfigurators(registry).orElse(List.of()), merged);
        if (c.serviceRule() != null) {
            List<URL> rules = new ArrayList<>();
            for (URL u : ConfigParser.parseConfigurators(c.serviceRule())) rules.add(u.setScopeModel(module));
            merged = apply(Configurator.toConfigurators(rules).orElse(List.of()), merged);
        }
        // Dubbo's registry hands a consumer no provider whose own URL says enabled=false (UrlUtils.isMatch, before any
        // override); RegistryDirectory then reads disabled, else enabled, on the merged and configured URL
        boolean delivered = provider.getParameter("enabled", true);
        boolean enabled = delivered
                && (merged.hasParameter("disabled")
                        ? !merged.getParameter("disabled", false)
                        : merged.getParameter("enabled", true));
        return enabled + "/" + merged.getParameter("weight", 100);
    }

    private static URL apply(List<Configurator> configurators, URL url) {
        for (Configurator c : configurators) url = c.configure(url);
        return url;
    }

    private static String ours(Case c) {
        DubboUrl p = DubboUrl.parse(c.provider());
        DubboOverrides.Provider provider = new DubboOverrides.Provider(
                p.host(),
                p.port(),
                DubboOverrides.serviceKey(p.interfaceName(), p.group(), p.version()),
                p.parameters());
        List<DubboOverrides.Rule> registry = new ArrayList<>();
        List<DubboUrl> urls = c.registryUrls().stream().map(DubboUrl::parse).toList();
        for (DubboUrl u : urls) {
            DubboOverrides.Rule rule = DubboOverrides.fromUrl(u);
            if (rule != null) registry.add(rule);
        }
        List<DubboOverrides.Rule> service = c.serviceRule() == null ? List.of() : DubboOverrides.parse(c.serviceRule());
        Map<String, String> params =
                DubboOverrides.apply(provider, c.consumerApp(), List.of(registry, List.of(), service));
        return DubboNaming.enabled(params) + "/" + DubboNaming.weight(params);
    }
}
