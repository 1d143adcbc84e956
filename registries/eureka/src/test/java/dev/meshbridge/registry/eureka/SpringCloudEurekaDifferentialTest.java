package dev.meshbridge.registry.eureka;

import static dev.meshbridge.registry.eureka.testing.EurekaRegistrar.springCloudInstance;
import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.appinfo.EurekaInstanceConfig;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import com.netflix.appinfo.MyDataCenterInstanceConfig;
import com.netflix.appinfo.providers.EurekaConfigBasedInstanceInfoProvider;
import com.netflix.discovery.DefaultEurekaClientConfig;
import com.netflix.discovery.DiscoveryClient;
import com.netflix.discovery.shared.Application;
import com.netflix.discovery.shared.transport.jersey3.Jersey3TransportClientFactories;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.testing.Differential;
import dev.meshbridge.core.testing.Differential.Identity;
import dev.meshbridge.core.testing.Differential.Target;
import dev.meshbridge.registry.eureka.testing.EmbeddedEurekaServer;
import dev.meshbridge.registry.eureka.testing.EurekaRegistrar;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.netflix.eureka.EurekaDiscoveryClient;

/**
 * The differential suite of Spring Cloud Netflix Eureka: seeded rounds register (as Spring Cloud's client does, over
 * REST), re-register with another status, override the status as an operator does, enable a secure port, and cancel
 * instances of a real Eureka server in-process; some instances register their IP as {@code hostName} ({@code
 * prefer-ip-address=true}), others a host name with a different {@code ipAddr}. After each round, for every
 * application, the instances Spring's own {@link EurekaDiscoveryClient#getInstances} returns, on a real Netflix
 * {@code DiscoveryClient} that has fetched the registry (only {@code UP} instances, as its default {@code
 * shouldFilterOnlyUpInstances}), at the host and port they give ({@code getHost()}, {@code getPort()}: the secure port
 * when it is enabled), must be exactly the endpoints the bridge serves as routable; a host name counts as the address
 * it resolves to (one table for both sides).
 */
class SpringCloudEurekaDifferentialTest {

    private static final List<String> APPS = List.of("orders", "stock");
    private static final List<InstanceStatus> STATUSES = List.of(
            InstanceStatus.UP,
            InstanceStatus.UP,
            InstanceStatus.UP,
            InstanceStatus.DOWN,
            InstanceStatus.STARTING,
            InstanceStatus.OUT_OF_SERVICE,
            InstanceStatus.UNKNOWN);
    private static final List<Integer> PORTS = List.of(8080, 8081, 9000);
    private static final Map<String, String> NAMES = names();

    private static EmbeddedEurekaServer server;
    private static EurekaRegistrar registrar;
    private static DiscoveryClient netflix;
    private static EurekaDiscoveryClient spring;

    /** The instances registered, by instance id, as last sent (status overrides applied on top by the server). */
    private final Map<String, InstanceInfo> registered = new LinkedHashMap<>();
    /** The status an operator set on an instance, if any. */
    private final Map<String, InstanceStatus> overridden = new HashMap<>();

    private static Map<String, String> names() {
        Map<String, String> m = new TreeMap<>();
        for (int i = 1; i <= 4; i++) m.put("eu-node-" + i + ".diff.example", "127.5.9." + i);
        return m;
    }

    @BeforeAll
    static void start() {
        server = EmbeddedEurekaServer.start();
        registrar = new EurekaRegistrar(server.serviceUrl());
        EurekaInstanceConfig instanceConfig = new MyDataCenterInstanceConfig();
        ApplicationInfoManager infoManager = new ApplicationInfoManager(
                instanceConfig, new EurekaConfigBasedInstanceInfoProvider(instanceConfig).get());
        DefaultEurekaClientConfig clientConfig = new ConsumerConfig(server.serviceUrl());
        netflix = new DiscoveryClient(infoManager, clientConfig, Jersey3TransportClientFactories.getInstance());
        spring = new EurekaDiscoveryClient(netflix, clientConfig);
    }

    @AfterAll
    static void stop() {
        if (netflix != null) netflix.shutdown();
        registrar.close();
        server.close();
    }

    /** A consumer application's Eureka client: fetches, never registers; its own timer is left slow (rounds fetch). */
    private static final class ConsumerConfig extends DefaultEurekaClientConfig {
        private final String serviceUrl;

        ConsumerConfig(String serviceUrl) {
            this.serviceUrl = serviceUrl;
        }

        @Override
        public boolean shouldRegisterWithEureka() {
            return false;
        }

        @Override
        public boolean shouldFetchRegistry() {
            return true;
        }

        @Override
        public List<String> getEurekaServerServiceUrls(String myZone) {
            return List.of(serviceUrl);
        }

        @Override
        public int getRegistryFetchIntervalSeconds() {
            return 300;
        }
    }

    @Test
    void everyRound_theBridgeServesWhatSpringsDiscoveryClientReturns() throws Exception {
        Differential.Rounds rounds = new Differential.Rounds("spring-cloud-eureka", 100, Duration.ofSeconds(30));
        Random random = rounds.random();
        try (Differential.Bridge bridge = new Differential.Bridge(
                "type: eureka\nname: eu\naddresses: [\"" + server.serviceUrl() + "\"]\nfetchInterval: 50ms",
                SpringCloudEurekaDifferentialTest::lookup)) {
            bridge.awaitSynced();
            rounds.run(round -> {
                int ops = 1 + random.nextInt(3);
                for (int i = 0; i < ops; i++) change(random);
                String[] lastLag = {null};
                if (!Differential.awaitConsumer(() -> (lastLag[0] = lag()) == null, Duration.ofSeconds(30)))
                    return List.of("Spring's Eureka client did not catch up: " + lastLag[0]);
                return Differential.disagreements(
                        truth(),
                        () -> {
                            freshResponses();
                            return bridge.snapshot();
                        },
                        Duration.ofMillis(600),
                        (service, e, portName, port) -> new Target(
                                e.address(),
                                port,
                                e.weight(),
                                details(portName.equals("https"), e.labels().get("zone"))));
            });
        }
        assertThat(rounds.ran()).isPositive();
    }

    static InetAddress[] lookup(String host) throws UnknownHostException {
        String address = NAMES.get(host);
        if (address == null) throw new UnknownHostException(host);
        return new InetAddress[] {InetAddress.getByName(address)};
    }

    private static SortedMap<String, String> details(boolean secure, String zone) {
        SortedMap<String, String> d = new TreeMap<>();
        d.put("secure", Boolean.toString(secure));
        if (zone != null) d.put("zone", zone);
        return d;
    }

    // ------------------------------------------------------------------ the rounds' changes

    private void change(Random random) {
        int dice = random.nextInt(100);
        if (dice < 40 || registered.isEmpty()) {
            register(random, null);
        } else if (dice < 60) {
            String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
            registrar.cancel(registered.remove(id));
            overridden.remove(id);
        } else if (dice < 80) {
            // Spring Cloud re-registers on every change of its own status or metadata
            String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
            register(random, registered.get(id));
        } else {
            String id = Differential.pick(random, new ArrayList<>(registered.keySet()));
            InstanceInfo info = registered.get(id);
            if (overridden.containsKey(id) && random.nextBoolean()) {
                // the server shows UNKNOWN until the instance's next heartbeat, which is sent here at once
                registrar.removeStatusOverride(info);
                registrar.renew(info);
                overridden.remove(id);
            } else {
                InstanceStatus status = random.nextBoolean() ? InstanceStatus.OUT_OF_SERVICE : InstanceStatus.UP;
                registrar.overrideStatus(info, status);
                overridden.put(id, status);
            }
        }
    }

    /** Registers a new instance, or {@code same} again with a new status, metadata and secure port. */
    private void register(Random random, InstanceInfo same) {
        String app = same != null ? same.getVIPAddress() : Differential.pick(random, APPS);
        String hostName;
        String ip;
        int port;
        if (same != null) {
            hostName = same.getHostName();
            ip = same.getIPAddr();
            port = same.getPort();
        } else {
            int tries = 0;
            do {
                ip = "127.5." + random.nextInt(2) + "." + (1 + random.nextInt(6));
                hostName = random.nextInt(3) == 0 ? Differential.pick(random, new ArrayList<>(NAMES.keySet())) : ip;
                port = Differential.pick(random, PORTS);
            } while (taken(app, hostName, port) && ++tries < 500);
            if (taken(app, hostName, port))
                return; // every address this service can draw is taken: this round registers nothing
        }
        InstanceInfo.Builder b =
                springCloudInstance(app, hostName, ip, port).setStatus(Differential.pick(random, STATUSES));
        Map<String, String> metadata = new HashMap<>();
        metadata.put("management.port", Integer.toString(port));
        if (random.nextBoolean()) metadata.put("zone", Differential.pick(random, List.of("zone-a", "zone-b")));
        b.setMetadata(metadata);
        if (random.nextInt(3) == 0) {
            // server.ssl.enabled with eureka.instance.secure-port-enabled: the secure port on, the plain one kept or
            // off
            b.setSecurePort(port + 10_000).enablePort(InstanceInfo.PortType.SECURE, true);
            if (random.nextBoolean()) b.enablePort(InstanceInfo.PortType.UNSECURE, false);
        }
        InstanceInfo info = b.build();
        registrar.register(info);
        registered.put(info.getId(), info);
    }

    /** One instance per resolved address and port in an application (the bridge's duplicate rule merges a socket). */
    private boolean taken(String app, String hostName, int port) {
        String resolved = NAMES.getOrDefault(hostName, hostName);
        for (InstanceInfo i : registered.values()) {
            if (i.getVIPAddress().equals(app)
                    && NAMES.getOrDefault(i.getHostName(), i.getHostName()).equals(resolved)
                    && i.getPort() == port) return true;
        }
        return false;
    }

    // ------------------------------------------------------------------ the consumer's truth

    /**
     * Null once Spring's client, after a fetch (what its 30-second timer does, now), holds every instance the server
     * has, with its status and secure port, else what differs.
     */
    private String lag() {
        freshResponses();
        try {
            Method refresh = DiscoveryClient.class.getDeclaredMethod("refreshRegistry");
            refresh.setAccessible(true);
            refresh.invoke(netflix);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        for (String app : APPS) {
            String name = app.toUpperCase(java.util.Locale.ROOT);
            SortedSet<String> expected = new TreeSet<>();
            Application onServer = server.registry().getApplication(name);
            if (onServer != null) {
                for (InstanceInfo i : onServer.getInstancesAsIsFromEureka()) expected.add(describe(i));
            }
            SortedSet<String> seen = new TreeSet<>();
            Application a = netflix.getApplication(name);
            if (a != null) {
                for (InstanceInfo i : a.getInstancesAsIsFromEureka()) seen.add(describe(i));
            }
            if (!expected.equals(seen)) return app + ": on the server " + expected + ", fetched " + seen;
        }
        return null;
    }

    /**
     * Drops the server's cached responses, as their expiry (180 s) would: a fetch that reads the registry just before a
     * change and stores its answer just after the change's invalidation leaves that stale answer (a delta without the
     * change, or an old full registry) in the server's read-write response cache until the next change or the
     * expiry, for every client alike (seen here with Netflix's own client and the bridge; a real server's read-only
     * cache adds its 30 s on top).
     */
    private static void freshResponses() {
        for (String app : APPS) {
            server.registry().getResponseCache().invalidate(app.toUpperCase(java.util.Locale.ROOT), app, app);
        }
    }

    private static String describe(InstanceInfo i) {
        return i.getId() + " " + i.getStatus() + " secure=" + i.isPortEnabled(InstanceInfo.PortType.SECURE) + " zone="
                + i.getMetadata().get("zone");
    }

    private Map<Identity, SortedSet<Target>> truth() {
        Map<Identity, SortedSet<Target>> truth = new LinkedHashMap<>();
        for (String app : APPS) {
            SortedSet<Target> targets = new TreeSet<>();
            for (ServiceInstance i : spring.getInstances(app)) {
                targets.add(new Target(
                        NAMES.getOrDefault(i.getHost(), i.getHost()),
                        i.getPort(),
                        Endpoint.DEFAULT_WEIGHT,
                        details(i.isSecure(), i.getMetadata().get("zone"))));
            }
            truth.put(identity(app), targets);
        }
        return truth;
    }

    /** An application: the watcher's shard of its (upper-case) name. */
    static Identity identity(String app) {
        String name = app.toUpperCase(java.util.Locale.ROOT);
        return new Identity(name, (ServiceKey k) -> k.name().equals(name));
    }
}
