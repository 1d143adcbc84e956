package dev.meshbridge.app;

import dev.meshbridge.registry.zookeeper.DubboRegistryWriter;
import dev.meshbridge.registry.zookeeper.ZkServer;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.dubbo.registry.client.DefaultServiceInstance;
import org.apache.dubbo.registry.client.metadata.ServiceInstanceMetadataUtils;
import org.apache.dubbo.registry.zookeeper.util.CuratorFrameworkUtils;
import org.apache.zookeeper.data.Stat;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

/**
 * Applications on 127.0.0.1 registering themselves in ZooKeeper the way their frameworks do, over one ZooKeeper
 * session (ephemeral znodes, re-registered by curator x-discovery after a reconnect):
 *
 * <ul>
 *   <li>Spring Cloud ZooKeeper: curator x-discovery with Spring's payload type ({@code "@class":
 *       "org.springframework.cloud.zookeeper.discovery.ZookeeperInstance"}), a UUID id and {@code instance_status: UP},
 *       under {@code /services/<service>/<id>};
 *   <li>Dubbo 3 application level: Dubbo's own code path of {@code ZookeeperServiceDiscovery} ({@code
 *       CuratorFrameworkUtils.buildServiceDiscovery}, a {@code DefaultServiceInstance} with {@code dubbo.endpoints}
 *       written by {@code ServiceInstanceMetadataUtils.setEndpoints}, turned into curator's instance by {@code
 *       CuratorFrameworkUtils.build}), under {@code /services/<application>/127.0.0.1:<port>}. An update rewrites the
 *       instance in place, as Dubbo's {@code doUpdate} does;
 *   <li>Dubbo interface level: provider URLs ({@code tri://127.0.0.1:<port>/<interface>?...}) written by Dubbo's own
 *       {@code ZookeeperRegistry} under {@code /dubbo/<interface>/providers/}, exactly the znodes a Dubbo provider
 *       writes (a real one would refuse to register a 127.x address). A changed parameter re-registers the provider
 *       under its new URL, as a provider that re-exports does.
 * </ul>
 */
final class ZookeeperApps implements AutoCloseable {

    /** Metadata revision of the Dubbo instances (Dubbo computes it from the exported services; any value does). */
    static final String DUBBO_REVISION = "8e3a3b1f6c2d4a70";

    private final CuratorFramework client;
    private final DubboRegistryWriter providers;
    private final ServiceDiscovery<ZookeeperInstance> spring;
    private final ServiceDiscovery<org.apache.dubbo.registry.zookeeper.ZookeeperInstance> dubbo;

    ZookeeperApps(ZkServer zk) throws Exception {
        this(zk.client(), new DubboRegistryWriter(zk.address()));
    }

    /**
     * Applications reaching ZooKeeper at {@code connect} (a proxy a test cuts) with sessions of {@code session}, as
     * short-lived sessions of real applications expire when ZooKeeper is away long enough: Dubbo's registry then
     * registers its providers again on its new session after its retry period ({@code retry.period}), curator
     * x-discovery its instances after the reconnect.
     */
    ZookeeperApps(String connect, Duration session, Duration dubboRetry) throws Exception {
        this(
                started(CuratorFrameworkFactory.builder()
                        .connectString(connect)
                        .sessionTimeoutMs((int) session.toMillis())
                        .connectionTimeoutMs((int) session.toMillis())
                        .retryPolicy(new RetryNTimes(5, 200))
                        .build()),
                new DubboRegistryWriter(
                        connect, "/dubbo", "session=" + session.toMillis() + "&retry.period=" + dubboRetry.toMillis()));
    }

    private static CuratorFramework started(CuratorFramework c) throws InterruptedException {
        c.start();
        if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper");
        return c;
    }

    private ZookeeperApps(CuratorFramework client, DubboRegistryWriter providers) throws Exception {
        this.client = client;
        this.providers = providers;
        // as Spring Cloud ZooKeeper's CuratorServiceDiscoveryAutoConfiguration builds it
        spring = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
                .client(client)
                .basePath("/services")
                .serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class))
                .build();
        spring.start();
        dubbo = CuratorFrameworkUtils.buildServiceDiscovery(client, "/services");
        dubbo.start();
    }

    /** A registered Spring Cloud instance. */
    record SpringInstance(ServiceInstance<ZookeeperInstance> instance) {}

    /** A registered Dubbo application instance. */
    record DubboInstance(DefaultServiceInstance instance) {}

    /** A registered Dubbo interface-level provider, and the URL it is registered under. */
    record DubboProvider(String iface, String application, int port, Map<String, String> parameters, String url) {}

    /** Registers an instance of Spring Cloud service {@code service} at 127.0.0.1:{@code port}. */
    SpringInstance registerSpring(String service, int port) throws Exception {
        String id = UUID.randomUUID().toString();
        ServiceInstance<ZookeeperInstance> instance = ServiceInstance.<ZookeeperInstance>builder()
                .id(id)
                .name(service)
                .address("127.0.0.1")
                .port(port)
                .payload(new ZookeeperInstance(service, service, Map.of("instance_status", "UP")))
                .uriSpec(new UriSpec("{scheme}://{address}:{port}"))
                .build();
        spring.registerService(instance);
        return new SpringInstance(instance);
    }

    /** Unregisters it, as Spring Cloud does when the application stops. */
    void unregister(SpringInstance instance) throws Exception {
        spring.unregisterService(instance.instance());
    }

    /**
     * Takes it out of service as Spring Cloud's service registry endpoint does: {@code instance_status:
     * OUT_OF_SERVICE} in its metadata, rewritten in place (Spring's serializer leaves curator's {@code enabled} out).
     */
    SpringInstance outOfService(SpringInstance registered) throws Exception {
        ServiceInstance<ZookeeperInstance> was = registered.instance();
        ZookeeperInstance payload = was.getPayload();
        Map<String, String> metadata = new HashMap<>(payload.getMetadata());
        metadata.put("instance_status", "OUT_OF_SERVICE");
        ServiceInstance<ZookeeperInstance> next = ServiceInstance.<ZookeeperInstance>builder()
                .id(was.getId())
                .name(was.getName())
                .address(was.getAddress())
                .port(was.getPort())
                .payload(new ZookeeperInstance(payload.getId(), payload.getName(), metadata))
                .uriSpec(was.getUriSpec())
                .build();
        spring.updateService(next);
        return new SpringInstance(next);
    }

    /**
     * Registers a provider of Dubbo interface {@code iface} serving Triple at 127.0.0.1:{@code triPort}, with the
     * parameters a Dubbo 3 provider writes and {@code more} (e.g. {@code weight}, {@code disabled}).
     */
    DubboProvider registerDubboInterface(String iface, String application, int triPort, Map<String, String> more) {
        more = new java.util.TreeMap<>(more);
        StringBuilder url = new StringBuilder("tri://127.0.0.1:")
                .append(triPort)
                .append('/')
                .append(iface)
                .append("?anyhost=true&application=")
                .append(application)
                .append("&dubbo=2.0.2&interface=")
                .append(iface)
                .append("&methods=Name&release=3.3.6&side=provider&timestamp=1714550400000");
        more.forEach((k, v) -> url.append('&').append(k).append('=').append(v));
        providers.register(url.toString());
        return new DubboProvider(iface, application, triPort, Map.copyOf(more), url.toString());
    }

    /** Re-registers a provider with more parameters: its old URL goes, the new one comes. */
    DubboProvider updateDubboInterface(DubboProvider registered, Map<String, String> more) {
        Map<String, String> parameters = new HashMap<>(registered.parameters());
        parameters.putAll(more);
        unregister(registered);
        return registerDubboInterface(registered.iface(), registered.application(), registered.port(), parameters);
    }

    /** Unregisters a provider, as Dubbo does when it unexports. */
    void unregister(DubboProvider provider) {
        providers.unregister(provider.url());
    }

    /** Unregisters an application instance, as Dubbo does when the application stops. */
    void unregister(DubboInstance instance) throws Exception {
        dubbo.unregisterService(CuratorFrameworkUtils.build(instance.instance()));
    }

    /** Registers an instance of Dubbo application {@code application} serving Triple at 127.0.0.1:{@code triPort}. */
    DubboInstance registerDubbo(String application, int triPort) throws Exception {
        return registerDubbo(application, triPort, Map.of());
    }

    /** Registers an instance as {@link #registerDubbo(String, int)} does, with more metadata (e.g. {@code weight}). */
    DubboInstance registerDubbo(String application, int triPort, Map<String, String> moreMetadata) throws Exception {
        DefaultServiceInstance instance = new DefaultServiceInstance(application, "127.0.0.1", triPort, null);
        Map<String, String> metadata = instance.getMetadata();
        metadata.putAll(moreMetadata);
        metadata.put(ServiceInstanceMetadataUtils.EXPORTED_SERVICES_REVISION_PROPERTY_NAME, DUBBO_REVISION);
        metadata.put(ServiceInstanceMetadataUtils.METADATA_STORAGE_TYPE_PROPERTY_NAME, "local");
        ServiceInstanceMetadataUtils.setEndpoints(instance, Map.of("tri", triPort));
        dubbo.registerService(CuratorFrameworkUtils.build(instance));
        return new DubboInstance(instance);
    }

    /** Rewrites a Dubbo instance in place with more metadata (e.g. {@code weight}, {@code disabled}). */
    DubboInstance updateDubbo(DubboInstance registered, Map<String, String> moreMetadata) throws Exception {
        DefaultServiceInstance next = new DefaultServiceInstance(registered.instance());
        Map<String, String> metadata = new HashMap<>(next.getMetadata());
        metadata.putAll(moreMetadata);
        next.setMetadata(metadata);
        dubbo.updateService(CuratorFrameworkUtils.build(next));
        return new DubboInstance(next);
    }

    /**
     * The creation id ({@code czxid}) of every instance znode under {@code /services}, by path: it changes when a
     * client re-registers an instance (curator x-discovery deletes and re-creates its instances after a reconnect).
     */
    Map<String, Long> registrations() throws Exception {
        Map<String, Long> created = new HashMap<>();
        for (String service : client.getChildren().forPath("/services")) {
            String parent = "/services/" + service;
            for (String instance : client.getChildren().forPath(parent)) {
                Stat stat = client.checkExists().forPath(parent + "/" + instance);
                if (stat != null) created.put(parent + "/" + instance, stat.getCzxid());
            }
        }
        return created;
    }

    @Override
    public void close() throws IOException {
        providers.close();
        dubbo.close();
        spring.close();
        client.close();
    }
}
