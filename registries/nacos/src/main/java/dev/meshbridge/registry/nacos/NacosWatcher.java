package dev.meshbridge.registry.nacos;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.common.Constants;
import com.alibaba.nacos.api.config.ConfigFactory;
import com.alibaba.nacos.api.config.ConfigService;
import com.alibaba.nacos.api.config.listener.AbstractListener;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.exception.runtime.NacosRuntimeException;
import com.alibaba.nacos.api.naming.CommonParams;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.Event;
import com.alibaba.nacos.api.naming.listener.EventListener;
import com.alibaba.nacos.api.naming.listener.FuzzyWatchChangeEvent;
import com.alibaba.nacos.api.naming.listener.FuzzyWatchEventWatcher;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import com.alibaba.nacos.api.naming.pojo.ListView;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.dubbo.DubboOverrides;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.watch.Backoff;
import dev.meshbridge.core.watch.ShardPublisher;
import dev.meshbridge.core.watch.WatcherKit;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one Nacos registry (2.x or 3.x servers) through nacos-client's gRPC naming API and sends its services to the
 * catalog.
 *
 * <p>How it works:
 *
 * <ol>
 *   <li>the kit's owner thread ({@link dev.meshbridge.core.watch.SerialExecutor}) owns all state; nacos-client
 *       callbacks (instance pushes, fuzzy-watch notifications) only enqueue onto it, and blocking calls run on an I/O
 *       thread and a small subscribe pool, which post their results back; every change leaves through the kit's
 *       {@link ShardPublisher};
 *   <li>a refresh round lists the services of every watched namespace and group (gRPC {@code ServiceListRequest},
 *       paged; the HTTP service list for all groups), subscribes to each new service and unsubscribes from services
 *       that disappeared; the next round starts {@link NacosOptions#refreshInterval()} after one ends;
 *   <li>with a Nacos 3 server, a fuzzy watch makes the server push each new service at once, so a new service does
 *       not wait for the next round; a Nacos 2 server has no such push and relies on the rounds;
 *   <li>every subscription delivers the full instance list of its service on each change; each list becomes one
 *       {@link ServiceUpsert} (see {@link NacosServiceMapper}); a subscription's first list is read from the
 *       client's cache right after subscribing, and used only if no push for that service came in meanwhile;
 *   <li>a round that fails (the server is unreachable or refuses the credentials) marks the registry disconnected,
 *       sends nothing and retries with jittered backoff; the first round that succeeds after that, like the first
 *       round at start, ends with a {@link RegistrySynced}; nacos-client reconnects and re-subscribes by itself;
 *   <li>after a reconnect the publisher holds removals for the warm-up; when it is over, the next round to start also
 *       reads every subscribed service's instances from the server, and only such a round ends the warm-up (with its
 *       {@link RegistrySynced}): a round already in flight at the deadline saw only nacos-client's cache, which a
 *       restarted server's late pushes may still leave partial.
 * </ol>
 */
public final class NacosWatcher implements RegistryWatcher {

    private static final Logger log = LoggerFactory.getLogger(NacosWatcher.class);

    static final String TYPE = "nacos";
    private static final int PAGE_SIZE = 500;
    private static final int MAX_PAGES = 10_000;
    private static final int SUBSCRIBE_THREADS = 4;
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(10);
    private static final String NACOS_DEFAULT_LOGGING = "nacos.logging.default.config.enabled";
    /**
     * The warm-up after a reconnect: Nacos 2 and 3 clients find a restarted server through their connection health
     * check (every 5 s), reconnect, and register their instances again through their redo task (every 3 s); Nacos 1
     * clients heartbeat every 5 s and the server deletes an instance unheard of for 30 s. 30 s covers both.
     */
    static final Duration DEFAULT_WARM_UP = Duration.ofSeconds(30);

    /** The config group Dubbo's config center on Nacos keeps its rules in. */
    static final String DUBBO_CONFIG_GROUP = "dubbo";

    private final RegistryConfig config;
    private final NacosOptions options;
    private final String registry;
    private final RegistryStatus status;
    private final NacosServiceMapper mapper;
    private final ServiceFilter filter;
    private final NacosHttpApi http;
    /** The TLS files ({@code tls}), or null; nacos-client reads them itself for its gRPC connections. */
    private final dev.meshbridge.core.tls.ReloadingTls tlsFiles;
    /** A TLS context for the handshake probe ({@link NacosTlsProbe}), or null without {@code tls}. */
    private final javax.net.ssl.SSLContext probeTls;
    /** With nacosUsername and tls.http: logs in over HTTPS for nacos-client (see {@link NacosTokenAuthPlugin}). */
    private final NacosHttpApi tokenLogin;
    /** The id nacos-client's clients get in {@link NacosTokenAuthPlugin#SOURCE_PROPERTY}; null without tokenLogin. */
    private final String tokenSource;

    private final WatcherKit kit;
    private final ShardPublisher publisher;
    private final ExecutorService io;
    private final ExecutorService subscribePool;

    // nacos-client instances by namespace id: written by the I/O thread only, read by subscribe tasks
    private final Map<String, NamingService> clients = new ConcurrentHashMap<>();
    // I/O thread only
    private final Set<String> fuzzyWatched = new HashSet<>();
    private final Set<String> fuzzyUnsupported = new HashSet<>();
    private volatile Path cacheDir;

    // loop thread only
    private final Map<ServiceKey, Tracked> tracked = new HashMap<>();
    private final Map<RuleId, RuleWatch> ruleWatches = new HashMap<>();
    // config clients by namespace (Dubbo's config center): created on the subscribe pool, read by it
    private final Map<String, ConfigService> configServices = new ConcurrentHashMap<>();
    private final Backoff backoff;
    private boolean needSync = true;
    private boolean authFailing;
    /** The next round reads every subscribed service from the server (set by {@link #fullRead()}). */
    private boolean fullReadDue;
    /**
     * A warm-up's full read was asked for and no round that read everything has completed since: until one does, no
     * round may call {@link ShardPublisher#synced()}, since a round that was already in flight when the warm-up ended
     * saw only nacos-client's cache (which a restarted server's late pushes may still leave partial).
     */
    private boolean fullReadAsked;

    /** One watched service: its subscription and what was last sent for it. */
    private static final class Tracked {
        final ServiceKey key;
        final Subscription subscription;
        final long firstSeenNanos;
        boolean subscribed;
        boolean subscribing;
        /** The last instance list, mapped again when an override rule of the service changes. */
        List<Instance> lastInstances;
        /** The override rules this service (a Dubbo interface) follows: its own, and the consumer application's. */
        RuleId serviceRules;

        RuleId appRules;

        Tracked(ServiceKey key, Subscription subscription, long firstSeenNanos) {
            this.key = key;
            this.subscription = subscription;
            this.firstSeenNanos = firstSeenNanos;
        }
    }

    /**
     * The services found in one round, by namespace, and (for a full read, {@code readAll}) the instance lists read
     * from the server.
     */
    private record Listing(
            long startedNanos,
            boolean readAll,
            Map<String, Set<NacosHttpApi.GroupedName>> services,
            List<Read> reads) {}

    /** One service's instances read from the server; used when no push for it came in after {@code eventsBefore}. */
    private record Read(Tracked tracked, long eventsBefore, List<Instance> instances) {}

    public NacosWatcher(RegistryConfig config, WatcherContext context) {
        this.config = config;
        this.options = config.options(NacosOptions.class);
        this.registry = config.name();
        this.status = context.status();
        this.mapper = new NacosServiceMapper(config, options);
        this.filter = new ServiceFilter(options.allow(), options.deny());
        this.tlsFiles = tlsFiles(registry, options);
        this.http = new NacosHttpApi(
                config.addresses(),
                options.contextPath(),
                options.username(),
                options.password(),
                options.accessKey(),
                options.secretKey(),
                tlsFiles != null && options.tls().http() ? clientContext(registry, tlsFiles) : null,
                options.timeout(),
                java.time.Clock.systemUTC());
        this.probeTls = tlsFiles != null ? clientContext(registry, tlsFiles) : null;
        if (options.username() != null && tlsFiles != null && options.tls().http()) {
            // nacos-client would log in over plain http://: it gets a token the watcher logs in for over HTTPS
            this.tokenLogin = new NacosHttpApi(
                    config.addresses(),
                    options.contextPath(),
                    options.username(),
                    options.password(),
                    null,
                    null,
                    clientContext(registry, tlsFiles),
                    options.timeout(),
                    java.time.Clock.systemUTC());
            this.tokenSource = NacosTokenAuthPlugin.register(this::tokenForNacosClient);
        } else {
            this.tokenLogin = null;
            this.tokenSource = null;
        }
        this.kit = new WatcherKit(context, "meshbridge-nacos-" + registry + "-loop", DEFAULT_WARM_UP);
        this.publisher = kit.publisher();
        publisher.onFullRead(this::fullRead);
        Duration interval = options.refreshInterval();
        Duration longest = Duration.ofMillis(Math.max(MAX_BACKOFF.toMillis(), 2 * interval.toMillis()));
        this.backoff = new Backoff(interval.multipliedBy(2), longest);
        this.io = Executors.newSingleThreadExecutor(threads("io"));
        this.subscribePool = Executors.newFixedThreadPool(SUBSCRIBE_THREADS, threads("subscribe"));
    }

    @Override
    public void start() {
        kit.start();
        // nacos-client would otherwise install its own logback/log4j2 configuration and write log files
        if (System.getProperty(NACOS_DEFAULT_LOGGING) == null) System.setProperty(NACOS_DEFAULT_LOGGING, "false");
        ConfigSnapshots.keepOutOfHome();
        try {
            cacheDir = Files.createTempDirectory("meshbridge-nacos-" + registry + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the nacos-client cache directory", e);
        }
        log.info(
                "registry={} type={} starting: servers={} namespaces={} groups={} refresh={} tls={} auth={}",
                registry,
                TYPE,
                config.addresses(),
                options.allNamespaces() ? "*" : options.namespaceIds(),
                options.allGroups() ? "*" : options.groups(),
                options.refreshInterval(),
                tlsMode(options.tls()),
                options.username() != null
                        ? "user from " + options.username().describe()
                        : options.accessKey() != null
                                ? "access key from " + options.accessKey().describe()
                                : "none");
        post(this::refresh);
    }

    @Override
    public void close() {
        if (!kit.beginClose()) return;
        kit.loop().close();
        subscribePool.shutdownNow();
        io.shutdownNow();
        try {
            io.awaitTermination(5, TimeUnit.SECONDS);
            subscribePool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Map.Entry<String, NamingService> c : clients.entrySet()) shutDown(c.getKey(), c.getValue());
        for (ConfigService c : configServices.values()) {
            try {
                c.shutDown();
            } catch (NacosException | RuntimeException e) {
                log.debug("registry={} config client shutdown failed", registry, e);
            }
        }
        configServices.clear();
        clients.clear();
        http.close();
        NacosTokenAuthPlugin.unregister(tokenSource);
        if (tokenLogin != null) {
            synchronized (tokenLogin) {
                tokenLogin.close();
            }
        }
        if (tlsFiles != null) tlsFiles.close();
        deleteCacheDir();
        kit.close();
        log.info("registry={} type={} stopped", registry, TYPE);
    }

    // ---------------------------------------------------------------- loop thread

    private boolean closed() {
        return !kit.open();
    }

    private void refresh() {
        if (closed()) return;
        long started = kit.ticker().nanoTime();
        boolean readAll = fullReadDue;
        fullReadDue = false;
        List<Tracked> toRead = new ArrayList<>();
        if (readAll) {
            for (Tracked t : tracked.values()) {
                if (t.subscribed) toRead.add(t);
            }
        }
        try {
            io.execute(() -> {
                Listing listing;
                try {
                    listing = list(started, readAll, toRead);
                } catch (Exception e) {
                    if (e instanceof InterruptedException)
                        Thread.currentThread().interrupt();
                    Exception reported = withTlsDiagnosis(e);
                    post(() -> {
                        if (readAll) fullReadDue = true;
                        onRoundFailed(reported);
                    });
                    return;
                }
                post(() -> onListing(listing));
            });
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * The end of a warm-up: the next round to start also reads every subscribed service's instances from the server
     * (not from nacos-client's cache, which a restarted server's pushes may have left partial) and ends with {@link
     * ShardPublisher#synced()}, which ends the warm-up. A round already in flight does not: it started before this
     * was asked for and did not read the server (see {@link #onRoundDone}).
     */
    private void fullRead() {
        fullReadDue = true;
        fullReadAsked = true;
        needSync = true;
    }

    private void onListing(Listing listing) {
        if (closed()) return;
        Set<ServiceKey> listed = new LinkedHashSet<>();
        listing.services().forEach((namespace, names) -> {
            for (NacosHttpApi.GroupedName n : names) {
                if (filter.accepts(n.name())) listed.add(key(namespace, n.group(), n.name()));
            }
        });
        List<CompletableFuture<Void>> subscribes = new ArrayList<>();
        for (ServiceKey key : listed) {
            Tracked t = tracked.computeIfAbsent(
                    key, k -> new Tracked(k, new Subscription(k), kit.ticker().nanoTime()));
            if (!t.subscribed && !t.subscribing) subscribes.add(subscribe(t));
        }
        List<Tracked> gone = new ArrayList<>();
        for (Tracked t : tracked.values()) {
            if (!listed.contains(t.key) && t.firstSeenNanos < listing.startedNanos()) gone.add(t);
        }
        for (Tracked t : gone) untrack(t);
        for (Read r : listing.reads()) {
            if (tracked.get(r.tracked().key) == r.tracked()
                    && r.tracked().subscription.events.get() == r.eventsBefore()) {
                apply(r.tracked(), r.instances());
            }
        }
        CompletableFuture.allOf(subscribes.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> post(() -> onRoundDone(listing)));
    }

    private void onRoundDone(Listing listing) {
        if (closed()) return;
        // nacos-client reconnects by itself and re-subscribes; what the restarted server pushes is partial until
        // every application has registered again
        if (backoff.failures() > 0) kit.reconnected("reconnected to Nacos");
        if (backoff.failures() > 0 || status.state() != RegistryStatus.State.UP) status.connected();
        if (authFailing) log.info("registry={} type={} credentials and permissions work again", registry, TYPE);
        backoff.reset();
        authFailing = false;
        // after a warm-up's full read was asked for, only a round that read everything (and so started after the
        // ask) may sync: synced() ends the warm-up, and removals still held then leave
        if (needSync && (!fullReadAsked || listing.readAll())) {
            publisher.synced();
            needSync = false;
            fullReadAsked = false;
            log.info(
                    "registry={} type={} synced: namespaces={} services={}",
                    registry,
                    TYPE,
                    listing.services().keySet(),
                    tracked.size());
        }
        status.synced();
        schedule(jitter(options.refreshInterval()));
    }

    private void onRoundFailed(Exception e) {
        if (closed()) return;
        needSync = true;
        kit.disconnected();
        String reason = NacosErrors.describe(e, options);
        NacosErrors.Kind kind = NacosErrors.kind(e);
        if (kind != NacosErrors.Kind.UNREACHABLE) {
            if (!authFailing) log.error("registry={} type={} {}", registry, TYPE, reason);
            authFailing = true;
        }
        // one line when the registry goes down (the status logs it); errors while down are counted and reminded
        status.disconnected(reason);
        status.error(reason, e instanceof NacosException || e instanceof IOException ? null : e);
        schedule(backoff.next());
    }

    private void onServiceAdded(String namespace, String group, String name) {
        if (closed() || !filter.accepts(name)) return;
        if (!options.allGroups() && !options.groups().contains(group)) return;
        ServiceKey key = key(namespace, group, name);
        if (tracked.containsKey(key)) return;
        Tracked t = new Tracked(key, new Subscription(key), kit.ticker().nanoTime());
        tracked.put(key, t);
        log.debug("registry={} new service {} pushed by Nacos", registry, NacosServiceMapper.describe(key));
        subscribe(t);
    }

    private CompletableFuture<Void> subscribe(Tracked t) {
        t.subscribing = true;
        ServiceKey key = t.key;
        Subscription subscription = t.subscription;
        try {
            return CompletableFuture.runAsync(
                    () -> {
                        NamingService client = clients.get(key.namespace());
                        if (client == null) {
                            post(() -> onSubscribeFailed(
                                    t, new IllegalStateException("no client for namespace " + key.namespace())));
                            return;
                        }
                        long before = subscription.events.get();
                        try {
                            client.subscribe(key.name(), key.group(), subscription);
                            List<Instance> now =
                                    List.copyOf(client.getAllInstances(key.name(), key.group(), List.of(), true));
                            post(() -> onSubscribed(t, before, now));
                        } catch (NacosException | RuntimeException e) {
                            post(() -> onSubscribeFailed(t, e));
                        }
                    },
                    subscribePool);
        } catch (RejectedExecutionException e) {
            t.subscribing = false;
            return CompletableFuture.completedFuture(null);
        }
    }

    private void onSubscribed(Tracked t, long eventsBefore, List<Instance> instances) {
        t.subscribing = false;
        if (closed()) return;
        if (tracked.get(t.key) != t) {
            unsubscribe(t); // the service went away while this subscription was being made
            return;
        }
        t.subscribed = true;
        // a push that came in meanwhile carries a list at least as new as this one
        if (t.subscription.events.get() == eventsBefore) apply(t, instances);
    }

    private void onSubscribeFailed(Tracked t, Exception e) {
        t.subscribing = false;
        if (closed() || tracked.get(t.key) != t) return;
        status.error(
                "subscribe to " + NacosServiceMapper.describe(t.key) + ": "
                        + NacosErrors.describe(NacosErrors.inNamespace(t.key.namespace(), e), options),
                null);
    }

    private void onInstances(Subscription subscription, List<Instance> instances) {
        if (closed()) return;
        Tracked t = tracked.get(subscription.key);
        if (t == null || t.subscription != subscription) return;
        apply(t, instances);
    }

    private void apply(Tracked t, List<Instance> instances) {
        t.lastInstances = instances;
        if (instances.isEmpty()) {
            // the service is still listed: it keeps its host (cluster, ServiceEntry) with no endpoints
            publisher.empty(t.key);
            return;
        }
        NacosServiceMapper.Result r = mapper.map(t.key, instances, this::rules);
        if (r.ruleKey() != null) watchRules(t, r.ruleKey());
        for (NacosServiceMapper.Skip s : r.skipped()) status.skipped(s.item(), s.reason());
        r.droppedLabels().forEach(status::droppedLabels);
        ServiceUpsert u = r.upsert();
        if (u == null) publisher.empty(t.key);
        else publisher.upsert(u);
    }

    // ---------------------------------------------------------------- Dubbo override rules (config center)

    /**
     * nacos-client's config client keeps snapshots under one process-wide path read once from the system property
     * {@code JM.SNAPSHOT.PATH} (default {@code ~/nacos/config}): unless the user set it, it points into one temporary
     * directory of this process.
     */
    private static final class ConfigSnapshots {
        private static final String PROPERTY = "JM.SNAPSHOT.PATH";

        static synchronized void keepOutOfHome() {
            if (System.getProperty(PROPERTY) != null) return;
            try {
                Path dir = Files.createTempDirectory("meshbridge-nacos-config-");
                dir.toFile().deleteOnExit();
                System.setProperty(PROPERTY, dir.toString());
            } catch (IOException e) {
                log.warn("cannot create a temporary directory for nacos-client's config snapshots: {}", e.toString());
            }
        }
    }

    /** One config data id in one namespace. */
    private record RuleId(String namespace, String dataId) {}

    /** The rules of one data id and the services that follow them; nacos-client calls it on a change. */
    private final class RuleWatch extends AbstractListener {
        final RuleId id;
        final Set<ServiceKey> users = new HashSet<>();
        List<DubboOverrides.Rule> rules = List.of();
        volatile boolean removed;

        RuleWatch(RuleId id) {
            this.id = id;
        }

        @Override
        public void receiveConfigInfo(String content) {
            post(() -> onRules(this, content));
        }
    }

    /** The rule lists of a Dubbo interface in Dubbo's order: registry (none in Nacos), application, service. */
    private List<List<DubboOverrides.Rule>> rules(String namespace, String ruleKey) {
        List<DubboOverrides.Rule> app = List.of();
        if (options.dubboConsumerApplication() != null) {
            RuleWatch w = ruleWatches.get(
                    new RuleId(namespace, options.dubboConsumerApplication() + DubboOverrides.CONFIGURATORS_SUFFIX));
            if (w != null) app = w.rules;
        }
        RuleWatch w = ruleWatches.get(new RuleId(namespace, ruleKey));
        List<DubboOverrides.Rule> service = w == null ? List.of() : w.rules;
        if (app.isEmpty() && service.isEmpty()) return List.of();
        return List.of(List.of(), app, service);
    }

    /** Makes sure the service follows the rules of its data id (and the consumer application's). */
    private void watchRules(Tracked t, String ruleKey) {
        RuleId service = new RuleId(t.key.namespace(), ruleKey);
        if (!service.equals(t.serviceRules)) {
            unwatch(t.serviceRules, t.key);
            ruleWatch(service).users.add(t.key);
            t.serviceRules = service;
        }
        if (options.dubboConsumerApplication() != null && t.appRules == null) {
            RuleId app = new RuleId(
                    t.key.namespace(), options.dubboConsumerApplication() + DubboOverrides.CONFIGURATORS_SUFFIX);
            ruleWatch(app).users.add(t.key);
            t.appRules = app;
        }
    }

    private RuleWatch ruleWatch(RuleId id) {
        RuleWatch existing = ruleWatches.get(id);
        if (existing != null) return existing;
        RuleWatch w = new RuleWatch(id);
        ruleWatches.put(id, w);
        try {
            subscribePool.execute(() -> {
                try {
                    String content = configService(id.namespace())
                            .getConfigAndSignListener(
                                    id.dataId(),
                                    DUBBO_CONFIG_GROUP,
                                    options.timeout().toMillis(),
                                    w);
                    post(() -> onRules(w, content));
                } catch (NacosException | RuntimeException e) {
                    post(() -> status.error(
                            "cannot read Dubbo override rules " + id.dataId() + " in namespace " + id.namespace() + ": "
                                    + NacosErrors.describe(NacosErrors.inNamespace(id.namespace(), e), options),
                            null));
                }
            });
        } catch (RejectedExecutionException e) {
            // closing
        }
        return w;
    }

    private void unwatch(RuleId id, ServiceKey user) {
        if (id == null) return;
        RuleWatch w = ruleWatches.get(id);
        if (w == null || !w.users.remove(user) || !w.users.isEmpty()) return;
        ruleWatches.remove(id);
        w.removed = true;
        ConfigService cs = configServices.get(id.namespace());
        if (cs == null) return;
        try {
            subscribePool.execute(() -> cs.removeListener(id.dataId(), DUBBO_CONFIG_GROUP, w));
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * New content of a rule data id: the services that follow it are mapped again. Content that cannot be parsed is
     * reported and the rules known before are kept, as Dubbo's consumer does.
     */
    private void onRules(RuleWatch w, String content) {
        if (closed() || w.removed) return;
        List<DubboOverrides.Rule> rules;
        try {
            rules = content == null || content.isBlank() ? List.of() : List.copyOf(DubboOverrides.parse(content));
        } catch (IllegalArgumentException | ClassCastException e) {
            status.skipped(
                    "config " + w.id.namespace() + "/" + DUBBO_CONFIG_GROUP + "/" + w.id.dataId(),
                    "Dubbo override rule: " + e.getMessage() + "; keeping the rules before it");
            return;
        }
        for (DubboOverrides.Rule r : rules) {
            if (r.unsupported() != null) {
                status.skipped(
                        "config " + w.id.namespace() + "/" + DUBBO_CONFIG_GROUP + "/" + w.id.dataId(),
                        "not applied: " + r.unsupported());
            }
        }
        if (rules.equals(w.rules)) return;
        w.rules = rules;
        for (ServiceKey k : List.copyOf(w.users)) {
            Tracked t = tracked.get(k);
            if (t != null && t.lastInstances != null) apply(t, t.lastInstances);
        }
    }

    private ConfigService configService(String namespace) throws NacosException {
        ConfigService existing = configServices.get(namespace);
        if (existing != null) return existing;
        ConfigService created = ConfigFactory.createConfigService(clientProperties(namespace));
        ConfigService raced = configServices.putIfAbsent(namespace, created);
        if (raced != null) {
            created.shutDown();
            return raced;
        }
        if (kit.lifecycle().isClosed()) {
            configServices.remove(namespace);
            created.shutDown();
            throw new NacosException(NacosException.CLIENT_DISCONNECT, "watcher closed");
        }
        return created;
    }

    private void untrack(Tracked t) {
        tracked.remove(t.key);
        unwatch(t.serviceRules, t.key);
        unwatch(t.appRules, t.key);
        publisher.remove(t.key);
        if (!t.subscribing) unsubscribe(t); // one in flight is undone when it completes
    }

    private void unsubscribe(Tracked t) {
        NamingService client = clients.get(t.key.namespace());
        if (client == null) return;
        try {
            subscribePool.execute(() -> {
                try {
                    client.unsubscribe(t.key.name(), t.key.group(), t.subscription);
                } catch (NacosException | RuntimeException e) {
                    log.debug("registry={} unsubscribe {} failed", registry, t.key, e);
                }
            });
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void schedule(Duration delay) {
        kit.loop().schedule(delay, this::refresh);
    }

    private void post(Runnable task) {
        kit.loop().execute(task); // dropped once the watcher is closing: nothing more is sent
    }

    private ServiceKey key(String namespace, String group, String name) {
        return new ServiceKey(TYPE, registry, namespace, group, name, "");
    }

    // ---------------------------------------------------------------- I/O thread

    private Listing list(long startedNanos, boolean readAll, List<Tracked> toRead) throws Exception {
        if (options.hasCredentials()) http.login();
        List<String> namespaces = options.allNamespaces() ? http.namespaces() : options.namespaceIds();
        for (String ns : List.copyOf(clients.keySet())) {
            if (!namespaces.contains(ns)) {
                NamingService gone = clients.remove(ns);
                fuzzyWatched.remove(ns);
                shutDown(ns, gone);
            }
        }
        Map<String, Set<NacosHttpApi.GroupedName>> services = new LinkedHashMap<>();
        for (String ns : namespaces) {
            try {
                NamingService client = client(ns);
                Set<NacosHttpApi.GroupedName> names = new LinkedHashSet<>();
                if (options.allGroups()) {
                    // the gRPC protocol lists one group at a time; one cheap call still proves the connection works
                    client.getServicesOfServer(1, 1, Constants.DEFAULT_GROUP);
                    names.addAll(http.servicesOfAllGroups(ns));
                } else {
                    for (String group : options.groups()) names.addAll(listGroup(client, group));
                }
                services.put(ns, names);
                watchNewServices(ns, client);
            } catch (NacosException e) {
                throw NacosErrors.inNamespace(ns, e);
            }
        }
        List<Read> reads = new ArrayList<>();
        for (Tracked t : toRead) {
            NamingService client = clients.get(t.key.namespace());
            if (client == null) continue;
            long before = t.subscription.events.get();
            try {
                // subscribe=false: a query to the server, not nacos-client's cache
                List<Instance> now = List.copyOf(client.getAllInstances(t.key.name(), t.key.group(), List.of(), false));
                reads.add(new Read(t, before, now));
            } catch (NacosException e) {
                throw NacosErrors.inNamespace(t.key.namespace(), e);
            }
        }
        return new Listing(startedNanos, readAll, services, reads);
    }

    private static List<NacosHttpApi.GroupedName> listGroup(NamingService client, String group) throws NacosException {
        Set<NacosHttpApi.GroupedName> out = new LinkedHashSet<>();
        for (int page = 1; page <= MAX_PAGES; page++) {
            ListView<String> view = client.getServicesOfServer(page, PAGE_SIZE, group);
            List<String> data = view == null || view.getData() == null ? List.of() : view.getData();
            int before = out.size();
            for (String name : data) out.add(new NacosHttpApi.GroupedName(group, name));
            if (data.size() < PAGE_SIZE || out.size() == before) break;
        }
        return new ArrayList<>(out);
    }

    /** Registers a fuzzy watch (Nacos 3) so that the server pushes each new service of the watched groups. */
    private void watchNewServices(String namespace, NamingService client) {
        if (!options.fuzzyWatch() || fuzzyWatched.contains(namespace) || fuzzyUnsupported.contains(namespace)) {
            return;
        }
        NewServiceWatcher watcher = new NewServiceWatcher(namespace);
        try {
            if (options.allGroups()) {
                client.fuzzyWatch("*", "*", watcher);
            } else {
                for (String group : options.groups()) client.fuzzyWatch("*", group, watcher);
            }
            fuzzyWatched.add(namespace);
            log.info(
                    "registry={} namespace={} the server pushes new services (Nacos 3 fuzzy watch)",
                    registry,
                    namespace);
        } catch (NacosRuntimeException e) {
            if (e.getErrCode() == NacosException.SERVER_NOT_IMPLEMENTED) {
                fuzzyUnsupported.add(namespace);
                log.info(
                        "registry={} namespace={} the server cannot push new services (Nacos 2.x); they are found by"
                                + " the service list refresh every {}",
                        registry,
                        namespace,
                        options.refreshInterval());
            } else {
                log.debug("registry={} fuzzy watch failed: {}", registry, e.getMessage());
            }
        } catch (NacosException e) {
            log.debug("registry={} fuzzy watch failed: {}", registry, e.getMessage());
        }
    }

    private NamingService client(String namespace) throws NacosException {
        NamingService existing = clients.get(namespace);
        if (existing != null) return existing;
        NamingService created = NamingFactory.createNamingService(clientProperties(namespace));
        if (kit.lifecycle().isClosed()) {
            shutDown(namespace, created);
            throw new NacosException(NacosException.CLIENT_DISCONNECT, "watcher closed");
        }
        clients.put(namespace, created);
        return created;
    }

    /**
     * The token nacos-client's requests carry (called by {@link NacosTokenAuthPlugin} from nacos-client's threads, at
     * a client's start and every few seconds): logs in over HTTPS when the token is missing or near its expiry, or
     * when the server refused it ({@code renew}). A
     * failure keeps the last token (the watcher's own login reports a refusal on the status).
     */
    private String tokenForNacosClient(boolean renew) {
        synchronized (tokenLogin) {
            if (renew) tokenLogin.forgetToken();
            try {
                tokenLogin.login();
            } catch (IOException e) {
                log.debug("registry={} login for nacos-client failed: {}", registry, e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return tokenLogin.token();
        }
    }

    private Properties clientProperties(String namespace) {
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, String.join(",", config.addresses()));
        p.setProperty(PropertyKeyConst.NAMESPACE, namespace);
        p.setProperty(PropertyKeyConst.CONTEXT_PATH, options.contextPath().isEmpty() ? "/" : options.contextPath());
        if (tokenSource != null) {
            // no username: nacos-client's own login plugin stays idle, ours hands it the token
            p.setProperty(NacosTokenAuthPlugin.SOURCE_PROPERTY, tokenSource);
        } else if (options.username() != null) {
            p.setProperty(PropertyKeyConst.USERNAME, options.username().resolve());
            p.setProperty(PropertyKeyConst.PASSWORD, options.password().resolve());
        }
        if (options.accessKey() != null) {
            p.setProperty(PropertyKeyConst.ACCESS_KEY, options.accessKey().resolve());
            p.setProperty(PropertyKeyConst.SECRET_KEY, options.secretKey().resolve());
        }
        NacosOptions.AddressServer as = options.addressServer();
        if (as != null) {
            p.setProperty(PropertyKeyConst.ENDPOINT, as.host());
            p.setProperty(PropertyKeyConst.ENDPOINT_PORT, Integer.toString(as.port()));
            if (!as.contextPath().isEmpty()) p.setProperty(PropertyKeyConst.ENDPOINT_CONTEXT_PATH, as.contextPath());
        }
        // nothing on disk outside our own temporary directory, and no cache from an earlier run
        p.setProperty(PropertyKeyConst.NAMING_LOAD_CACHE_AT_START, "false");
        p.setProperty("JM.SNAPSHOT.PATH", cacheDir.toString());
        p.setProperty(
                CommonParams.NAMING_REQUEST_TIMEOUT,
                Long.toString(options.timeout().toMillis()));
        p.setProperty(PropertyKeyConst.NAMING_PUSH_EMPTY_PROTECTION, "false");
        p.setProperty(
                PropertyKeyConst.REDO_DELAY_TIME,
                Long.toString(Math.min(3000, options.refreshInterval().toMillis())));
        p.setProperty(PropertyKeyConst.ENABLE_CLIENT_METRICS, "false");
        grpcTls(p, options.tls());
        return p;
    }

    /**
     * A failure to connect, with the reason when it is a TLS handshake: of nacos-client's gRPC connection (nacos-client
     * itself only says "Client not connected") or of the HTTP API; on the I/O thread, once per failed round.
     */
    private Exception withTlsDiagnosis(Exception e) {
        if (probeTls == null || NacosErrors.kind(e) != NacosErrors.Kind.UNREACHABLE) return e;
        String said = NacosErrors.describe(e, options);
        if (said.contains("TLS handshake failed")) return e;
        NacosOptions.Tls tls = options.tls();
        String failure = null;
        if (tls.grpc() && notConnected(e)) {
            failure = NacosTlsProbe.firstFailure(
                    probeTls,
                    config.addresses(),
                    NacosTlsProbe.GRPC_PORT_OFFSET,
                    "nacos-client cannot connect to Nacos's gRPC port",
                    options.timeout());
        } else if (tls.http() && e instanceof IOException) {
            failure = NacosTlsProbe.firstFailure(
                    probeTls, config.addresses(), 0, "cannot call Nacos's HTTP API at", options.timeout());
        }
        return failure == null ? e : new IOException(failure, e);
    }

    /** The TLS mode for the start log line: {@code none}, {@code grpc+http}, {@code grpc,client-cert}... */
    static String tlsMode(NacosOptions.Tls tls) {
        if (tls == null) return "none";
        String channels = tls.grpc() && tls.http() ? "grpc+http" : tls.grpc() ? "grpc" : "http";
        return channels + (tls.files().hasIdentity() ? ",client-cert" : "");
    }

    private static boolean notConnected(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof NacosException ne && ne.getErrCode() == NacosException.CLIENT_DISCONNECT) return true;
        }
        return false;
    }

    /**
     * The TLS files of this registry, read again when they change (checked at most every {@code tls.reloadInterval}
     * when a connection opens); null without {@code tls}.
     */
    private static dev.meshbridge.core.tls.ReloadingTls tlsFiles(String registry, NacosOptions options) {
        NacosOptions.Tls tls = options.tls();
        if (tls == null) return null;
        try {
            return new dev.meshbridge.core.tls.ReloadingTls(
                            "registry " + registry, tls.files(), java.time.Clock.systemUTC())
                    .load()
                    .checkOnHandshake(tls.reloadInterval());
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new IllegalArgumentException(
                    "registry " + registry + ": cannot use the TLS files: " + e.getMessage(), e);
        }
    }

    /** A client TLS context over the reloading files: the watcher's HTTP calls, and the handshake probe. */
    private static javax.net.ssl.SSLContext clientContext(String registry, dev.meshbridge.core.tls.ReloadingTls files) {
        try {
            return files.clientContext();
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalArgumentException(
                    "registry " + registry + ": cannot make a TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * nacos-client's gRPC TLS ({@code RpcClientTlsConfigFactory}'s {@code nacos.remote.client.rpc.tls.*}): it builds
     * a new TLS context from these files for every connection it opens, so a rotated certificate is used from the
     * next connection on.
     */
    static void grpcTls(Properties p, NacosOptions.Tls tls) {
        if (tls == null || !tls.grpc()) return;
        dev.meshbridge.core.tls.TlsFiles f = tls.files();
        p.setProperty("nacos.remote.client.rpc.tls.enable", "true");
        p.setProperty("nacos.remote.client.rpc.tls.trustAll", "false");
        // nacos-client's resource loader reads a bare absolute path from the class path; a file: URL from disk
        p.setProperty("nacos.remote.client.rpc.tls.trustCollectionChainPath", resource(f.caFile()));
        if (f.hasIdentity()) {
            p.setProperty("nacos.remote.client.rpc.tls.mutualAuth", "true");
            p.setProperty("nacos.remote.client.rpc.tls.certChainFile", resource(f.certFile()));
            p.setProperty("nacos.remote.client.rpc.tls.certPrivateKey", resource(f.keyFile()));
            if (f.keyPassword() != null) {
                p.setProperty(
                        "nacos.remote.client.rpc.tls.certPrivateKeyPassword",
                        f.keyPassword().resolve());
            }
        }
    }

    private static String resource(Path file) {
        return file.toAbsolutePath().toUri().toString();
    }

    private void shutDown(String namespace, NamingService client) {
        if (client == null) return;
        try {
            client.shutDown();
        } catch (NacosException | RuntimeException e) {
            log.debug("registry={} namespace={} nacos-client shutdown failed", registry, namespace, e);
        }
    }

    private void deleteCacheDir() {
        Path dir = cacheDir;
        if (dir == null) return;
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    log.debug("cannot delete {}", p, e);
                }
            });
        } catch (IOException e) {
            log.debug("cannot delete {}", dir, e);
        }
    }

    // ---------------------------------------------------------------- client callbacks (enqueue only)

    /** Receives the full instance list of one service on each change (nacos-client notifier thread). */
    private final class Subscription implements EventListener {
        final ServiceKey key;
        final AtomicLong events = new AtomicLong();

        Subscription(ServiceKey key) {
            this.key = key;
        }

        @Override
        public void onEvent(Event event) {
            if (event instanceof NamingEvent e) {
                events.incrementAndGet();
                List<Instance> instances = e.getInstances() == null ? List.of() : List.copyOf(e.getInstances());
                post(() -> onInstances(this, instances));
            }
        }
    }

    /** Receives Nacos 3 fuzzy-watch notifications of services added in a watched group. */
    private final class NewServiceWatcher implements FuzzyWatchEventWatcher {
        private final String namespace;

        NewServiceWatcher(String namespace) {
            this.namespace = namespace;
        }

        @Override
        public Executor getExecutor() {
            return null;
        }

        @Override
        public void onEvent(FuzzyWatchChangeEvent event) {
            if (Constants.ServiceChangedType.ADD_SERVICE.equals(event.getChangeType())) {
                String group = event.getGroupName();
                String name = event.getServiceName();
                post(() -> onServiceAdded(namespace, group, name));
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    private static Duration jitter(Duration d) {
        long ms = d.toMillis();
        long spread = ms / 10;
        return Duration.ofMillis(ms + (spread > 0 ? ThreadLocalRandom.current().nextLong(-spread, spread + 1) : 0));
    }

    private ThreadFactory threads(String role) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "meshbridge-nacos-" + registry + "-" + role + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
