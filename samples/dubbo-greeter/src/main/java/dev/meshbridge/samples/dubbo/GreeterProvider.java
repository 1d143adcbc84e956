package dev.meshbridge.samples.dubbo;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Dubbo 3 provider application exporting {@link Greeter} over Triple and registering it in the configured registry,
 * the way Dubbo 3 does by default: interface-level (the provider URL) and application-level (the instance and the
 * interface-to-application mapping).
 *
 * <p>Configured from the environment: {@code REGISTRY_ADDRESS} (required; a Dubbo registry URL such as {@code
 * zookeeper://zookeeper:2181} or {@code nacos://nacos:8848}), {@code APPLICATION_NAME} (default {@code greeter}),
 * {@code TRI_PORT} (default 50051).
 */
public final class GreeterProvider implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GreeterProvider.class);

    /**
     * What the provider needs to know.
     *
     * @param registryAddress a Dubbo registry URL
     * @param application the Dubbo application name (the application-level service's name)
     * @param triPort the Triple port
     */
    public record Settings(String registryAddress, String application, int triPort) {

        public Settings {
            if (registryAddress == null || registryAddress.isBlank())
                throw new IllegalArgumentException("REGISTRY_ADDRESS is required, e.g. zookeeper://zookeeper:2181");
            if (triPort < 1 || triPort > 65535)
                throw new IllegalArgumentException("TRI_PORT must be in 1..65535, got " + triPort);
        }

        /** From {@code REGISTRY_ADDRESS}, {@code APPLICATION_NAME} and {@code TRI_PORT}. */
        public static Settings fromEnvironment(Map<String, String> env) {
            String port = env.getOrDefault("TRI_PORT", "50051");
            try {
                return new Settings(
                        env.get("REGISTRY_ADDRESS"),
                        env.getOrDefault("APPLICATION_NAME", "greeter"),
                        Integer.parseInt(port.strip()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("TRI_PORT must be a number, got '" + port + "'", e);
            }
        }
    }

    private final FrameworkModel framework = new FrameworkModel();
    private final DubboBootstrap bootstrap;
    private final ServiceConfig<Greeter> service = new ServiceConfig<>();
    private final Settings settings;
    private final AtomicBoolean closed = new AtomicBoolean();

    private GreeterProvider(Settings settings) {
        this.settings = settings;
        ApplicationConfig application = new ApplicationConfig(settings.application());
        application.setQosEnable(false);
        application.setLogger("slf4j");
        RegistryConfig registry = new RegistryConfig(settings.registryAddress());
        // The registry is also the metadata centre (Dubbo's default: it holds the interface-to-application mapping);
        // governance rules from a configuration centre are not part of the demo.
        registry.setUseAsConfigCenter(false);
        registry.setParameters(new HashMap<>(Map.of("file.cache", "false")));
        service.setInterface(Greeter.class);
        service.setRef(new GreeterImpl(settings, this::instance));
        bootstrap = DubboBootstrap.newInstance(framework)
                .application(application)
                .registry(registry)
                .protocol(new ProtocolConfig("tri", settings.triPort()))
                .service(service);
    }

    /** Exports the service and registers it; returns once registered. */
    public static GreeterProvider start(Settings settings) {
        // Dubbo picks its JSON library by probing a list in which an absent library stops the search: name the one
        // it ships with.
        System.getProperties().putIfAbsent("dubbo.json-framework.prefer", "fastjson2");
        // nacos-client would configure Logback, which this application does not use (it logs through slf4j-simple)
        System.getProperties().putIfAbsent("nacos.logging.default.config.enabled", "false");
        GreeterProvider p = new GreeterProvider(settings);
        try {
            p.bootstrap.start();
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
        log.info(
                "greeter application={} serving Triple at {} registered in {}",
                settings.application(),
                p.instance(),
                settings.registryAddress());
        return p;
    }

    /** The address and port this provider registered, {@code ip:port}. */
    public String instance() {
        List<URL> urls = service.getExportedUrls();
        return urls == null || urls.isEmpty() ? "?" : urls.get(0).getAddress();
    }

    /** The registered address, without the port. */
    public String host() {
        return service.getExportedUrls().get(0).getHost();
    }

    /** The Triple port actually bound. */
    public int port() {
        return service.getExportedUrls().get(0).getPort();
    }

    public Settings settings() {
        return settings;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        bootstrap.stop();
        framework.destroy();
    }

    public static void main(String[] args) {
        GreeterProvider provider = start(Settings.fromEnvironment(System.getenv()));
        Runtime.getRuntime().addShutdownHook(new Thread(provider::close, "greeter-shutdown"));
        provider.bootstrap.await();
    }
}
