package dev.meshbridge.registry.consul;

import org.kiwiproject.consul.Consul;

/**
 * A Consul that the shared scenarios ({@link ConsulWatcherScenarios}) run against: the protocol-level test server or a
 * real {@code hashicorp/consul} container. ACLs are on in both, with a management token.
 */
interface ConsulEnvironment extends AutoCloseable {

    /** {@code host:port} of the agent in the first datacenter. */
    String address();

    default String firstDatacenter() {
        return "dc1";
    }

    /** A second datacenter, reachable through {@link #address()} with {@code ?dc=}. */
    default String secondDatacenter() {
        return "dc2";
    }

    String managementToken();

    /** A real client (kiwiproject consul-client) holding the management token, for registering as applications do. */
    Consul client();

    /** The health endpoints of the "applications", reachable from Consul for HTTP checks. */
    HealthEndpoints app();

    /** Consul goes down: open connections drop, new ones are refused. */
    void stopConsul() throws Exception;

    /** Consul comes back on the same address; returns once it answers. */
    void startConsul() throws Exception;

    @Override
    void close();
}
