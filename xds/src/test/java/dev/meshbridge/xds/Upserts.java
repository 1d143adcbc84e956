package dev.meshbridge.xds;

import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Builds the {@link ServiceUpsert}s a ZooKeeper watcher sends for the three layouts it reads (Spring Cloud, Dubbo
 * application-level, Dubbo interface-level), with the shared Dubbo naming and parameter rules of bridge-core.
 */
final class Upserts {

    static final String REGISTRY = "zk1";

    private Upserts() {}

    /** A Spring Cloud service ({@code /services/<name>/<id>}): one HTTP port. */
    static ServiceUpsert springCloud(String name, List<Endpoint> endpoints) {
        return new ServiceUpsert(
                new ServiceKey("zookeeper", REGISTRY, "", "", name, ""),
                name + ".zookeeper",
                List.of(new ServicePort("http", 80, Protocol.HTTP)),
                endpoints);
    }

    /** An instance of a Spring Cloud service, with the metadata Spring Cloud Zookeeper writes. */
    static Endpoint.Builder springInstance(String ip, int port) {
        return Endpoint.builder(ip).port("http", port).label("instance_status", "UP");
    }

    /** A Dubbo 3 application-level service ({@code /services/<app>/<ip:port>}) serving Triple. */
    static ServiceUpsert dubboApplication(String app, List<Endpoint> endpoints) {
        return new ServiceUpsert(
                new ServiceKey("zookeeper", REGISTRY, "", "", app, ""),
                DubboNaming.applicationHost(DubboNaming.applicationTemplate(null), REGISTRY, app),
                List.of(new ServicePort("tri", Protocol.TRIPLE.defaultServicePort(), Protocol.TRIPLE)),
                endpoints,
                new TreeMap<>(Map.of("dubbo.application", app)));
    }

    /** An instance of a Dubbo application, with its revision metadata. */
    static Endpoint.Builder dubboAppInstance(String ip, int triPort) {
        return Endpoint.builder(ip).port("tri", triPort).label("dubbo.metadata.revision", "4a9d2e1c0b7f");
    }

    /** A Dubbo interface-level service ({@code /dubbo/<iface>/providers/...}) on the dubbo protocol. */
    static ServiceUpsert dubboInterface(String iface, String version, String group, List<Endpoint> endpoints) {
        String host = DubboNaming.interfaceHost(
                DubboNaming.interfaceTemplate(null), REGISTRY, iface, version, group, "demo-provider");
        return new ServiceUpsert(
                new ServiceKey("zookeeper", REGISTRY, "", group, iface, version),
                host,
                List.of(new ServicePort("dubbo", Protocol.DUBBO.defaultServicePort(), Protocol.DUBBO)),
                endpoints,
                new TreeMap<>(Map.of("dubbo.interface", iface)));
    }

    /** A provider of a Dubbo interface, labelled from its URL parameters as the watchers do. */
    static Endpoint.Builder dubboProvider(String ip, int port, Map<String, String> params) {
        return DubboNaming.endpoint(ip, "dubbo", port, params, DubboNaming.labels(params));
    }
}
