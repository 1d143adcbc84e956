package dev.meshbridge.registry.consul;

import com.google.common.net.HostAndPort;
import java.io.IOException;
import org.kiwiproject.consul.Consul;

/** The scenarios' Consul as a {@link ConsulTestServer} answering for dc1 and dc2, ACLs on. */
final class TestServerEnvironment implements ConsulEnvironment {

    static final String TOKEN = "e95b599e-166e-7d80-08ad-aee76e7ddf19";

    private final ConsulTestServer server;
    private final Consul client;
    private final HealthEndpoints app;

    TestServerEnvironment() throws IOException {
        server = ConsulTestServer.builder()
                .datacenter("dc1")
                .federatedDatacenter("dc2")
                .acl(TOKEN)
                .start();
        client = Consul.builder()
                .withHostAndPort(HostAndPort.fromString(server.address()))
                .withTokenAuth(TOKEN)
                .build();
        app = new HealthEndpoints("127.0.0.1");
    }

    ConsulTestServer server() {
        return server;
    }

    @Override
    public String address() {
        return server.address();
    }

    @Override
    public String managementToken() {
        return TOKEN;
    }

    @Override
    public Consul client() {
        return client;
    }

    @Override
    public HealthEndpoints app() {
        return app;
    }

    @Override
    public void stopConsul() {
        server.stop();
    }

    @Override
    public void startConsul() throws IOException {
        server.restart();
    }

    @Override
    public void close() {
        client.destroy();
        app.close();
        server.close();
    }
}
