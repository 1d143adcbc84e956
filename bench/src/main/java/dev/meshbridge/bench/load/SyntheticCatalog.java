package dev.meshbridge.bench.load;

import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.dubbo.DubboUrl;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.xds.XdsNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The synthetic registry fed through the watcher SPI: a third each of Dubbo interface-level services (one {@code dubbo}
 * port, providers labelled from their URL parameters exactly as the ZooKeeper and Nacos watchers do with {@link
 * DubboNaming}), Dubbo 3 application-level services ({@code dubbo} and {@code tri} ports, x-discovery metadata) and
 * Spring Cloud services ({@code http}, Spring Cloud metadata, a zone). Every upsert is what a watcher would send: the
 * full endpoint list of one service.
 */
public final class SyntheticCatalog implements Catalog {

    public static final String REGISTRY = "bench";

    /** The three shapes of service in the load. */
    public enum Kind {
        DUBBO_INTERFACE,
        DUBBO_APPLICATION,
        SPRING_CLOUD
    }

    private static final HostTemplate INTERFACE_HOSTS = DubboNaming.interfaceTemplate(null);
    private static final HostTemplate APPLICATION_HOSTS = DubboNaming.applicationTemplate(null);
    private static final List<ServicePort> DUBBO_PORTS = List.of(new ServicePort("dubbo", 20880, Protocol.DUBBO));
    private static final List<ServicePort> APPLICATION_PORTS =
            List.of(new ServicePort("dubbo", 20880, Protocol.DUBBO), new ServicePort("tri", 50051, Protocol.TRIPLE));
    private static final List<ServicePort> SPRING_PORTS = List.of(new ServicePort("http", 80, Protocol.HTTP));

    private final Size size;

    public SyntheticCatalog(int services, int instances) {
        this.size = new Size(services, instances);
    }

    @Override
    public Size size() {
        return size;
    }

    /** Service 1, a Dubbo application: it has a listener, a route, clusters and load assignments. */
    @Override
    public int probe() {
        return 1;
    }

    public Kind kind(int i) {
        return Kind.values()[i % 3];
    }

    static String iface(int i) {
        return "com.example.shop.s" + i + ".OrderService";
    }

    static String version(int i) {
        return "1.0." + (i % 3);
    }

    static String group(int i) {
        return i % 7 == 0 ? "blue" : "";
    }

    static String application(int i) {
        return "shop-app-" + i;
    }

    static String springName(int i) {
        return "spring-svc-" + i;
    }

    /** The instance address: unique per service and slot. */
    static String address(int i, int slot) {
        return "10." + (i / 250 % 250) + "." + (i % 250 + 1) + "." + (slot + 1);
    }

    @Override
    public String host(int i) {
        return switch (kind(i)) {
            case DUBBO_INTERFACE ->
                DubboNaming.interfaceHost(INTERFACE_HOSTS, REGISTRY, iface(i), version(i), group(i), application(i));
            case DUBBO_APPLICATION -> DubboNaming.applicationHost(APPLICATION_HOSTS, REGISTRY, application(i));
            case SPRING_CLOUD -> springName(i) + ".services.zookeeper";
        };
    }

    /**
     * What a client of service {@code i} subscribes to. A proxyless gRPC client follows its listener to the route, and
     * the route to the {@code grpc|...} cluster made for it (healthy endpoints only, grouped by weight), so a service
     * with an HTTP-family port is subscribed that way; a Dubbo interface-level service (a {@code dubbo} port only, no
     * API listener) through its {@code outbound|...} cluster, as an Envoy sidecar would.
     */
    @Override
    public Subscription subscription(int i) {
        String host = host(i);
        return switch (kind(i)) {
            case DUBBO_INTERFACE -> new Subscription(List.of(XdsNames.cluster(host, 20880)), List.of(), List.of());
            case DUBBO_APPLICATION ->
                new Subscription(
                        List.of(XdsNames.grpcCluster(host, 50051)),
                        List.of(XdsNames.listener(host)),
                        List.of(XdsNames.route(host)));
            case SPRING_CLOUD ->
                new Subscription(
                        List.of(XdsNames.grpcCluster(host, 80)),
                        List.of(XdsNames.listener(host)),
                        List.of(XdsNames.route(host)));
        };
    }

    /** The upsert of service {@code i} in its initial state. */
    public ServiceUpsert upsert(int i) {
        return upsert(i, null);
    }

    /**
     * The upsert of service {@code i}.
     *
     * @param changeIds per slot, the id of the change that last replaced that instance (0: the original); may be null
     */
    public ServiceUpsert upsert(int i, int[] changeIds) {
        List<Endpoint> endpoints = new ArrayList<>(instances());
        for (int slot = 0; slot < instances(); slot++) {
            int id = changeIds == null ? 0 : changeIds[slot];
            endpoints.add(endpoint(i, slot, id));
        }
        return switch (kind(i)) {
            case DUBBO_INTERFACE -> {
                TreeMap<String, String> labels = new TreeMap<>();
                labels.put("dubbo.interface", iface(i));
                labels.put("dubbo.version", version(i));
                if (!group(i).isEmpty()) labels.put("dubbo.group", group(i));
                yield new ServiceUpsert(
                        new ServiceKey("zookeeper", REGISTRY, "dubbo:/dubbo", group(i), iface(i), version(i)),
                        host(i),
                        DUBBO_PORTS,
                        endpoints,
                        Labels.sanitize(labels).labels());
            }
            case DUBBO_APPLICATION ->
                new ServiceUpsert(
                        new ServiceKey("zookeeper", REGISTRY, "dubbo-app:/services", "", application(i), ""),
                        host(i),
                        APPLICATION_PORTS,
                        endpoints,
                        new TreeMap<>(Map.of("dubbo.application", application(i))));
            case SPRING_CLOUD ->
                new ServiceUpsert(
                        new ServiceKey("zookeeper", REGISTRY, "spring-cloud:/services", "", springName(i), ""),
                        host(i),
                        SPRING_PORTS,
                        endpoints);
        };
    }

    private Endpoint endpoint(int i, int slot, int changeId) {
        String address = address(i, slot);
        return switch (kind(i)) {
            case DUBBO_INTERFACE -> {
                int port = changeId == 0 ? 20880 : ChangeIds.port(changeId);
                DubboUrl url =
                        DubboUrl.parse(providerUrl(address, port, iface(i), version(i), group(i), application(i)));
                yield DubboNaming.endpoint(
                                url.host(),
                                DubboNaming.portName(url.protocol()),
                                url.port(),
                                url.parameters(),
                                DubboNaming.labels(url.parameters()))
                        .build();
            }
            case DUBBO_APPLICATION -> {
                Map<String, String> metadata = new LinkedHashMap<>();
                metadata.put("dubbo.metadata.revision", Long.toHexString(0x5eed0000L + i * 31L + slot % 2));
                metadata.put("dubbo.metadata.storage-type", "local");
                metadata.put("release", "3.3.6");
                metadata.put("application", application(i));
                yield Endpoint.builder(address)
                        .port("dubbo", 20880)
                        .port("tri", changeId == 0 ? 50051 : ChangeIds.port(changeId))
                        .labels(Labels.sanitize(metadata).labels())
                        .build();
            }
            case SPRING_CLOUD -> {
                Map<String, String> metadata = new LinkedHashMap<>();
                metadata.put("instance_status", "UP");
                metadata.put("zone", "zone-" + (char) ('a' + slot % 3));
                metadata.put("version", "1.4." + (i % 5));
                metadata.put("management.port", "8081");
                metadata.put("secure", "false");
                yield Endpoint.builder(address)
                        .port("http", changeId == 0 ? 8080 : ChangeIds.port(changeId))
                        .labels(Labels.sanitize(metadata).labels())
                        .locality(Locality.of("eu-west-1", "eu-west-1" + (char) ('a' + slot % 3)))
                        .build();
            }
        };
    }

    /** A provider URL as Dubbo 3.3 writes it for an interface-level registration. */
    public static String providerUrl(
            String address, int port, String iface, String version, String group, String application) {
        StringBuilder b = new StringBuilder("dubbo://")
                .append(address)
                .append(':')
                .append(port)
                .append('/')
                .append(iface)
                .append("?anyhost=true&application=")
                .append(application)
                .append("&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false");
        if (!group.isEmpty()) b.append("&group=").append(group);
        b.append("&interface=")
                .append(iface)
                .append("&methods=cancel,create,get,list,update&pid=")
                .append(4000 + port % 1000)
                .append("&prefer.serialization=fastjson2,hessian2&release=3.3.6&revision=")
                .append(version)
                .append("&service-name-mapping=true&side=provider&threads=200&timestamp=1700000000000&version=")
                .append(version);
        return b.toString();
    }
}
