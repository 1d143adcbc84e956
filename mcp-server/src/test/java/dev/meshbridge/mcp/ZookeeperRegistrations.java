package dev.meshbridge.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.dubbo.DubboEndpoints;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.dubbo.DubboUrl;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@link ServiceUpsert}s a ZooKeeper watcher sends for what real Dubbo 3 providers and Spring Cloud ZooKeeper
 * services write, built from the raw znode contents with the bridge-core helpers every Dubbo-carrying watcher uses
 * ({@link DubboUrl}, {@link DubboNaming}, {@link DubboEndpoints}, {@link Labels}):
 *
 * <ul>
 *   <li>Dubbo interface level: the (decoded) provider URLs under {@code /dubbo/<interface>/providers};
 *   <li>Dubbo application level: the curator x-discovery JSON under {@code /services/<app>/<ip:port>}, whose metadata
 *       carries {@code dubbo.endpoints};
 *   <li>Spring Cloud ZooKeeper: the curator x-discovery JSON under {@code /services/<name>/<id>}.
 * </ul>
 */
final class ZookeeperRegistrations {

    static final String TYPE = "zookeeper";
    static final String REGISTRY = "zk1";
    static final RegistryConfig CONFIG = RegistryConfig.of(TYPE, REGISTRY, List.of("127.0.0.1:2181"), "options");
    static final HostTemplate SPRING_TEMPLATE = HostTemplate.parse("{service}.springcloud", Set.of("service"));

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> NOT_INSTANCE_LABELS =
            Set.of(DubboEndpoints.METADATA_KEY, "dubbo.metadata.revision", "dubbo.metadata.storage-type", "timestamp");

    private ZookeeperRegistrations() {}

    /** A Dubbo interface-level service from its provider URLs (all of one interface, version and group). */
    static ServiceUpsert dubboInterface(List<String> providerUrls) {
        DubboUrl first = DubboUrl.parse(providerUrls.get(0));
        ServiceKey key = new ServiceKey(TYPE, REGISTRY, "", first.group(), first.interfaceName(), first.version());
        String host = DubboNaming.interfaceHost(
                DubboNaming.interfaceTemplate(null),
                REGISTRY,
                first.interfaceName(),
                first.version(),
                first.group(),
                first.application());
        Map<String, ServicePort> ports = new LinkedHashMap<>();
        List<Endpoint> endpoints = new ArrayList<>();
        for (String raw : providerUrls) {
            DubboUrl url = DubboUrl.parse(raw);
            String portName = DubboNaming.portName(url.protocol());
            Protocol protocol = DubboNaming.protocol(url.protocol());
            ports.putIfAbsent(
                    portName, new ServicePort(portName, CONFIG.servicePort(portName, protocol, url.port()), protocol));
            Labels.Result labels = DubboNaming.labels(url.parameters());
            endpoints.add(DubboNaming.endpoint(url.host(), portName, url.port(), url.parameters(), labels)
                    .build());
        }
        return new ServiceUpsert(key, host, List.copyOf(ports.values()), endpoints);
    }

    /** A Dubbo application-level service from its instances' x-discovery JSON. */
    static ServiceUpsert dubboApplication(String application, List<String> instances) {
        ServiceKey key = new ServiceKey(TYPE, REGISTRY, "", "", application, "");
        String host = DubboNaming.applicationHost(DubboNaming.applicationTemplate(null), REGISTRY, application);
        Map<String, ServicePort> ports = new LinkedHashMap<>();
        List<Endpoint> endpoints = new ArrayList<>();
        for (String raw : instances) {
            JsonNode instance = read(raw);
            Map<String, String> metadata = metadata(instance);
            Endpoint.Builder e = Endpoint.builder(instance.path("address").asText());
            for (DubboEndpoints.ProtocolPort pp : DubboEndpoints.parse(metadata.get(DubboEndpoints.METADATA_KEY))) {
                String portName = DubboNaming.portName(pp.protocol());
                Protocol protocol = DubboNaming.protocol(pp.protocol());
                ports.putIfAbsent(
                        portName,
                        new ServicePort(portName, CONFIG.servicePort(portName, protocol, pp.port()), protocol));
                e.port(portName, pp.port());
            }
            Map<String, String> raw2 = new TreeMap<>(metadata);
            raw2.keySet().removeAll(NOT_INSTANCE_LABELS);
            e.weight(DubboNaming.weight(metadata)).enabled(DubboNaming.enabled(metadata));
            e.labels(Labels.sanitize(raw2).labels());
            endpoints.add(e.build());
        }
        return new ServiceUpsert(key, host, List.copyOf(ports.values()), endpoints);
    }

    /** A Spring Cloud ZooKeeper service from its instances' x-discovery JSON. */
    static ServiceUpsert springCloud(String name, List<String> instances) {
        ServiceKey key = new ServiceKey(TYPE, REGISTRY, "", "", name, "");
        String host = SPRING_TEMPLATE.render(Map.of("service", name));
        ServicePort http = null;
        List<Endpoint> endpoints = new ArrayList<>();
        for (String raw : instances) {
            JsonNode instance = read(raw);
            int port = instance.path("port").asInt();
            if (http == null)
                http = new ServicePort("http", CONFIG.servicePort("http", Protocol.HTTP, port), Protocol.HTTP);
            Map<String, String> metadata = metadata(instance);
            String status = metadata.getOrDefault("instance_status", "UP");
            endpoints.add(Endpoint.builder(instance.path("address").asText())
                    .port("http", port)
                    .health("UP".equals(status) ? Health.HEALTHY : Health.DRAINING)
                    .labels(Labels.sanitize(metadata).labels())
                    .build());
        }
        return new ServiceUpsert(key, host, http == null ? List.of() : List.of(http), endpoints);
    }

    static ServiceRemoval removal(ServiceUpsert upsert) {
        return new ServiceRemoval(upsert.key());
    }

    /** A Dubbo 3 provider URL as it is written under {@code /dubbo/<interface>/providers} (decoded). */
    static String providerUrl(String protocol, String address, int port, String iface, String params) {
        return protocol + "://" + address + ":" + port + "/" + iface + "?anyhost=true&application=demo-provider"
                + "&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false&interface=" + iface
                + "&methods=greet,sayHello&pid=4242&release=3.3.6&service-name-mapping=true&side=provider"
                + "&timestamp=1714557600000" + (params.isEmpty() ? "" : "&" + params);
    }

    /** A Dubbo 3 application-level instance as curator x-discovery writes it under {@code /services/<app>/<ip:port>}. */
    static String dubboInstance(String app, String address, String endpointsJson, String extraMetadata) {
        String escaped = endpointsJson.replace("\"", "\\\"");
        return "{\"name\":\"" + app + "\",\"id\":\"" + address + ":20880\",\"address\":\"" + address
                + "\",\"port\":20880,\"sslPort\":null,\"payload\":{\"@class\":"
                + "\"org.apache.dubbo.registry.zookeeper.ZookeeperInstance\",\"id\":\"" + address
                + ":20880\",\"name\":\"" + app + "\",\"metadata\":{\"dubbo.endpoints\":\"" + escaped
                + "\",\"dubbo.metadata.revision\":\"6cd0b3a5f5e4a1f0\",\"dubbo.metadata.storage-type\":\"local\","
                + "\"timestamp\":\"1714557600000\"" + (extraMetadata.isEmpty() ? "" : "," + extraMetadata) + "}},"
                + "\"registrationTimeUTC\":1714557600000,\"serviceType\":\"DYNAMIC\",\"uriSpec\":null}";
    }

    /** A Spring Cloud ZooKeeper instance as written under {@code /services/<name>/<id>}. */
    static String springInstance(String name, String id, String address, int port, String metadata) {
        return "{\"name\":\"" + name + "\",\"id\":\"" + id + "\",\"address\":\"" + address + "\",\"port\":" + port
                + ",\"sslPort\":null,\"payload\":{\"@class\":"
                + "\"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance\",\"id\":\"" + name
                + "\",\"name\":\"" + name + "\",\"metadata\":{" + metadata + "}},\"registrationTimeUTC\":1714557600000,"
                + "\"serviceType\":\"DYNAMIC\",\"uriSpec\":{\"parts\":[{\"value\":\"scheme\",\"variable\":true},"
                + "{\"value\":\"://\",\"variable\":false},{\"value\":\"address\",\"variable\":true},"
                + "{\"value\":\":\",\"variable\":false},{\"value\":\"port\",\"variable\":true}]}}";
    }

    private static JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static Map<String, String> metadata(JsonNode instance) {
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, JsonNode> f :
                instance.path("payload").path("metadata").properties()) {
            out.put(f.getKey(), f.getValue().asText());
        }
        return out;
    }
}
