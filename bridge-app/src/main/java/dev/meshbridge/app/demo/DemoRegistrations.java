package dev.meshbridge.app.demo;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;

/**
 * Writes sample services into ZooKeeper exactly as their frameworks write them: Dubbo 3 interface-level providers
 * (Triple ones for {@link DemoBackends}' real greeters), a Dubbo 3 application-level instance with its interface
 * mapping, and Spring Cloud ZooKeeper instances (for its real HTTP instances).
 */
public final class DemoRegistrations {

    /** A sample Dubbo provider's parameters, in the order Dubbo writes them (sorted). */
    private static String providerUrl(String protocol, String host, int port, String iface, Map<String, String> extra) {
        Map<String, String> params = new TreeMap<>(Map.of(
                "anyhost", "true",
                "application", "greeter-provider",
                "dubbo", "2.0.2",
                "interface", iface,
                "methods", "greet,greetAsync",
                "release", "3.3.6",
                "side", "provider",
                "timestamp", "1732150000000"));
        params.putAll(extra);
        String query = params.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("&"));
        return protocol + "://" + host + ":" + port + "/" + iface + "?" + query;
    }

    private final CuratorFramework client;
    private final DemoBackends backends;

    /** @param backends the real instances behind the Triple and HTTP samples (3 greeters, 2 web instances) */
    public DemoRegistrations(CuratorFramework client, DemoBackends backends) {
        this.client = client;
        this.backends = backends;
    }

    /** The host of the Triple sample with real backends, as the ZooKeeper watcher names it. */
    public static final String GREETER_HOST = "org.apache.dubbo.samples.greeterservice.v-2-0-0.dubbo";

    /** The weights the Triple sample's instances are registered with; the third one is disabled. */
    public static final List<Integer> GREETER_WEIGHTS = List.of(100, 50, 100);

    /** Registers every sample; returns a one-line description of each, for the start-up banner. */
    public List<String> registerAll() throws Exception {
        String greeter = "org.apache.dubbo.samples.GreeterService";
        dubboProvider(greeter, providerUrl("dubbo", "127.0.0.1", 20880, greeter, Map.of("version", "1.0.0")));
        dubboProvider(
                greeter, providerUrl("dubbo", "127.0.0.1", 20881, greeter, Map.of("version", "1.0.0", "weight", "50")));
        dubboProvider(
                greeter,
                providerUrl("dubbo", "127.0.0.1", 20882, greeter, Map.of("version", "1.0.0", "disabled", "true")));
        // real Triple backends: weights 100 and 50, and a third one disabled (as dubbo-admin disables a provider)
        List<DemoBackends.Instance> greeters = backends.greeters();
        for (int i = 0; i < greeters.size(); i++) {
            Map<String, String> params = new TreeMap<>(Map.of(
                    "version",
                    "2.0.0",
                    "weight",
                    String.valueOf(GREETER_WEIGHTS.get(i)),
                    "methods",
                    "greet",
                    "instance",
                    greeters.get(i).name()));
            if (i == 2) params.put("disabled", "true");
            dubboProvider(
                    greeter, providerUrl("tri", "127.0.0.1", greeters.get(i).port(), greeter, params));
        }

        String cart = "org.apache.dubbo.samples.CartService";
        create(
                "/services/shop-provider/127.0.0.1:20890",
                curatorInstance(
                        "shop-provider",
                        "127.0.0.1:20890",
                        "127.0.0.1",
                        20890,
                        "org.apache.dubbo.registry.zookeeper.ZookeeperInstance",
                        Map.of(
                                "dubbo.endpoints",
                                "[{\"port\":20890,\"protocol\":\"dubbo\"},{\"port\":50062,\"protocol\":\"tri\"}]",
                                "dubbo.metadata.revision",
                                "9f2c1a7b3e5d",
                                "dubbo.metadata.storage-type",
                                "local")),
                CreateMode.EPHEMERAL);
        create("/dubbo/mapping/" + cart, "shop-provider", CreateMode.PERSISTENT);

        create(
                "/services/orders-service/6c1f6a34-0f6e-4a3e-9a4e-1b2c3d4e5f60",
                curatorInstance(
                        "orders-service",
                        "6c1f6a34-0f6e-4a3e-9a4e-1b2c3d4e5f60",
                        "127.0.0.1",
                        backends.webs().get(0).port(),
                        "org.springframework.cloud.zookeeper.discovery.ZookeeperInstance",
                        Map.of("zone", "zone-a", "version", "v1", "instance_status", "UP")),
                CreateMode.EPHEMERAL);
        create(
                "/services/orders-service/0d9e8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b",
                curatorInstance(
                        "orders-service",
                        "0d9e8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b",
                        "127.0.0.1",
                        backends.webs().get(1).port(),
                        "org.springframework.cloud.zookeeper.discovery.ZookeeperInstance",
                        Map.of("zone", "zone-b", "version", "v2", "instance_status", "UP")),
                CreateMode.EPHEMERAL);

        return List.of(
                "Dubbo interface " + greeter + " 2.0.0: 3 real Triple providers on 127.0.0.1 ("
                        + greeters.get(0).name() + " weight 100, "
                        + greeters.get(1).name() + " weight 50, "
                        + greeters.get(2).name() + " disabled)",
                "Spring Cloud ZooKeeper service orders-service: 2 real HTTP instances on 127.0.0.1 ports "
                        + backends.webs().get(0).port() + " (zone a) and "
                        + backends.webs().get(1).port()
                        + " (zone b)",
                "Dubbo interface " + greeter + " 1.0.0: 3 providers (one weight 50, one disabled), registration only",
                "Dubbo application shop-provider (dubbo + tri ports), mapped from " + cart + ", registration only");
    }

    private void dubboProvider(String iface, String url) throws Exception {
        String path = "/dubbo/" + iface + "/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8);
        create(path, "", CreateMode.EPHEMERAL);
    }

    private void create(String path, String data, CreateMode mode) throws Exception {
        client.create()
                .orSetData()
                .creatingParentsIfNeeded()
                .withMode(mode)
                .forPath(path, data.getBytes(StandardCharsets.UTF_8));
    }

    /** The JSON curator-x-discovery writes for a ServiceInstance whose payload is a framework's instance class. */
    static String curatorInstance(
            String name, String id, String address, int port, String payloadClass, Map<String, String> metadata) {
        String meta = new TreeMap<>(metadata)
                .entrySet().stream()
                        .map(e -> json(e.getKey()) + ":" + json(e.getValue()))
                        .collect(Collectors.joining(","));
        return "{\"name\":" + json(name) + ",\"id\":" + json(id) + ",\"address\":" + json(address) + ",\"port\":" + port
                + ",\"sslPort\":null,\"payload\":{\"@class\":" + json(payloadClass) + ",\"id\":" + json(id)
                + ",\"name\":"
                + json(name) + ",\"metadata\":{" + meta
                + "}},\"registrationTimeUTC\":1732150000000,\"serviceType\":\"DYNAMIC\","
                + "\"uriSpec\":{\"parts\":[{\"value\":\"scheme\",\"variable\":true},{\"value\":\"://\",\"variable\":false},"
                + "{\"value\":\"address\",\"variable\":true},{\"value\":\":\",\"variable\":false},{\"value\":\"port\",\"variable\":true}]}}";
    }

    private static String json(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
