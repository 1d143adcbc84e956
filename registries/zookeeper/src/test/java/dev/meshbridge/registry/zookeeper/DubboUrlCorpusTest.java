package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.dubbo.DubboUrl;
import dev.meshbridge.core.testing.Differential;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.URLStrParser;
import org.junit.jupiter.api.Test;

/**
 * The bridge's {@link DubboUrl} against Dubbo's own {@link URL} over a seeded corpus of provider URLs in every shape
 * Dubbo 2.6, 2.7 and 3.x write into ZooKeeper: generated parameters, {@code default.} keys (2.6 and 2.7.0-2.7.2),
 * IPv4 and IPv6 hosts, encoded values ({@code +}, {@code %}, spaces, {@code =}, {@code &}, commas, non-ASCII). Each
 * URL becomes a znode name as the Dubbo that wrote it did ({@code URL.encode(url.toFullString())} of Dubbo 2.6, which keeps
 * {@code default.} keys as written); Dubbo 3's consumer
 * reads it back with {@link URLStrParser#parseEncodedStr} (which reads {@code default.<key>} as {@code <key>}, as 2.6
 * and 2.7 consumers did).
 * The bridge must read the same protocol, host, port, interface, version, group, weight, enabled flag and parameter
 * values as Dubbo does; {@code version}, {@code group} and {@code weight} as the Dubbo 2.6/2.7 consumers that live
 * with providers writing {@code default.} keys read them (the key, else {@code default.<key>}).
 */
class DubboUrlCorpusTest {

    private static final List<String> KEYS =
            List.of("application", "release", "revision", "owner", "token", "serialization", "tag", "methods");
    private static final List<String> VALUES = List.of(
            "plain", "1.0.0+b7", "50%", "a b", "x=y", "a&b", "greet,greetAll", "订单", "%41", "100%25", "a+b+c", "");

    @Test
    void everyProviderUrlShape_theBridgeReadsWhatDubboReads() {
        Differential.Rounds rounds =
                new Differential.Rounds("dubbo-url-corpus", 2000, java.time.Duration.ofSeconds(20));
        Random random = rounds.random();
        // one line per kind of disagreement (field, Dubbo's value, the bridge's), with the first URL that showed it
        Map<String, String> examples = new LinkedHashMap<>();
        try {
            rounds.run(round -> {
                String url = providerUrl(random);
                List<String> kinds = new ArrayList<>();
                for (String kind : compare(url)) {
                    kinds.add(kind + " (e.g. " + examples.computeIfAbsent(kind, k -> url) + ")");
                }
                return kinds;
            });
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        assertThat(rounds.ran()).isPositive();
    }

    @Test
    void dubbo26DefaultKeys_theBridgeReadsThemAsDubbosConsumerDoes() {
        String written = "dubbo://10.0.0.1:20880/org.demo.Greeter?anyhost=true&dubbo=2.6.2&interface=org.demo.Greeter"
                + "&side=provider&default.version=1.0.0&default.group=blue&default.weight=7&timestamp=1600000000000";
        URL dubbo = URLStrParser.parseEncodedStr(URL.encode(written));
        assertThat(compare(written))
                .as(
                        "Dubbo 3.3 itself reads version='%s' group='%s' weight=%s",
                        dubbo.getVersion(), dubbo.getGroup(), dubbo.getParameter("weight", 100))
                .isEmpty();
    }

    /** One provider URL as some Dubbo version writes it. */
    static String providerUrl(Random random) {
        String protocol = Differential.pick(random, List.of("dubbo", "tri", "rest", "grpc"));
        String host = switch (random.nextInt(4)) {
            case 0 -> "[2001:db8::" + Integer.toHexString(1 + random.nextInt(200)) + "]";
            case 1 -> "[fe80::1]";
            default -> "10.0." + random.nextInt(3) + "." + (1 + random.nextInt(250));
        };
        int port = 20880 + random.nextInt(5);
        String iface = Differential.pick(random, List.of("org.demo.Greeter", "com.acme.order.OrderService"));
        boolean dubbo26 = random.nextInt(3) == 0;
        Map<String, String> params = new LinkedHashMap<>();
        params.put("anyhost", "true");
        params.put("dubbo", dubbo26 ? "2.6.2" : "2.0.2");
        params.put("interface", iface);
        params.put("side", "provider");
        params.put("timestamp", Long.toString(1_600_000_000_000L + random.nextInt(1_000_000)));
        params.put("pid", Integer.toString(random.nextInt(60_000)));
        String version = Differential.pick(random, List.of("", "1.0.0", "2.0.0+b7", "1.0 beta"));
        String group = Differential.pick(random, List.of("", "blue", "a,b"));
        if (!version.isEmpty()) params.put(dubbo26 && random.nextBoolean() ? "default.version" : "version", version);
        if (!group.isEmpty()) params.put(dubbo26 && random.nextBoolean() ? "default.group" : "group", group);
        switch (random.nextInt(6)) {
            case 0 -> params.put(dubbo26 ? "default.weight" : "weight", Integer.toString(random.nextInt(300)));
            case 1 -> params.put("weight", Integer.toString(random.nextInt(300)));
            default -> {}
        }
        switch (random.nextInt(8)) {
            case 0 -> params.put("disabled", "true");
            case 1 -> params.put("enabled", "false");
            case 2 -> {
                params.put("disabled", "false");
                params.put("enabled", "false");
            }
            case 3 -> params.put("disabled", "false");
            default -> {}
        }
        int extra = random.nextInt(4);
        for (int i = 0; i < extra; i++) {
            String key = Differential.pick(random, KEYS);
            String value = Differential.pick(random, VALUES);
            params.put(random.nextInt(5) == 0 ? "default." + key : key, value);
        }
        StringBuilder sb = new StringBuilder(protocol + "://" + host + ":" + port + "/" + iface);
        char sep = '?';
        for (Map.Entry<String, String> e : params.entrySet()) {
            sb.append(sep).append(e.getKey()).append('=').append(e.getValue());
            sep = '&';
        }
        return sb.toString();
    }

    /** The fields on which the bridge and Dubbo disagree for one URL, as Dubbo's registry writes and reads it. */
    static List<String> compare(String written) {
        // the znode name as the writing Dubbo wrote it: Dubbo 3's URL would rename default.* keys, 2.6 kept them
        String znode = URL.encode(written);
        URL dubbo3 = URLStrParser.parseEncodedStr(znode);
        List<String> problems = new ArrayList<>();
        DubboUrl bridge;
        try {
            bridge = DubboUrl.parseEncoded(znode);
        } catch (RuntimeException e) {
            problems.add("the bridge refuses what Dubbo reads: " + e.getMessage());
            return problems;
        }
        check(problems, written, "protocol", dubbo3.getProtocol(), bridge.protocol());
        check(problems, written, "host", stripBrackets(dubbo3.getHost()), stripBrackets(bridge.host()));
        check(problems, written, "port", Integer.toString(dubbo3.getPort()), Integer.toString(bridge.port()));
        check(problems, written, "interface", dubbo3.getServiceInterface(), bridge.interfaceName());
        check(problems, written, "version", withDefault(dubbo3, "version"), bridge.version());
        check(problems, written, "group", withDefault(dubbo3, "group"), bridge.group());
        int bridgeWeight;
        try {
            bridgeWeight = DubboNaming.weight(bridge.parameters());
        } catch (RuntimeException e) {
            bridgeWeight = -1;
        }
        check(
                problems,
                written,
                "weight",
                withDefault(dubbo3, "weight").isEmpty() ? "100" : withDefault(dubbo3, "weight"),
                Integer.toString(bridgeWeight));
        // the registry drops enabled=false for a consumer (UrlUtils.isMatch), then RegistryDirectory looks at disabled
        boolean dubboEnabled = dubbo3.getParameter("enabled", true)
                && (!dubbo3.hasParameter("disabled") || !dubbo3.getParameter("disabled", false));
        check(
                problems,
                written,
                "called by a consumer (enabled/disabled)",
                Boolean.toString(dubboEnabled),
                Boolean.toString(DubboNaming.enabled(bridge.parameters())));
        // Dubbo 3 renames default.<key> to <key>; the bridge may keep either name, but not another value
        for (Map.Entry<String, String> p : dubbo3.getParameters().entrySet()) {
            // a key without '=' (a value holding a raw '&' splits into one) is an empty key in Dubbo 3's encoded
            // parser (a quirk; 2.x read it as key=key): no parameter anyone can read by name, nothing to compare
            if (p.getKey().isEmpty()) continue;
            String value = bridge.parameters().get(p.getKey());
            if (value == null) value = bridge.parameters().get("default." + p.getKey());
            check(problems, written, "parameter '" + p.getKey() + "'", p.getValue(), value);
        }
        return problems;
    }

    private static void check(List<String> problems, String url, String field, String dubbo, String bridge) {
        if (!java.util.Objects.equals(dubbo, bridge)) {
            problems.add(field + ": Dubbo reads '" + dubbo + "', the bridge '" + bridge + "'");
        }
    }

    private static String stripBrackets(String host) {
        return host != null && host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /** A parameter as Dubbo's consumers read it: the key, else {@code default.<key>} (written by 2.6 and 2.7.0-2.7.2). */
    private static String withDefault(URL url, String key) {
        String v = url.getParameter(key);
        if (v == null || v.isEmpty()) v = url.getParameter("default." + key);
        return v == null ? "" : v;
    }
}
