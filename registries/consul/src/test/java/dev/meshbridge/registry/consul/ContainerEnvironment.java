package dev.meshbridge.registry.consul;

import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.google.common.net.HostAndPort;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.kiwiproject.consul.Consul;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.Testcontainers;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The scenarios' Consul as two real {@code hashicorp/consul} dev servers, dc1 (primary, ACLs on) and dc2 joined over
 * the WAN, so {@code ?dc=dc2} through dc1 is forwarded as in a federated estate. dc1 keeps a fixed host port, so a
 * stop and start of its container comes back on the same address; dev mode keeps no state across that restart.
 */
final class ContainerEnvironment implements ConsulEnvironment {

    static final DockerImageName IMAGE = DockerImageName.parse("hashicorp/consul:1.22");
    static final String TOKEN = "4b7f6a0e-2d6c-4a53-9d83-0c1f2a7b9e51";

    private final Network network = Network.newNetwork();
    private final HealthEndpoints app;
    private final int hostPort;
    private final GenericContainer<?> dc1;
    private final GenericContainer<?> dc2;
    private final Consul client;

    ContainerEnvironment() throws Exception {
        app = new HealthEndpoints("host.testcontainers.internal");
        Testcontainers.exposeHostPorts(app.port());
        try (ServerSocket s = new ServerSocket(0)) {
            hostPort = s.getLocalPort();
        }
        dc1 = server(
                        "dc1",
                        "{\"primary_datacenter\":\"dc1\",\"acl\":{\"enabled\":true,\"default_policy\":\"deny\","
                                + "\"tokens\":{\"initial_management\":\"" + TOKEN + "\",\"agent\":\"" + TOKEN + "\"}}}")
                .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig()
                        .withPortBindings(new PortBinding(Ports.Binding.bindPort(hostPort), ExposedPort.tcp(8500))));
        dc1.start();
        dc2 = server(
                        "dc2",
                        "{\"primary_datacenter\":\"dc1\",\"acl\":{\"enabled\":true,\"default_policy\":\"deny\","
                                + "\"enable_token_replication\":true,\"tokens\":{\"agent\":\"" + TOKEN
                                + "\",\"replication\":\""
                                + TOKEN + "\"}}}")
                .withCommand(command("dc2", "-retry-join-wan=consul-dc1"));
        dc2.start();
        client = Consul.builder()
                .withHostAndPort(HostAndPort.fromString(address()))
                .withTokenAuth(TOKEN)
                .build();
        await().atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(() -> client.catalogClient().getDatacenters().containsAll(List.of("dc1", "dc2"))
                        && client.catalogClient()
                                        .getServices(org.kiwiproject.consul.option.ImmutableQueryOptions.builder()
                                                .datacenter("dc2")
                                                .build())
                                        .getIndex()
                                        .signum()
                                > 0);
    }

    private GenericContainer<?> server(String dc, String config) {
        return new GenericContainer<>(IMAGE)
                .withNetwork(network)
                .withNetworkAliases("consul-" + dc)
                .withExposedPorts(8500)
                .withEnv("CONSUL_LOCAL_CONFIG", config)
                .withCommand(command(dc))
                .waitingFor(Wait.forHttp("/v1/status/leader")
                        .forPort(8500)
                        .forResponsePredicate(body -> body.length() > 4)
                        .withStartupTimeout(Duration.ofSeconds(90)));
    }

    private static String[] command(String dc, String... more) {
        List<String> args = new java.util.ArrayList<>(List.of(
                "agent",
                "-dev",
                "-client=0.0.0.0",
                "-bind={{ GetInterfaceIP \"eth0\" }}",
                "-datacenter=" + dc,
                "-node=consul-" + dc));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    @Override
    public String address() {
        return dc1.getHost() + ":" + hostPort;
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
        DockerClient docker = DockerClientFactory.instance().client();
        docker.stopContainerCmd(dc1.getContainerId()).withTimeout(2).exec();
    }

    @Override
    public void startConsul() {
        DockerClient docker = DockerClientFactory.instance().client();
        docker.startContainerCmd(dc1.getContainerId()).exec();
        await().atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(() -> !client.statusClient().getLeader().isEmpty()
                        && client.agentClient().getAgent() != null);
    }

    @Override
    public void close() {
        client.destroy();
        dc2.stop();
        dc1.stop();
        network.close();
        app.close();
    }
}
