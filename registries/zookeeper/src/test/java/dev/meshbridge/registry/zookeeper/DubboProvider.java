package dev.meshbridge.registry.zookeeper;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * A real Dubbo 3 provider application in this JVM (its own {@link FrameworkModel}): it serves the dubbo and tri
 * protocols on free ports and registers with ZooKeeper the way the configured register mode says ({@code instance}:
 * application-level and the interface mapping; {@code all}: interface-level too).
 */
final class DubboProvider implements AutoCloseable {

    private final FrameworkModel framework = new FrameworkModel();
    private final DubboBootstrap bootstrap;
    final int dubboPort;
    final int triPort;

    /** One exported interface: its type, implementation and version ({@code ""} for none). */
    record Export<T>(Class<T> type, T implementation, String version) {}

    DubboProvider(String zookeeperAddress, String application, String registerMode, List<Export<?>> exports)
            throws IOException {
        dubboPort = freePort();
        triPort = freePort();
        ApplicationConfig app = new ApplicationConfig(application);
        app.setQosEnable(false);
        app.setRegisterMode(registerMode);
        RegistryConfig registry = new RegistryConfig("zookeeper://" + zookeeperAddress);
        registry.setParameters(new java.util.HashMap<>(java.util.Map.of("file.cache", "false")));
        bootstrap = DubboBootstrap.newInstance(framework)
                .application(app)
                .registry(registry)
                .protocols(List.of(new ProtocolConfig("dubbo", dubboPort), new ProtocolConfig("tri", triPort)));
        for (Export<?> e : exports) bootstrap.service(service(e));
    }

    private static <T> ServiceConfig<T> service(Export<T> e) {
        ServiceConfig<T> s = new ServiceConfig<>();
        s.setInterface(e.type());
        s.setRef(e.implementation());
        if (!e.version().isEmpty()) s.setVersion(e.version());
        return s;
    }

    DubboProvider start() {
        bootstrap.start();
        return this;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        bootstrap.stop();
        framework.destroy();
    }
}
