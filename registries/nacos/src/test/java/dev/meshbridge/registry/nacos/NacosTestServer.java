package dev.meshbridge.registry.nacos;

import com.alibaba.nacos.api.ability.constant.AbilityKey;
import com.alibaba.nacos.api.common.Constants;
import com.alibaba.nacos.api.config.remote.request.ConfigBatchListenRequest;
import com.alibaba.nacos.api.config.remote.request.ConfigChangeNotifyRequest;
import com.alibaba.nacos.api.config.remote.request.ConfigPublishRequest;
import com.alibaba.nacos.api.config.remote.request.ConfigQueryRequest;
import com.alibaba.nacos.api.config.remote.request.ConfigRemoveRequest;
import com.alibaba.nacos.api.config.remote.response.ConfigChangeBatchListenResponse;
import com.alibaba.nacos.api.config.remote.response.ConfigPublishResponse;
import com.alibaba.nacos.api.config.remote.response.ConfigQueryResponse;
import com.alibaba.nacos.api.config.remote.response.ConfigRemoveResponse;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.grpc.auto.BiRequestStreamGrpc;
import com.alibaba.nacos.api.grpc.auto.Payload;
import com.alibaba.nacos.api.grpc.auto.RequestGrpc;
import com.alibaba.nacos.api.naming.pojo.Instance;
import com.alibaba.nacos.api.naming.pojo.ServiceInfo;
import com.alibaba.nacos.api.naming.remote.NamingRemoteConstants;
import com.alibaba.nacos.api.naming.remote.request.AbstractNamingRequest;
import com.alibaba.nacos.api.naming.remote.request.BatchInstanceRequest;
import com.alibaba.nacos.api.naming.remote.request.InstanceRequest;
import com.alibaba.nacos.api.naming.remote.request.NamingFuzzyWatchChangeNotifyRequest;
import com.alibaba.nacos.api.naming.remote.request.NamingFuzzyWatchRequest;
import com.alibaba.nacos.api.naming.remote.request.NamingFuzzyWatchSyncRequest;
import com.alibaba.nacos.api.naming.remote.request.NotifySubscriberRequest;
import com.alibaba.nacos.api.naming.remote.request.PersistentInstanceRequest;
import com.alibaba.nacos.api.naming.remote.request.ServiceListRequest;
import com.alibaba.nacos.api.naming.remote.request.ServiceQueryRequest;
import com.alibaba.nacos.api.naming.remote.request.SubscribeServiceRequest;
import com.alibaba.nacos.api.naming.remote.response.BatchInstanceResponse;
import com.alibaba.nacos.api.naming.remote.response.InstanceResponse;
import com.alibaba.nacos.api.naming.remote.response.NamingFuzzyWatchResponse;
import com.alibaba.nacos.api.naming.remote.response.QueryServiceResponse;
import com.alibaba.nacos.api.naming.remote.response.ServiceListResponse;
import com.alibaba.nacos.api.naming.remote.response.SubscribeServiceResponse;
import com.alibaba.nacos.api.naming.utils.NamingUtils;
import com.alibaba.nacos.api.remote.request.ConnectionSetupRequest;
import com.alibaba.nacos.api.remote.request.HealthCheckRequest;
import com.alibaba.nacos.api.remote.request.Request;
import com.alibaba.nacos.api.remote.request.ServerRequest;
import com.alibaba.nacos.api.remote.request.SetupAckRequest;
import com.alibaba.nacos.api.remote.response.ErrorResponse;
import com.alibaba.nacos.api.remote.response.HealthCheckResponse;
import com.alibaba.nacos.api.remote.response.Response;
import com.alibaba.nacos.api.remote.response.ServerCheckResponse;
import com.alibaba.nacos.common.remote.client.grpc.GrpcUtils;
import com.alibaba.nacos.common.utils.FuzzyGroupKeyPattern;
import com.alibaba.nacos.shaded.io.grpc.Attributes;
import com.alibaba.nacos.shaded.io.grpc.Context;
import com.alibaba.nacos.shaded.io.grpc.Contexts;
import com.alibaba.nacos.shaded.io.grpc.Grpc;
import com.alibaba.nacos.shaded.io.grpc.Metadata;
import com.alibaba.nacos.shaded.io.grpc.Server;
import com.alibaba.nacos.shaded.io.grpc.ServerCall;
import com.alibaba.nacos.shaded.io.grpc.ServerCallHandler;
import com.alibaba.nacos.shaded.io.grpc.ServerInterceptor;
import com.alibaba.nacos.shaded.io.grpc.ServerInterceptors;
import com.alibaba.nacos.shaded.io.grpc.ServerTransportFilter;
import com.alibaba.nacos.shaded.io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import com.alibaba.nacos.shaded.io.grpc.stub.StreamObserver;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A protocol-level Nacos server for tests, driven by the real nacos-client: it speaks the gRPC protocol of a Nacos
 * server (port + 1000) and the few HTTP APIs the bridge uses (port), so that registering clients (as Spring Cloud
 * Alibaba and Dubbo register) and the watcher run unmodified against it.
 *
 * <p>It follows the Nacos server at {@link Version#V3_1_1} (3.1.1) or {@link Version#V2_5_1} (2.5.1), as their
 * sources do it:
 *
 * <ol>
 *   <li>connection: {@code ServerCheckRequest} answers the connection id ({@code <millis>_<ip>_<port>} of the
 *       transport); on the bi-stream, {@code ConnectionSetupRequest} registers the connection and the server answers
 *       {@code SetupAckRequest} with its abilities (3.1.1 adds {@code fuzzyWatch}); requests on an unregistered
 *       connection get {@code ErrorResponse 301 "Connection is unregistered."}; {@code HealthCheckRequest} is
 *       answered;
 *   <li>naming: {@code InstanceRequest} and {@code BatchInstanceRequest} publish ephemeral instances of the
 *       connection (one registration, or one batch, per service and connection: a second one replaces the first), and
 *       they die with the connection; {@code PersistentInstanceRequest} keeps instances until deregistered (and
 *       across {@link #restart()}); a service keeps the ephemeral kind it was created with;
 *       {@code SubscribeServiceRequest}, {@code ServiceQueryRequest} and pushes ({@code NotifySubscriberRequest})
 *       carry the enabled instances only, as {@code ServiceUtil.selectInstancesWithHealthyProtection(.., enableOnly)}
 *       does (services have no protect-threshold metadata here, so health is passed through);
 *       {@code ServiceListRequest} pages the names of one group; a change is pushed to subscribers after the push
 *       delay ({@code nacos.naming.push.pushTaskDelay}, 500 ms by default), changes within it merged into one push;
 *       a service without instances disappears after the empty-service expiry
 *       ({@code nacos.naming.clean.empty-service.expired-time});
 *   <li>3.1.1 fuzzy watch: {@code NamingFuzzyWatchRequest} registers a pattern, the matching services are sent in
 *       {@code NamingFuzzyWatchSyncRequest}s (init or diff, then {@code FINISH_FUZZY_WATCH_INIT_NOTIFY}), and a
 *       service created or removed later is sent as {@code NamingFuzzyWatchChangeNotifyRequest} after the push delay;
 *   <li>auth (when enabled): login over HTTP ({@code /v3/auth/user/login} on 3.1.1, {@code /v1/auth/users/login}
 *       on 2.5.1; a wrong user or password is {@code 403 unknown user!} on 2.5.1, and on 3.1.1 HTTP 500 with the
 *       authentication manager's message {@code User not found! Please check user exist or password is right!}, as
 *       a 3.x server answers when its generic exception handler meets the {@code AccessException}); naming requests
 *       without a valid {@code accessToken} header answer 403 ({@code user not found!} or {@code token invalid!});
 *       a user with read permission on some namespaces only ({@link Builder#reader}) gets 403 {@code authorization
 *       failed!} for the others (gRPC and HTTP) and, on 3.1.1, for the namespace list (an admin API);
 *   <li>restart ({@link #restart(Duration, Duration)}): down for a while, then, as a server that is still starting,
 *       {@code ServerCheckRequest}s answer {@code 300 Server is starting,please try later.} except one admitted per
 *       interval (for 20 intervals), so clients come back (and register again) over seconds;
 *   <li>HTTP lists: namespaces ({@code /v3/admin/core/namespace/list} or {@code /v1/console/namespaces}) and
 *       services of all groups ({@code /v3/admin/ns/service/list} or {@code /v1/ns/catalog/services}).
 * </ol>
 *
 * <p>Config (what Dubbo's config center on Nacos needs): {@code ConfigPublishRequest} and {@code ConfigRemoveRequest}
 * store and delete a config per (namespace, group, data id), the empty namespace being {@code public};
 * {@code ConfigQueryRequest} answers its content and MD5, or {@code 300 "config data not exist"};
 * {@code ConfigBatchListenRequest} registers (or, with {@code listen=false}, removes) the connection's listeners and
 * answers the configs whose MD5 differs from the client's; a change is pushed to the listening connections as {@code
 * ConfigChangeNotifyRequest}, after which the client queries again.
 *
 * <p>TLS ({@link Builder#tls}): the gRPC port (netty, as Nacos's {@code nacos.remote.server.rpc.tls.*}) and the
 * HTTP API both serve the given certificate and, with a client CA, require a client certificate. Access keys
 * ({@link Builder#accessKey}): naming requests on gRPC and the HTTP lists must carry a signature that
 * {@link NacosSignatureVerifier} accepts, else 403 with its reason (config requests are not checked).
 *
 * <p>Timing knobs for race tests: {@link #holdRegistrations} and {@link #holdRegistrationsOf} (registrations refused as
 * by a starting server), {@link #withholdPushes} (a service's pushes held back, as a server pushing late) and {@link
 * #blockNextServiceList()} (a listing held in flight).
 *
 * <p>Not modelled: clustering (Distro/Raft), server-side health checks of persistent instances, selectors, config
 * beta/tag/gray releases and fuzzy watch of configs.
 */
public final class NacosTestServer implements AutoCloseable {

    /** The Nacos server version whose protocol is followed. */
    public enum Version {
        V2_5_1("2.5.1"),
        V3_1_1("3.1.1");

        final String text;

        Version(String text) {
            this.text = text;
        }

        boolean isV3() {
            return this == V3_1_1;
        }
    }

    private static final Attributes.Key<String> CONN_ID = Attributes.Key.create("meshbridge.test.connId");
    private static final Context.Key<String> CTX_CONN_ID = Context.key("meshbridge.test.connId");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PUBLIC = "public";

    private final Version version;
    private final Duration pushDelay;
    private final Duration emptyServiceExpiry;
    private final String username;
    private final String password;
    private final Map<String, String> readerPasswords;
    private final Map<String, Set<String>> readerNamespaces;
    private final Map<String, String> tokenUsers = new ConcurrentHashMap<>();
    /** By namespace, the users whose token came with an accepted gRPC subscription. */
    private final Map<String, Set<String>> subscribers = new ConcurrentHashMap<>();
    /** While a restarted server is "starting": when the next connection may be admitted (nanos), and the step. */
    private long admitNextAt;

    private long admitStep;

    private long startedBy;

    /** While set, ephemeral registrations are refused as a starting server refuses them (see {@link #holdRegistrations}). */
    private boolean registrationsHeld;

    /** Addresses whose ephemeral registrations are refused so (see {@link #holdRegistrationsOf}). */
    private Set<String> registrationsHeldOf = Set.of();

    /** Service names whose pushes are held back, and the services with a push held back (see {@link #withholdPushes}). */
    private final Set<String> pushesWithheld = new HashSet<>();

    private final Set<SvcId> pushesDeferred = new HashSet<>();

    /** The next {@code ServiceListRequest} waits at this gate (see {@link #blockNextServiceList()}), or null. */
    private final AtomicReference<Gate> serviceListGate = new AtomicReference<>();

    private final Map<String, AtomicLong> serviceQueries = new ConcurrentHashMap<>();

    private final String contextPath;
    private final int port;

    private final Object lock = new Object();

    private boolean stopping;
    private final Map<String, Conn> connections = new HashMap<>();
    private final Map<SvcId, Svc> services = new TreeMap<>();
    private final Set<String> extraNamespaces = new TreeSet<>();
    private final Set<String> tokens = ConcurrentHashMap.newKeySet();
    private final Map<SvcId, Set<String>> pendingPushes = new HashMap<>();
    private final AtomicLong requestIds = new AtomicLong();
    private final AtomicLong pushesSent = new AtomicLong();

    private ScheduledExecutorService scheduler;
    private Server grpc;
    private HttpServer httpServer;

    private record CfgId(String namespace, String group, String dataId) {
        static CfgId of(String tenant, String group, String dataId) {
            return new CfgId(tenant == null || tenant.isBlank() ? PUBLIC : tenant, group, dataId);
        }
    }

    private final Map<CfgId, String> configs = new HashMap<>();

    private record SvcId(String namespace, String group, String name) implements Comparable<SvcId> {
        String serviceKey() {
            return NamingUtils.getServiceKey(namespace, group, name);
        }

        @Override
        public int compareTo(SvcId o) {
            return serviceKey().compareTo(o.serviceKey());
        }
    }

    private static final class Svc {
        final SvcId id;
        final boolean ephemeral;
        final Map<String, Instance> persistent = new LinkedHashMap<>();
        long emptySinceNanos;

        Svc(SvcId id, boolean ephemeral) {
            this.id = id;
            this.ephemeral = ephemeral;
            this.emptySinceNanos = System.nanoTime();
        }
    }

    private static final class Conn {
        final String id;
        final StreamObserver<Payload> stream;
        final Map<SvcId, List<Instance>> published = new HashMap<>();
        final Set<SvcId> subscribed = new HashSet<>();
        final Map<String, Set<String>> fuzzyPatterns = new HashMap<>();
        /** Configs this connection listens to, with the tenant as the client wrote it (pushes echo it). */
        final Map<CfgId, String> configListens = new HashMap<>();

        Conn(String id, StreamObserver<Payload> stream) {
            this.id = id;
            this.stream = stream;
        }
    }

    private NacosTestServer(Builder b) {
        this.version = b.version;
        this.pushDelay = b.pushDelay;
        this.emptyServiceExpiry = b.emptyServiceExpiry;
        this.username = b.username;
        this.password = b.password;
        this.readerPasswords = Map.copyOf(b.readerPasswords);
        this.readerNamespaces = Map.copyOf(b.readerNamespaces);
        this.contextPath = b.contextPath;
        this.port = b.port > 0 ? b.port : freePortPair();
        this.tlsCert = b.tlsCert;
        this.tlsKey = b.tlsKey;
        this.tlsClientCa = b.tlsClientCa;
        this.verifier =
                b.accessKeys.isEmpty() ? null : new NacosSignatureVerifier(b.accessKeys, java.time.Clock.systemUTC());
    }

    private final java.nio.file.Path tlsCert;
    private final java.nio.file.Path tlsKey;
    private final java.nio.file.Path tlsClientCa;
    private final NacosSignatureVerifier verifier;

    private final Map<String, Set<java.math.BigInteger>> clientSerials = new ConcurrentHashMap<>();

    /** The serial numbers of the client certificates presented on {@code grpc} or {@code http} connections. */
    public Set<java.math.BigInteger> clientSerials(String channel) {
        return Set.copyOf(clientSerials.getOrDefault(channel, Set.of()));
    }

    private void sawClient(String channel, javax.net.ssl.SSLSession session) {
        if (session == null) return;
        try {
            java.security.cert.Certificate[] chain = session.getPeerCertificates();
            if (chain.length > 0 && chain[0] instanceof java.security.cert.X509Certificate x) {
                clientSerials
                        .computeIfAbsent(channel, c -> ConcurrentHashMap.newKeySet())
                        .add(x.getSerialNumber());
            }
        } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
            // no client certificate
        }
    }

    /** The access-key verifier (null without {@link Builder#accessKey}): what it accepted and refused, by channel. */
    public NacosSignatureVerifier signatures() {
        return verifier;
    }

    /** With {@link Builder#auth}: the users whose token came with an accepted gRPC subscription in a namespace. */
    public Set<String> subscribers(String namespace) {
        return Set.copyOf(subscribers.getOrDefault(namespace, Set.of()));
    }

    /**
     * Makes every token issued so far invalid (as a real server whose token secret changed): requests carrying one are
     * refused with {@code token invalid!} until the client logs in again; also forgets the recorded subscribers.
     */
    public void forgetTokens() {
        tokens.clear();
        subscribers.clear();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options of a test server; defaults are those of a real standalone server. */
    public static final class Builder {
        private Version version = Version.V3_1_1;
        private Duration pushDelay = Duration.ofMillis(500);
        private Duration emptyServiceExpiry = Duration.ofSeconds(60);
        private String username;
        private String password;
        private final Map<String, String> readerPasswords = new HashMap<>();
        private final Map<String, Set<String>> readerNamespaces = new HashMap<>();
        private String contextPath = "/nacos";
        private int port;
        private java.nio.file.Path tlsCert;
        private java.nio.file.Path tlsKey;
        private java.nio.file.Path tlsClientCa;
        private final Map<String, String> accessKeys = new HashMap<>();

        /**
         * Serves the gRPC port and the HTTP API over TLS with this certificate chain and PKCS#8 key; with a
         * {@code clientCa}, both require a client certificate signed by it (Nacos's {@code mutualAuth}).
         */
        public Builder tls(java.nio.file.Path certFile, java.nio.file.Path keyFile, java.nio.file.Path clientCa) {
            this.tlsCert = certFile;
            this.tlsKey = keyFile;
            this.tlsClientCa = clientCa;
            return this;
        }

        /** Requires an access-key signature ({@link NacosSignatureVerifier}) on naming requests and HTTP lists. */
        public Builder accessKey(String accessKey, String secretKey) {
            accessKeys.put(accessKey, secretKey);
            return this;
        }

        public Builder version(Version v) {
            this.version = v;
            return this;
        }

        public Builder pushDelay(Duration d) {
            this.pushDelay = d;
            return this;
        }

        public Builder emptyServiceExpiry(Duration d) {
            this.emptyServiceExpiry = d;
            return this;
        }

        /** Enables auth with one user, an admin (every permission). */
        public Builder auth(String user, String pass) {
            this.username = user;
            this.password = pass;
            return this;
        }

        /** A user (with {@link #auth}) whose role has read permission on these namespaces only, and no admin role. */
        public Builder reader(String user, String pass, Set<String> namespaces) {
            readerPasswords.put(user, pass);
            readerNamespaces.put(user, Set.copyOf(namespaces));
            return this;
        }

        public Builder port(int p) {
            this.port = p;
            return this;
        }

        public NacosTestServer start() {
            NacosTestServer s = new NacosTestServer(this);
            s.startServers();
            return s;
        }
    }

    /** The main (HTTP) port; gRPC listens on this + 1000, as nacos-client expects. */
    public int port() {
        return port;
    }

    public String address() {
        return "127.0.0.1:" + port;
    }

    public Version version() {
        return version;
    }

    /** Adds a namespace to the namespace list (namespaces that hold services are listed anyway). */
    public void createNamespace(String id) {
        synchronized (lock) {
            extraNamespaces.add(id);
        }
    }

    /** The instances subscribers of a service get now. */
    public List<Instance> instances(String namespace, String group, String name) {
        synchronized (lock) {
            return selectInstances(new SvcId(namespace, group, name), "", false);
        }
    }

    public int connectionCount() {
        synchronized (lock) {
            return connections.size();
        }
    }

    /** Server-to-client requests sent so far (pushes, sync and change notifications). */
    public long pushesSent() {
        return pushesSent.get();
    }

    /** Stops serving and drops every connection: ephemeral instances, subscriptions and watches go with them. */
    public void stop() {
        Server g;
        HttpServer h;
        ScheduledExecutorService s;
        synchronized (lock) {
            stopping = true;
            g = grpc;
            h = httpServer;
            s = scheduler;
            grpc = null;
            httpServer = null;
            scheduler = null;
        }
        if (g != null) {
            g.shutdownNow();
            try {
                g.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (h != null) h.stop(0);
        if (s != null) s.shutdownNow();
        synchronized (lock) {
            connections.clear();
            pendingPushes.clear();
            services.values().removeIf(svc -> svc.ephemeral);
            stopping = false;
        }
    }

    /** A restart of a standalone server: persistent instances stay, ephemeral ones return when clients re-register. */
    public void restart() {
        stop();
        synchronized (lock) {
            admitStep = 0;
        }
        startServers();
    }

    /**
     * A restart as a real server does it: down for {@code down}, then up but "starting" for a while, admitting one new
     * connection every {@code admitEvery} (the others are told to try later), so clients reconnect and register
     * their ephemeral instances again over seconds, and subscribers get partial lists meanwhile. Returns at once; the
     * server starts on a thread of its own.
     */
    public void restart(Duration down, Duration admitEvery) {
        stop();
        synchronized (lock) {
            admitStep = admitEvery.toNanos();
            admitNextAt = System.nanoTime() + down.toNanos();
            startedBy = admitNextAt + 20 * admitStep;
        }
        ScheduledExecutorService once = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nacos-test-restart-" + port);
            t.setDaemon(true);
            return t;
        });
        once.schedule(
                () -> {
                    startServers();
                    once.shutdown();
                },
                down.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /**
     * While {@code held}, ephemeral registrations ({@code InstanceRequest}, {@code BatchInstanceRequest}) answer
     * {@code 300 Server is starting,please try later.}; each nacos-client retries at its next redo period. A test uses
     * it to keep a restarted server's state partial until a subscriber has seen it, whatever the clients' timing.
     */
    public void holdRegistrations(boolean held) {
        synchronized (lock) {
            registrationsHeld = held;
        }
    }

    /**
     * While {@code ips} is not empty, ephemeral registrations of instances with one of these addresses answer {@code
     * 300 Server is starting,please try later.} (as {@link #holdRegistrations}), the others go through: a test lets a
     * restarted server's applications come back in the order it wants.
     */
    public void holdRegistrationsOf(String... ips) {
        synchronized (lock) {
            registrationsHeldOf = Set.of(ips);
        }
    }

    /**
     * While {@code held}, changes of the services named {@code name} are not pushed to their subscribers (as a busy
     * server pushing late): a subscriber keeps its older list, while queries and new subscriptions get the current
     * one. Released, the held-back pushes go out.
     */
    public void withholdPushes(String name, boolean held) {
        synchronized (lock) {
            if (held) {
                pushesWithheld.add(name);
                return;
            }
            pushesWithheld.remove(name);
            for (Iterator<SvcId> it = pushesDeferred.iterator(); it.hasNext(); ) {
                SvcId id = it.next();
                if (!id.name().equals(name)) continue;
                it.remove();
                schedulePush(id, null);
            }
        }
    }

    /**
     * Makes the next {@code ServiceListRequest} (the watcher's service listing) wait, before it is answered, until the
     * returned gate is released (at most 30 s): a test holds a listing round in flight while it moves time.
     */
    public Gate blockNextServiceList() {
        Gate g = new Gate();
        serviceListGate.set(g);
        return g;
    }

    /** A request held until released. */
    public static final class Gate {
        private final CountDownLatch arrived = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        /** True once the request is waiting here (or waited). */
        public boolean arrived() {
            return arrived.getCount() == 0;
        }

        public void release() {
            released.countDown();
        }

        private void pass() {
            arrived.countDown();
            try {
                released.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@code ServiceQueryRequest}s (queries that bypass the client's cache) received so far for {@code name}. */
    public long serviceQueries(String name) {
        AtomicLong n = serviceQueries.get(name);
        return n == null ? 0 : n.get();
    }

    /** While starting, whether this new connection may come in now; one per admission step. */
    private boolean admit() {
        synchronized (lock) {
            long now = System.nanoTime();
            if (admitStep == 0 || now - startedBy > 0) return true;
            if (now - admitNextAt < 0) return false;
            admitNextAt = now + admitStep;
            return true;
        }
    }

    @Override
    public void close() {
        stop();
    }

    // ------------------------------------------------------------------ servers

    private void startServers() {
        ServerTransportFilter filter = new ServerTransportFilter() {
            @Override
            public Attributes transportReady(Attributes attrs) {
                sawClient("grpc", attrs.get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
                InetSocketAddress remote = (InetSocketAddress) attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                String id = System.currentTimeMillis() + "_"
                        + remote.getAddress().getHostAddress() + "_" + remote.getPort();
                return attrs.toBuilder().set(CONN_ID, id).build();
            }

            @Override
            public void transportTerminated(Attributes attrs) {
                String id = attrs.get(CONN_ID);
                if (id != null) disconnected(id);
            }
        };
        ServerInterceptor interceptor = new ServerInterceptor() {
            @Override
            public <Q, S> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, S> call, Metadata headers, ServerCallHandler<Q, S> next) {
                Context ctx = Context.current()
                        .withValue(CTX_CONN_ID, call.getAttributes().get(CONN_ID));
                return Contexts.interceptCall(ctx, call, headers, next);
            }
        };
        try {
            ScheduledExecutorService sched = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "nacos-test-server-" + port);
                t.setDaemon(true);
                return t;
            });
            NettyServerBuilder nb = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port + 1000));
            if (tlsCert != null) nb.sslContext(grpcTls());
            Server g = nb.addService(ServerInterceptors.intercept(new RequestService(), interceptor))
                    .addService(ServerInterceptors.intercept(new BiStreamService(), interceptor))
                    .addTransportFilter(filter)
                    .build()
                    .start();
            HttpServer h;
            if (tlsCert != null) {
                com.sun.net.httpserver.HttpsServer hs =
                        com.sun.net.httpserver.HttpsServer.create(new InetSocketAddress("127.0.0.1", port), 0);
                javax.net.ssl.SSLContext ctx = httpTls();
                hs.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(ctx) {
                    @Override
                    public void configure(com.sun.net.httpserver.HttpsParameters params) {
                        javax.net.ssl.SSLParameters p = ctx.getDefaultSSLParameters();
                        p.setNeedClientAuth(tlsClientCa != null);
                        params.setSSLParameters(p);
                    }
                });
                h = hs;
            } else {
                h = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
            }
            h.createContext("/", this::http);
            h.setExecutor(Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "nacos-test-http-" + port);
                t.setDaemon(true);
                return t;
            }));
            h.start();
            long tick = Math.max(50, Math.min(1000, emptyServiceExpiry.toMillis() / 2));
            sched.scheduleWithFixedDelay(this::cleanEmptyServices, tick, tick, TimeUnit.MILLISECONDS);
            synchronized (lock) {
                grpc = g;
                httpServer = h;
                scheduler = sched;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the Nacos test server on " + port, e);
        }
    }

    private com.alibaba.nacos.shaded.io.grpc.netty.shaded.io.netty.handler.ssl.SslContext grpcTls() throws IOException {
        var b = com.alibaba.nacos.shaded.io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts.forServer(
                tlsCert.toFile(), tlsKey.toFile());
        if (tlsClientCa != null) {
            b.trustManager(tlsClientCa.toFile())
                    .clientAuth(com.alibaba.nacos.shaded.io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth.REQUIRE);
        }
        return b.build();
    }

    private javax.net.ssl.SSLContext httpTls() throws IOException {
        try {
            var files = new dev.meshbridge.core.tls.ReloadingTls(
                            "nacos test server",
                            new dev.meshbridge.core.tls.TlsFiles(tlsCert, tlsKey, null, tlsClientCa),
                            java.time.Clock.systemUTC())
                    .load();
            javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
            ctx.init(
                    new javax.net.ssl.KeyManager[] {files.keyManager()},
                    tlsClientCa == null ? null : new javax.net.ssl.TrustManager[] {files.trustManager(null)},
                    null);
            return ctx;
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException("cannot use the test server's TLS files", e);
        }
    }

    /** A free port {@code p} whose {@code p + 1000} is free too (the gRPC port nacos-client derives). */
    static int freePortPair() {
        for (int attempt = 0; attempt < 50; attempt++) {
            int p;
            try (ServerSocket s = new ServerSocket(0)) {
                p = s.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (p + 1000 > 65535) continue;
            try (ServerSocket a = new ServerSocket(p);
                    ServerSocket b = new ServerSocket(p + 1000)) {
                return p;
            } catch (IOException e) {
                // taken, try another
            }
        }
        throw new IllegalStateException("no free port pair (p, p+1000)");
    }

    // ------------------------------------------------------------------ gRPC: unary requests

    private final class RequestService extends RequestGrpc.RequestImplBase {
        @Override
        public void request(Payload payload, StreamObserver<Payload> out) {
            String type = payload.getMetadata().getType();
            String connId = CTX_CONN_ID.get();
            Response response;
            if ("ServerCheckRequest".equals(type)) {
                response = admit()
                        ? new ServerCheckResponse(connId, true)
                        : ErrorResponse.build(
                                NacosException.INVALID_SERVER_STATUS, "Server is starting,please try later.");
            } else {
                if ("ServiceListRequest".equals(type)) {
                    Gate gate = serviceListGate.getAndSet(null);
                    if (gate != null) gate.pass();
                }
                response = handle(connId, payload);
            }
            out.onNext(GrpcUtils.convert(response));
            out.onCompleted();
        }
    }

    private static final Set<String> HANDLED = Set.of(
            "HealthCheckRequest",
            "InstanceRequest",
            "BatchInstanceRequest",
            "PersistentInstanceRequest",
            "SubscribeServiceRequest",
            "ServiceQueryRequest",
            "ServiceListRequest",
            "NamingFuzzyWatchRequest",
            "ConfigQueryRequest",
            "ConfigBatchListenRequest",
            "ConfigPublishRequest",
            "ConfigRemoveRequest");

    private Response handle(String connId, Payload payload) {
        String type = payload.getMetadata().getType();
        if (!HANDLED.contains(type) || ("NamingFuzzyWatchRequest".equals(type) && !version.isV3())) {
            return ErrorResponse.build(NacosException.NO_HANDLER, "RequestHandler Not Found");
        }
        synchronized (lock) {
            Conn conn = connections.get(connId);
            if (conn == null) return ErrorResponse.build(NacosException.UN_REGISTER, "Connection is unregistered.");
        }
        Request request;
        try {
            request = (Request) GrpcUtils.parse(payload);
        } catch (RuntimeException e) {
            return ErrorResponse.build(NacosException.BAD_GATEWAY, e.getMessage());
        }
        Response response;
        try {
            response = dispatch(connId, request);
        } catch (NacosException e) {
            response = ErrorResponse.build(e.getErrCode(), e.getErrMsg());
        }
        response.setRequestId(request.getRequestId());
        return response;
    }

    private Response dispatch(String connId, Request request) throws NacosException {
        if (request instanceof HealthCheckRequest) return new HealthCheckResponse();
        String authProblem = authProblem(request.getHeader("accessToken"));
        if (authProblem == null)
            authProblem = permissionProblem(request.getHeader("accessToken"), namespaceOf(request));
        if (authProblem == null && verifier != null && request instanceof AbstractNamingRequest r) {
            String service = r.getServiceName() == null || r.getServiceName().isBlank()
                    ? null
                    : id(r).group() + "@@" + r.getServiceName();
            authProblem = verifier.problem("grpc", request::getHeader, service);
        }
        if (authProblem == null && username != null && request instanceof SubscribeServiceRequest r) {
            String user = tokenUsers.get(String.valueOf(request.getHeader("accessToken")));
            if (user != null) {
                subscribers
                        .computeIfAbsent(r.getNamespace(), k -> ConcurrentHashMap.newKeySet())
                        .add(user);
            }
        }
        if (authProblem != null) {
            Response denied = emptyResponseFor(request);
            denied.setErrorInfo(NacosException.NO_RIGHT, authProblem);
            return denied;
        }
        synchronized (lock) {
            Conn conn = connections.get(connId);
            if (conn == null) return ErrorResponse.build(NacosException.UN_REGISTER, "Connection is unregistered.");
            if ((registrationsHeld || heldOf(request))
                    && (request instanceof InstanceRequest || request instanceof BatchInstanceRequest)) {
                return ErrorResponse.build(
                        NacosException.INVALID_SERVER_STATUS, "Server is starting,please try later.");
            }
            if (request instanceof ServiceQueryRequest r) {
                serviceQueries
                        .computeIfAbsent(r.getServiceName(), k -> new AtomicLong())
                        .incrementAndGet();
            }
            return switch (request) {
                case InstanceRequest r -> instance(conn, r);
                case BatchInstanceRequest r -> batch(conn, r);
                case PersistentInstanceRequest r -> persistent(r);
                case SubscribeServiceRequest r -> subscribe(conn, r);
                case ServiceQueryRequest r ->
                    QueryServiceResponse.buildSuccessResponse(serviceInfo(id(r), r.getCluster(), r.isHealthyOnly()));
                case ServiceListRequest r -> serviceList(r);
                case NamingFuzzyWatchRequest r -> fuzzyWatch(conn, r);
                case ConfigQueryRequest r -> configQuery(r);
                case ConfigBatchListenRequest r -> configListen(conn, r);
                case ConfigPublishRequest r ->
                    configChange(CfgId.of(r.getTenant(), r.getGroup(), r.getDataId()), r.getContent());
                case ConfigRemoveRequest r -> configChange(CfgId.of(r.getTenant(), r.getGroup(), r.getDataId()), null);
                default -> ErrorResponse.build(NacosException.NO_HANDLER, "RequestHandler Not Found");
            };
        }
    }

    /** Whether an ephemeral registration carries an instance whose address {@link #holdRegistrationsOf} holds. */
    private boolean heldOf(Request request) {
        if (registrationsHeldOf.isEmpty()) return false;
        return switch (request) {
            case InstanceRequest r ->
                r.getInstance() != null
                        && registrationsHeldOf.contains(r.getInstance().getIp());
            case BatchInstanceRequest r ->
                r.getInstances() != null
                        && r.getInstances().stream().anyMatch(i -> registrationsHeldOf.contains(i.getIp()));
            default -> false;
        };
    }

    // ------------------------------------------------------------------ config

    private static String md5(String content) {
        return content == null ? "" : com.alibaba.nacos.common.utils.MD5Utils.md5Hex(content, "UTF-8");
    }

    private Response configQuery(ConfigQueryRequest r) {
        String content = configs.get(CfgId.of(r.getTenant(), r.getGroup(), r.getDataId()));
        if (content == null) {
            return ConfigQueryResponse.buildFailResponse(ConfigQueryResponse.CONFIG_NOT_FOUND, "config data not exist");
        }
        ConfigQueryResponse ok = ConfigQueryResponse.buildSuccessResponse(content);
        ok.setMd5(md5(content));
        ok.setContentType("text");
        ok.setLastModified(System.currentTimeMillis());
        return ok;
    }

    private Response configListen(Conn conn, ConfigBatchListenRequest r) {
        ConfigChangeBatchListenResponse response = new ConfigChangeBatchListenResponse();
        for (ConfigBatchListenRequest.ConfigListenContext ctx : r.getConfigListenContexts()) {
            CfgId id = CfgId.of(ctx.getTenant(), ctx.getGroup(), ctx.getDataId());
            if (!r.isListen()) {
                conn.configListens.remove(id);
                continue;
            }
            conn.configListens.put(id, ctx.getTenant() == null ? "" : ctx.getTenant());
            String serverMd5 = md5(configs.get(id));
            String clientMd5 = ctx.getMd5() == null ? "" : ctx.getMd5();
            if (!serverMd5.equals(clientMd5))
                response.addChangeConfig(ctx.getDataId(), ctx.getGroup(), ctx.getTenant());
        }
        return response;
    }

    /** Publishes ({@code content} non-null) or removes a config and tells the listening connections. */
    private Response configChange(CfgId id, String content) {
        boolean removing = content == null;
        String old = removing ? configs.remove(id) : configs.put(id, content);
        if (!java.util.Objects.equals(old, content)) {
            Map<Conn, String> listening = new HashMap<>();
            for (Conn c : connections.values()) {
                String tenant = c.configListens.get(id);
                if (tenant != null) listening.put(c, tenant);
            }
            ScheduledExecutorService s = scheduler;
            Runnable notify = () -> listening.forEach(
                    (c, tenant) -> send(c, ConfigChangeNotifyRequest.build(id.dataId(), id.group(), tenant)));
            if (s != null) s.schedule(notify, pushDelay.toMillis(), TimeUnit.MILLISECONDS);
        }
        return removing ? ConfigRemoveResponse.buildSuccessResponse() : ConfigPublishResponse.buildSuccessResponse();
    }

    private static Response emptyResponseFor(Request request) {
        return switch (request) {
            case InstanceRequest r -> new InstanceResponse();
            case PersistentInstanceRequest r -> new InstanceResponse();
            case BatchInstanceRequest r -> new BatchInstanceResponse();
            case SubscribeServiceRequest r -> new SubscribeServiceResponse();
            case ServiceQueryRequest r -> new QueryServiceResponse();
            case ServiceListRequest r -> new ServiceListResponse();
            case NamingFuzzyWatchRequest r -> new NamingFuzzyWatchResponse();
            case ConfigQueryRequest r -> new ConfigQueryResponse();
            case ConfigBatchListenRequest r -> new ConfigChangeBatchListenResponse();
            case ConfigPublishRequest r -> new ConfigPublishResponse();
            case ConfigRemoveRequest r -> new ConfigRemoveResponse();
            default -> ErrorResponse.build(NacosException.NO_RIGHT, "");
        };
    }

    private String authProblem(String token) {
        if (username == null) return null;
        if (token == null || token.isBlank()) return "user not found!";
        return tokens.contains(token) ? null : "token invalid!";
    }

    /** What Nacos's role check says for a reader outside its namespaces (null: allowed; admins may do anything). */
    private String permissionProblem(String token, String namespace) {
        if (username == null || token == null) return null;
        Set<String> readable = readerNamespaces.get(tokenUsers.getOrDefault(token, ""));
        if (readable == null) return null;
        return namespace != null && readable.contains(namespace) ? null : "authorization failed!";
    }

    private static String namespaceOf(Request request) {
        String ns = switch (request) {
            case AbstractNamingRequest r -> r.getNamespace();
            case NamingFuzzyWatchRequest r -> r.getNamespace();
            case ConfigQueryRequest r -> r.getTenant();
            default -> null;
        };
        return ns == null || ns.isBlank() ? PUBLIC : ns;
    }

    private static SvcId id(AbstractNamingRequest r) {
        String ns = r.getNamespace() == null || r.getNamespace().isBlank() ? PUBLIC : r.getNamespace();
        String group =
                r.getGroupName() == null || r.getGroupName().isBlank() ? Constants.DEFAULT_GROUP : r.getGroupName();
        return new SvcId(ns, group, r.getServiceName());
    }

    private Svc service(SvcId id, boolean ephemeral) throws NacosException {
        Svc svc = services.get(id);
        if (svc == null) {
            svc = new Svc(id, ephemeral);
            services.put(id, svc);
            serviceCreatedOrRemoved(id, Constants.ServiceChangedType.ADD_SERVICE);
        } else if (svc.ephemeral != ephemeral) {
            throw new NacosException(
                    NacosException.INVALID_PARAM,
                    String.format(
                            "Current service %s is %s service, can't register %s instance.",
                            NamingUtils.getGroupedName(id.name(), id.group()),
                            svc.ephemeral ? "ephemeral" : "persistent",
                            ephemeral ? "ephemeral" : "persistent"));
        }
        return svc;
    }

    private Response instance(Conn conn, InstanceRequest r) throws NacosException {
        SvcId id = id(r);
        if (NamingRemoteConstants.REGISTER_INSTANCE.equals(r.getType())) {
            service(id, true);
            conn.published.put(id, List.of(published(id, r.getInstance(), true)));
        } else if (NamingRemoteConstants.DE_REGISTER_INSTANCE.equals(r.getType())) {
            conn.published.remove(id);
        } else {
            throw new NacosException(NacosException.INVALID_PARAM, "Unsupported request type " + r.getType());
        }
        changed(id);
        return new InstanceResponse(r.getType());
    }

    private Response batch(Conn conn, BatchInstanceRequest r) throws NacosException {
        SvcId id = id(r);
        if (!NamingRemoteConstants.BATCH_REGISTER_INSTANCE.equals(r.getType())) {
            throw new NacosException(NacosException.INVALID_PARAM, "Unsupported request type " + r.getType());
        }
        service(id, true);
        List<Instance> list = new ArrayList<>();
        for (Instance i : r.getInstances()) list.add(published(id, i, true));
        conn.published.put(id, List.copyOf(list));
        changed(id);
        return new BatchInstanceResponse(r.getType());
    }

    private Response persistent(PersistentInstanceRequest r) throws NacosException {
        SvcId id = id(r);
        Instance i = r.getInstance();
        String key = i.getIp() + ":" + i.getPort() + ":" + clusterOf(i);
        if (NamingRemoteConstants.REGISTER_INSTANCE.equals(r.getType())) {
            service(id, false).persistent.put(key, published(id, i, false));
        } else if (NamingRemoteConstants.DE_REGISTER_INSTANCE.equals(r.getType())) {
            Svc svc = services.get(id);
            if (svc != null) svc.persistent.remove(key);
        } else {
            throw new NacosException(NacosException.INVALID_PARAM, "Unsupported request type " + r.getType());
        }
        changed(id);
        return new InstanceResponse(r.getType());
    }

    private Response subscribe(Conn conn, SubscribeServiceRequest r) {
        SvcId id = id(r);
        ServiceInfo info = serviceInfo(id, r.getClusters(), false);
        if (r.isSubscribe()) {
            conn.subscribed.add(id);
            schedulePush(id, conn.id);
        } else {
            conn.subscribed.remove(id);
        }
        return new SubscribeServiceResponse(200, "success", info);
    }

    private Response serviceList(ServiceListRequest r) {
        String ns = r.getNamespace() == null || r.getNamespace().isBlank() ? PUBLIC : r.getNamespace();
        String group =
                r.getGroupName() == null || r.getGroupName().isBlank() ? Constants.DEFAULT_GROUP : r.getGroupName();
        List<String> names = new ArrayList<>();
        for (SvcId id : services.keySet()) {
            if (id.namespace().equals(ns) && id.group().equals(group)) names.add(id.name());
        }
        int start = Math.max(0, (r.getPageNo() - 1) * r.getPageSize());
        List<String> page = start >= names.size()
                ? List.of()
                : names.subList(start, Math.min(names.size(), start + r.getPageSize()));
        return ServiceListResponse.buildSuccessResponse(names.size(), new ArrayList<>(page));
    }

    /** The stored form of a registered instance, as the server gives it back (InstanceUtil.parseToApiInstance). */
    private static Instance published(SvcId id, Instance in, boolean ephemeral) {
        Instance out = new Instance();
        out.setIp(in.getIp());
        out.setPort(in.getPort());
        out.setWeight(in.getWeight());
        out.setHealthy(in.isHealthy());
        out.setEnabled(in.isEnabled());
        out.setEphemeral(ephemeral);
        out.setClusterName(clusterOf(in));
        out.setServiceName(NamingUtils.getGroupedName(id.name(), id.group()));
        out.setMetadata(in.getMetadata() == null ? new HashMap<>() : new HashMap<>(in.getMetadata()));
        String instanceId = in.getInstanceId() == null || in.getInstanceId().isBlank()
                ? in.getIp() + "#" + in.getPort() + "#" + clusterOf(in) + "#" + out.getServiceName()
                : in.getInstanceId();
        out.setInstanceId(instanceId);
        return out;
    }

    private static String clusterOf(Instance i) {
        return i.getClusterName() == null || i.getClusterName().isBlank()
                ? Constants.DEFAULT_CLUSTER_NAME
                : i.getClusterName();
    }

    // ------------------------------------------------------------------ data and pushes (under lock)

    private List<Instance> selectInstances(SvcId id, String clusters, boolean healthyOnly) {
        Set<String> clusterSet =
                clusters == null || clusters.isBlank() ? Set.of() : new HashSet<>(Arrays.asList(clusters.split(",")));
        List<Instance> all = new ArrayList<>();
        for (Conn c : connections.values()) all.addAll(c.published.getOrDefault(id, List.of()));
        Svc svc = services.get(id);
        if (svc != null) all.addAll(svc.persistent.values());
        List<Instance> out = new ArrayList<>();
        for (Instance i : all) {
            if (!clusterSet.isEmpty() && !clusterSet.contains(i.getClusterName())) continue;
            if (!i.isEnabled()) continue;
            if (healthyOnly && !i.isHealthy()) continue;
            out.add(i);
        }
        return out;
    }

    private ServiceInfo serviceInfo(SvcId id, String clusters, boolean healthyOnly) {
        ServiceInfo info = new ServiceInfo();
        info.setName(id.name());
        info.setGroupName(id.group());
        info.setClusters(clusters == null ? "" : clusters);
        info.setCacheMillis(10_000L);
        info.setHosts(selectInstances(id, clusters, healthyOnly));
        info.setLastRefTime(System.currentTimeMillis());
        info.setReachProtectionThreshold(false);
        return info;
    }

    private void changed(SvcId id) {
        Svc svc = services.get(id);
        if (svc != null) {
            boolean empty = selectAll(id).isEmpty();
            if (!empty) svc.emptySinceNanos = Long.MAX_VALUE;
            else if (svc.emptySinceNanos == Long.MAX_VALUE) svc.emptySinceNanos = System.nanoTime();
        }
        schedulePush(id, null);
    }

    private List<Instance> selectAll(SvcId id) {
        List<Instance> all = new ArrayList<>();
        for (Conn c : connections.values()) all.addAll(c.published.getOrDefault(id, List.of()));
        Svc svc = services.get(id);
        if (svc != null) all.addAll(svc.persistent.values());
        return all;
    }

    /** Schedules a push of a service to its subscribers (or to one of them), merging changes within the delay. */
    private void schedulePush(SvcId id, String onlyConn) {
        ScheduledExecutorService s = scheduler;
        if (s == null) return;
        Set<String> targets = pendingPushes.get(id);
        boolean alreadyPending = targets != null;
        if (targets == null) {
            targets = new HashSet<>();
            pendingPushes.put(id, targets);
        }
        targets.add(onlyConn == null ? "*" : onlyConn);
        if (alreadyPending) return;
        s.schedule(() -> push(id), pushDelay.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void push(SvcId id) {
        List<Map.Entry<Conn, ServerRequest>> out = new ArrayList<>();
        synchronized (lock) {
            Set<String> targets = pendingPushes.remove(id);
            if (targets == null) return;
            if (pushesWithheld.contains(id.name())) {
                pushesDeferred.add(id);
                return;
            }
            boolean all = targets.contains("*");
            for (Conn c : connections.values()) {
                if (!c.subscribed.contains(id) || (!all && !targets.contains(c.id))) continue;
                out.add(Map.entry(c, NotifySubscriberRequest.buildNotifySubscriberRequest(serviceInfo(id, "", false))));
            }
        }
        out.forEach(e -> send(e.getKey(), e.getValue()));
    }

    private void send(Conn conn, ServerRequest request) {
        request.setRequestId(Long.toString(requestIds.incrementAndGet()));
        Payload p = GrpcUtils.convert(request);
        synchronized (conn) {
            try {
                conn.stream.onNext(p);
                pushesSent.incrementAndGet();
            } catch (RuntimeException e) {
                // the connection is going away; its transport filter cleans up
            }
        }
    }

    private void disconnected(String connId) {
        synchronized (lock) {
            Conn conn = connections.remove(connId);
            if (conn == null) return;
            // a server going down pushes nothing: its clients simply lose it (the order in which gRPC tears the
            // streams down must not look like instances deregistering to the clients still connected)
            if (stopping) return;
            for (SvcId id : conn.published.keySet()) changed(id);
        }
    }

    private void cleanEmptyServices() {
        long now = System.nanoTime();
        synchronized (lock) {
            List<SvcId> expired = new ArrayList<>();
            for (Svc svc : services.values()) {
                if (svc.emptySinceNanos != Long.MAX_VALUE
                        && now - svc.emptySinceNanos >= emptyServiceExpiry.toNanos()
                        && selectAll(svc.id).isEmpty()) {
                    expired.add(svc.id);
                }
            }
            for (SvcId id : expired) {
                services.remove(id);
                serviceCreatedOrRemoved(id, Constants.ServiceChangedType.DELETE_SERVICE);
            }
        }
    }

    // ------------------------------------------------------------------ fuzzy watch (3.1.1)

    private Response fuzzyWatch(Conn conn, NamingFuzzyWatchRequest r) throws NacosException {
        String pattern = r.getGroupKeyPattern();
        if (Constants.WATCH_TYPE_CANCEL_WATCH.equals(r.getWatchType())) {
            conn.fuzzyPatterns.remove(pattern);
            return NamingFuzzyWatchResponse.buildSuccessResponse();
        }
        if (!Constants.WATCH_TYPE_WATCH.equals(r.getWatchType())) {
            throw new NacosException(NacosException.INVALID_PARAM, "Unsupported request type " + r.getWatchType());
        }
        Set<String> matched = new TreeSet<>();
        for (SvcId id : services.keySet()) {
            if (FuzzyGroupKeyPattern.matchPattern(pattern, id.name(), id.group(), id.namespace())) {
                matched.add(id.serviceKey());
            }
        }
        conn.fuzzyPatterns.put(pattern, matched);
        Set<String> received = r.getReceivedGroupKeys() == null ? Set.of() : r.getReceivedGroupKeys();
        Set<NamingFuzzyWatchSyncRequest.Context> contexts = new LinkedHashSet<>();
        for (String key : matched) {
            if (!received.contains(key)) {
                contexts.add(NamingFuzzyWatchSyncRequest.Context.build(key, Constants.ServiceChangedType.ADD_SERVICE));
            }
        }
        for (String key : received) {
            if (!matched.contains(key)) {
                contexts.add(
                        NamingFuzzyWatchSyncRequest.Context.build(key, Constants.ServiceChangedType.DELETE_SERVICE));
            }
        }
        boolean init = r.isInitializing();
        ScheduledExecutorService s = scheduler;
        if (s != null) {
            s.schedule(
                    () -> {
                        if (!contexts.isEmpty()) {
                            NamingFuzzyWatchSyncRequest sync = NamingFuzzyWatchSyncRequest.buildSyncNotifyRequest(
                                    pattern,
                                    init ? Constants.FUZZY_WATCH_INIT_NOTIFY : Constants.FUZZY_WATCH_DIFF_SYNC_NOTIFY,
                                    contexts,
                                    1,
                                    1);
                            send(conn, sync);
                        }
                        if (init) {
                            send(
                                    conn,
                                    NamingFuzzyWatchSyncRequest.buildSyncNotifyRequest(
                                            pattern, Constants.FINISH_FUZZY_WATCH_INIT_NOTIFY, Set.of(), 0, 0));
                        }
                    },
                    0,
                    TimeUnit.MILLISECONDS);
        }
        return NamingFuzzyWatchResponse.buildSuccessResponse();
    }

    private void serviceCreatedOrRemoved(SvcId id, String changedType) {
        if (!version.isV3()) return;
        ScheduledExecutorService s = scheduler;
        if (s == null) return;
        for (Conn conn : connections.values()) {
            for (Map.Entry<String, Set<String>> p : conn.fuzzyPatterns.entrySet()) {
                if (!FuzzyGroupKeyPattern.matchPattern(p.getKey(), id.name(), id.group(), id.namespace())) continue;
                boolean known = p.getValue().contains(id.serviceKey());
                boolean add = Constants.ServiceChangedType.ADD_SERVICE.equals(changedType);
                if (add == known) continue;
                if (add) p.getValue().add(id.serviceKey());
                else p.getValue().remove(id.serviceKey());
                NamingFuzzyWatchChangeNotifyRequest notify =
                        new NamingFuzzyWatchChangeNotifyRequest(id.serviceKey(), changedType);
                notify.setSyncType(Constants.FUZZY_WATCH_RESOURCE_CHANGED);
                s.schedule(() -> send(conn, notify), pushDelay.toMillis(), TimeUnit.MILLISECONDS);
                break;
            }
        }
    }

    // ------------------------------------------------------------------ gRPC: bi-stream

    private final class BiStreamService extends BiRequestStreamGrpc.BiRequestStreamImplBase {
        @Override
        public StreamObserver<Payload> requestBiStream(StreamObserver<Payload> out) {
            String connId = CTX_CONN_ID.get();
            return new StreamObserver<>() {
                @Override
                public void onNext(Payload payload) {
                    Object parsed;
                    try {
                        parsed = GrpcUtils.parse(payload);
                    } catch (RuntimeException e) {
                        return;
                    }
                    if (parsed instanceof ConnectionSetupRequest setup) {
                        Conn conn = new Conn(connId, out);
                        synchronized (lock) {
                            connections.put(connId, conn);
                        }
                        if (setup.getAbilityTable() != null) send(conn, new SetupAckRequest(abilities()));
                    }
                    // a Response here acknowledges one of our pushes
                }

                @Override
                public void onError(Throwable t) {
                    complete();
                }

                @Override
                public void onCompleted() {
                    complete();
                }

                private void complete() {
                    try {
                        out.onCompleted();
                    } catch (RuntimeException e) {
                        // already closed
                    }
                }
            };
        }
    }

    private Map<String, Boolean> abilities() {
        Map<AbilityKey, Boolean> a = new HashMap<>();
        a.put(AbilityKey.SERVER_PERSISTENT_INSTANCE_BY_GRPC, true);
        if (version.isV3()) {
            a.put(AbilityKey.SERVER_FUZZY_WATCH, true);
            a.put(AbilityKey.SERVER_DISTRIBUTED_LOCK, true);
        }
        return AbilityKey.mapStr(a);
    }

    // ------------------------------------------------------------------ HTTP

    private void http(HttpExchange ex) throws IOException {
        try (ex) {
            if (ex instanceof com.sun.net.httpserver.HttpsExchange https) sawClient("http", https.getSSLSession());
            String path = ex.getRequestURI().getPath();
            if (!path.startsWith(contextPath + "/")) {
                reply(ex, 404, "{\"status\":404,\"error\":\"Not Found\"}");
                return;
            }
            String api = path.substring(contextPath.length());
            Map<String, String> params = new HashMap<>(query(ex.getRequestURI().getRawQuery()));
            if ("POST".equals(ex.getRequestMethod())) {
                params.putAll(query(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
            }
            String login = version.isV3() ? "/v3/auth/user/login" : "/v1/auth/users/login";
            if (api.equals(login) && "POST".equals(ex.getRequestMethod())) {
                String user = params.get("username");
                boolean admin = username != null && username.equals(user) && password.equals(params.get("password"));
                boolean reader = user != null
                        && readerPasswords.containsKey(user)
                        && readerPasswords.get(user).equals(params.get("password"));
                if (username != null && !admin && !reader) {
                    if (version.isV3()) {
                        reply(ex, 500, "caused: User not found! Please check user exist or password is right!;");
                    } else {
                        reply(ex, 403, "unknown user!");
                    }
                    return;
                }
                String token = "test-token-" + UUID.randomUUID();
                tokens.add(token);
                if (user != null) tokenUsers.put(token, user);
                reply(
                        ex,
                        200,
                        JSON.writeValueAsString(Map.of(
                                "accessToken",
                                token,
                                "tokenTtl",
                                18000,
                                "globalAdmin",
                                !reader,
                                "username",
                                params.getOrDefault("username", "nacos"))));
                return;
            }
            String token =
                    params.getOrDefault("accessToken", ex.getRequestHeaders().getFirst("accessToken"));
            String denied = authProblem(token);
            if (denied == null && verifier != null && !api.endsWith("/liveness")) {
                denied = verifier.problem("http", params::get, null);
            }
            boolean v3 = version.isV3();
            switch (v3 ? api : "v2:" + api) {
                case "/v3/admin/core/state/liveness" ->
                    reply(ex, 200, "{\"code\":0,\"message\":\"success\",\"data\":\"ok\"}");
                case "/v3/admin/core/namespace/list", "v2:/v1/console/namespaces" -> {
                    if (denied != null) {
                        reply(ex, 403, denied);
                        return;
                    }
                    // an admin API on Nacos 3: a reader's role does not cover it; Nacos 2's list is not secured
                    if (v3 && token != null && readerNamespaces.containsKey(tokenUsers.getOrDefault(token, ""))) {
                        reply(ex, 403, "authorization failed!");
                        return;
                    }
                    List<Map<String, Object>> data = new ArrayList<>();
                    for (String ns : namespaces()) {
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("namespace", !v3 && ns.equals(PUBLIC) ? "" : ns);
                        m.put("namespaceShowName", ns);
                        m.put("quota", 200);
                        m.put("configCount", 0);
                        m.put("type", ns.equals(PUBLIC) ? 0 : 2);
                        data.add(m);
                    }
                    Map<String, Object> body = new LinkedHashMap<>();
                    body.put("code", v3 ? 0 : 200);
                    body.put("message", v3 ? "success" : null);
                    body.put("data", data);
                    reply(ex, 200, JSON.writeValueAsString(body));
                }
                case "/v3/admin/ns/service/list", "v2:/v1/ns/catalog/services" -> {
                    if (denied == null) denied = permissionProblem(token, params.getOrDefault("namespaceId", PUBLIC));
                    if (denied != null) {
                        reply(ex, 403, denied);
                        return;
                    }
                    reply(ex, 200, JSON.writeValueAsString(catalog(params, v3)));
                }
                default -> reply(ex, 404, "{\"status\":404,\"error\":\"Not Found\",\"path\":\"" + path + "\"}");
            }
        }
    }

    private Set<String> namespaces() {
        synchronized (lock) {
            Set<String> out = new TreeSet<>();
            out.add(PUBLIC);
            out.addAll(extraNamespaces);
            for (SvcId id : services.keySet()) out.add(id.namespace());
            return out;
        }
    }

    private Object catalog(Map<String, String> params, boolean v3) {
        String ns = params.getOrDefault("namespaceId", PUBLIC);
        if (ns.isBlank()) ns = PUBLIC;
        String groupParam = params.getOrDefault("groupNameParam", "");
        String serviceParam = params.getOrDefault("serviceNameParam", "");
        int pageNo = Integer.parseInt(params.getOrDefault("pageNo", "1"));
        int pageSize = Integer.parseInt(params.getOrDefault("pageSize", "10"));
        List<Map<String, Object>> views = new ArrayList<>();
        synchronized (lock) {
            for (SvcId id : services.keySet()) {
                if (!id.namespace().equals(ns)) continue;
                if (!groupParam.isEmpty() && !id.group().contains(groupParam)) continue;
                if (!serviceParam.isEmpty() && !id.name().contains(serviceParam)) continue;
                List<Instance> all = selectAll(id);
                Map<String, Object> view = new LinkedHashMap<>();
                view.put("name", id.name());
                view.put("groupName", id.group());
                view.put(
                        "clusterCount",
                        all.stream().map(Instance::getClusterName).distinct().count());
                view.put("ipCount", all.size());
                view.put(
                        "healthyInstanceCount",
                        all.stream().filter(Instance::isHealthy).count());
                view.put("triggerFlag", "false");
                views.add(view);
            }
        }
        int start = Math.max(0, (pageNo - 1) * pageSize);
        List<Map<String, Object>> page =
                start >= views.size() ? List.of() : views.subList(start, Math.min(views.size(), start + pageSize));
        if (!v3) return Map.of("count", views.size(), "serviceList", page);
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("totalCount", views.size());
        data.put("pageNumber", pageNo);
        data.put("pagesAvailable", (views.size() + pageSize - 1) / pageSize);
        data.put("pageItems", page);
        return Map.of("code", 0, "message", "success", "data", data);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) return out;
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(k, v);
        }
        return out;
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", body.startsWith("{") ? "application/json" : "text/plain");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
    }

    /** For diagnostics in failing tests. */
    @Override
    public String toString() {
        synchronized (lock) {
            Collection<SvcId> ids = services.keySet();
            return "NacosTestServer{" + version.text + " " + address() + ", connections=" + connections.size()
                    + ", services=" + ids + "}";
        }
    }
}
