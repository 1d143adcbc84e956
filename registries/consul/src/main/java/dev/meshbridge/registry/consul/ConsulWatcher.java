package dev.meshbridge.registry.consul;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.watch.Backoff;
import dev.meshbridge.core.watch.ShardPublisher;
import dev.meshbridge.core.watch.WatcherKit;
import java.math.BigInteger;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.ConsulException;
import org.kiwiproject.consul.model.ConsulResponse;
import org.kiwiproject.consul.model.health.ServiceHealth;
import org.kiwiproject.consul.option.ConsistencyMode;
import org.kiwiproject.consul.option.ImmutableQueryOptions;
import org.kiwiproject.consul.option.QueryOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one Consul registry entry by blocking queries and sends the bridge's events.
 *
 * <p>How it works:
 *
 * <ol>
 *   <li>per datacenter, one blocking query on {@code /v1/catalog/services} learns the service list the moment it
 *       changes; per accepted service, one blocking query on {@code /v1/health/service/<name>} (Connect proxies and
 *       gateways filtered out by {@code Service.Kind == ""}) learns its instances and checks;
 *   <li>every query runs on its own virtual thread and only hands results to the watcher's owner thread (the kit's
 *       {@link dev.meshbridge.core.watch.SerialExecutor}), which owns all state and sends every change through the
 *       kit's {@link ShardPublisher};
 *   <li>each upsert carries the full, mapped instance list of one service ({@link ConsulServiceMapper}); a service
 *       that loses its last instance stays with no endpoints while the catalog still lists it, one that leaves the
 *       list is removed; {@link RegistrySynced} follows the first full read of every datacenter and each recovery;
 *   <li>after an outage, or when an index goes back (Consul restarted with another state), the kit's warm-up holds
 *       removals while agents register their services again (anti-entropy); its end restarts every query from index
 *       0, a full read;
 *   <li>a failed query changes nothing in the catalog: the registry reports {@link RegistryStatus#disconnected}, the
 *       query is retried with jittered backoff on the kit's ticker and starts afresh (index 0) so recovery shows at
 *       once; a 403 is
 *       logged as a refused ACL token naming the registry and where the token comes from, and the token is read
 *       again before the next attempt.
 * </ol>
 */
public final class ConsulWatcher implements RegistryWatcher {

    private static final Logger log = LoggerFactory.getLogger(ConsulWatcher.class);

    /** Excludes Connect sidecar proxies and gateways, whose {@code Kind} is set; typical services have none. */
    static final String TYPICAL_SERVICES_FILTER = "Service.Kind == \"\"";

    private static final String SERVICE_QUERY = "service ";
    private static final Duration INITIAL_BACKOFF = Duration.ofMillis(200);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(10);
    /** A query that returns unchanged faster than this is treated as a misbehaving server and slowed down. */
    private static final Duration SPIN_GUARD = Duration.ofMillis(20);

    /**
     * The warm-up after a reconnect: a Consul server that lost its catalog gets the services back from the agents'
     * anti-entropy sync, once a minute in a cluster under 128 nodes, plus a random stagger; 90 s covers it.
     */
    static final Duration DEFAULT_WARM_UP = Duration.ofSeconds(90);

    private final RegistryConfig config;
    private final ConsulOptions options;
    private final RegistryStatus status;
    private final ConsulServiceMapper mapper;
    private final ConsulClients.CachedToken token;
    private final WatcherKit kit;
    private final ShardPublisher publisher;
    private final ExecutorService queries;
    private volatile Consul client;

    // ---- owned by the state thread
    private final Map<String, Datacenter> datacenters = new LinkedHashMap<>();
    private final Map<String, String> failing = new LinkedHashMap<>();
    private final Backoff bootstrapBackoff = new Backoff(INITIAL_BACKOFF, MAX_BACKOFF);
    private boolean firstSyncDone;
    private boolean resyncPending;
    private boolean authErrorLogged;

    /** One watched datacenter (the state thread's, but for {@code generation}, read by its query thread). */
    private static final class Datacenter {
        final String name;
        final Map<String, ServiceWatch> services = new LinkedHashMap<>();
        final Backoff backoff = new Backoff(INITIAL_BACKOFF, MAX_BACKOFF);
        boolean listed;
        /** The catalog query of an older generation stops (a full read started a new one). */
        volatile int generation;

        Datacenter(String name) {
            this.name = name;
        }
    }

    /** One watched service; {@code stopped} is read by its query thread, the rest belongs to the state thread. */
    private static final class ServiceWatch {
        final ServiceKey key;
        final String host;
        final Backoff backoff = new Backoff(INITIAL_BACKOFF, MAX_BACKOFF);
        volatile boolean stopped;
        volatile Future<?> query;
        /** The query of an older generation stops and its answers are dropped (a full read started a new one). */
        volatile int generation;

        boolean reported;

        ServiceWatch(ServiceKey key, String host) {
            this.key = key;
            this.host = host;
        }
    }

    public ConsulWatcher(WatcherContext context) {
        this.config = context.config();
        this.options = config.options(ConsulOptions.class);
        this.status = context.status();
        this.mapper = new ConsulServiceMapper(config, options, status);
        this.token = options.token().map(ConsulClients.CachedToken::new).orElse(null);
        this.kit = new WatcherKit(context, "meshbridge-consul-" + config.name(), DEFAULT_WARM_UP);
        this.publisher = kit.publisher();
        publisher.onFullRead(this::fullRead);
        this.queries = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("consul-" + config.name() + "-", 0).factory());
    }

    @Override
    public void start() {
        kit.start();
        log.info(
                "registry={} type=consul starting: addresses={} datacenters={} token={} tls={}",
                config.name(),
                config.addresses(),
                options.datacenters().isEmpty() ? "<agent's>" : options.datacenters(),
                token == null ? "<none>" : token.describe(),
                options.tls().isPresent());
        submit(this::bootstrap);
    }

    @Override
    public void close() {
        if (!kit.beginClose()) return;
        queries.shutdownNow();
        kit.close();
        Consul c = client;
        if (c != null) c.destroy();
        log.info("registry={} type=consul stopped", config.name());
    }

    private boolean open() {
        return kit.open();
    }

    // ------------------------------------------------------------------ query threads

    /** Builds the client and finds the datacenters; a failure retries after a backoff of ticker time. */
    private void bootstrap() {
        if (!open()) return;
        try {
            Consul c = client;
            if (c == null) {
                c = ConsulClients.build(config.addresses(), options, token);
                client = c;
                if (!open()) {
                    c.destroy();
                    return;
                }
            }
            List<String> names = options.datacenters().isEmpty() ? List.of(localDatacenter(c)) : options.datacenters();
            post(() -> {
                bootstrapBackoff.reset();
                watchDatacenters(names);
            });
        } catch (Exception e) {
            if (!open()) return;
            String reason = describe(e, null);
            post(() -> {
                failed("bootstrap", reason, e);
                retryLater(bootstrapBackoff.next(), this::bootstrap);
            });
        }
    }

    /** Starts the service's query again after {@code delay} of ticker time, unless it was stopped meanwhile. */
    private void restartLater(ServiceWatch watch, int generation, Duration delay, BigInteger from) {
        kit.loop().schedule(delay, () -> {
            if (!open() || watch.stopped || watch.generation != generation) return;
            try {
                watch.query = queries.submit(() -> watchService(watch, generation, from));
            } catch (RejectedExecutionException e) {
                // closing
            }
        });
    }

    /** Starts {@code query} on a query thread after {@code delay} of ticker time. */
    private void retryLater(Duration delay, Runnable query) {
        kit.ticker().schedule(delay, () -> submit(query));
    }

    /** The agent's own datacenter; without {@code agent:read}, the nearest one Consul lists. */
    private String localDatacenter(Consul c) {
        try {
            return c.agentClient().getAgent().getConfig().getDatacenter();
        } catch (ConsulException e) {
            if (e.getCode() != 403) throw e;
            List<String> known = c.catalogClient().getDatacenters();
            if (known.isEmpty()) throw new ConsulException("Consul lists no datacenter");
            log.info(
                    "registry={} type=consul the token may not read the agent; using the nearest datacenter {}",
                    config.name(),
                    known.get(0));
            return known.get(0);
        }
    }

    /**
     * The catalog query of one datacenter, one blocking query after the other on its query thread; after a failure the
     * thread ends and the query starts afresh (index 0) after a backoff of ticker time.
     */
    private void watchCatalog(Datacenter d, int generation, BigInteger from) {
        String dc = d.name;
        String id = "catalog " + dc;
        Backoff backoff = d.backoff;
        BigInteger index = from;
        while (open() && d.generation == generation) {
            long started = kit.ticker().nanoTime();
            try {
                ConsulResponse<Map<String, List<String>>> r =
                        client.catalogClient().getServices(query(dc, index, false));
                BigInteger next = nextIndex(index, r.getIndex());
                Map<String, List<String>> services = r.getResponse() == null ? Map.of() : r.getResponse();
                boolean reset = wentBack(index, r.getIndex());
                post(() -> {
                    if (d.generation != generation) return;
                    backoff.reset();
                    if (reset) serverReset(id);
                    catalogRead(dc, services, id);
                });
                if (spinning(index, next, started)) {
                    BigInteger resume = next;
                    retryLater(INITIAL_BACKOFF, () -> watchCatalog(d, generation, resume));
                    return;
                }
                index = next;
            } catch (Exception e) { // OkHttp may throw InterruptedException undeclared when closing
                if (!open() || d.generation != generation) return;
                String reason = describe(e, dc);
                post(() -> {
                    if (d.generation != generation) return;
                    failed(id, reason, e);
                    retryLater(backoff.next(), () -> watchCatalog(d, generation, BigInteger.ZERO));
                });
                return;
            }
        }
    }

    /** The health query of one service, as {@link #watchCatalog} for the catalog. */
    private void watchService(ServiceWatch watch, int generation, BigInteger from) {
        String id = queryId(watch);
        BigInteger index = from;
        while (open() && !watch.stopped && watch.generation == generation) {
            long started = kit.ticker().nanoTime();
            try {
                ConsulResponse<List<ServiceHealth>> r = client.healthClient()
                        .getAllServiceInstances(watch.key.name(), query(watch.key.namespace(), index, true));
                BigInteger next = nextIndex(index, r.getIndex());
                List<ServiceHealth> entries = r.getResponse() == null ? List.of() : r.getResponse();
                ServiceUpsert upsert = mapper.map(watch.key, watch.host, entries);
                boolean reset = wentBack(index, r.getIndex());
                post(() -> {
                    if (watch.generation != generation) return;
                    watch.backoff.reset();
                    if (reset) serverReset(id);
                    serviceRead(watch, upsert, id);
                });
                if (spinning(index, next, started)) {
                    BigInteger resume = next;
                    restartLater(watch, generation, INITIAL_BACKOFF, resume);
                    return;
                }
                index = next;
            } catch (Exception e) { // OkHttp may throw InterruptedException undeclared when closing
                if (!open() || watch.stopped || watch.generation != generation) return;
                String reason = describe(e, watch.key.namespace()) + " (service " + watch.key.name() + ")";
                post(() -> {
                    if (watch.generation != generation) return;
                    failed(id, reason, e);
                    restartLater(watch, generation, watch.backoff.next(), BigInteger.ZERO);
                });
                return;
            }
        }
    }

    /** The index went back: Consul's state was reset (a restart without its data, a new cluster). */
    static boolean wentBack(BigInteger previous, BigInteger received) {
        return received != null && received.signum() > 0 && previous.signum() > 0 && received.compareTo(previous) < 0;
    }

    private QueryOptions query(String dc, BigInteger index, boolean typicalOnly) {
        ImmutableQueryOptions.Builder b = ImmutableQueryOptions.builder()
                .datacenter(dc)
                .consistencyMode(
                        switch (options.consistency()) {
                            case DEFAULT -> ConsistencyMode.DEFAULT;
                            case STALE -> ConsistencyMode.STALE;
                            case CONSISTENT -> ConsistencyMode.CONSISTENT;
                        });
        if (index.signum() > 0) b.index(index).wait(waitParameter(options.blockingWait()));
        if (typicalOnly) b.filter(TYPICAL_SERVICES_FILTER);
        return b.build();
    }

    /** Consul's {@code wait} in whole seconds (or minutes), the forms the client's timeout handling reads. */
    static String waitParameter(Duration wait) {
        long seconds = (wait.toMillis() + 999) / 1000;
        return seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
    }

    /**
     * The index for the next query, by Consul's rules for blocking clients: an index that went backwards (Consul's
     * state was reset) restarts from 0, and an index below 1 is taken as 1.
     */
    static BigInteger nextIndex(BigInteger previous, BigInteger received) {
        if (received == null || received.signum() <= 0) return BigInteger.ONE;
        if (received.compareTo(previous) < 0) return BigInteger.ZERO;
        return received;
    }

    /** A query that came back unchanged faster than {@link #SPIN_GUARD}: a misbehaving server, slowed down. */
    private boolean spinning(BigInteger previous, BigInteger next, long startedNanos) {
        return previous.signum() > 0
                && previous.equals(next)
                && kit.ticker().nanoTime() - startedNanos < SPIN_GUARD.toNanos();
    }

    private void submit(Runnable task) {
        try {
            queries.execute(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /** Hands work to the owner thread; dropped once the watcher is closing. */
    private void post(Runnable task) {
        kit.loop().execute(() -> {
            if (open()) task.run();
        });
    }

    // ------------------------------------------------------------------ state thread

    private void watchDatacenters(List<String> names) {
        for (String name : names) {
            if (datacenters.containsKey(name)) continue;
            Datacenter d = new Datacenter(name);
            datacenters.put(name, d);
            submit(() -> watchCatalog(d, 0, BigInteger.ZERO));
        }
        recovered("bootstrap");
    }

    /** Consul's state was reset under a running query: hold removals while agents register again. */
    private void serverReset(String id) {
        if (firstSyncDone) kit.reconnected("Consul's index went back (" + id + "): its state was reset or restarted");
    }

    /**
     * The end of a warm-up: every query starts again from index 0 (a fresh read of the catalog and of each service),
     * and {@link RegistrySynced} follows once all have answered.
     */
    private void fullRead() {
        resyncPending = true;
        for (Datacenter d : datacenters.values()) {
            d.listed = false;
            int gen = ++d.generation;
            submit(() -> watchCatalog(d, gen, BigInteger.ZERO));
            for (ServiceWatch w : d.services.values()) {
                w.reported = false;
                int wgen = ++w.generation;
                Future<?> q = w.query;
                if (q != null) q.cancel(true);
                try {
                    w.query = queries.submit(() -> watchService(w, wgen, BigInteger.ZERO));
                } catch (RejectedExecutionException e) {
                    return;
                }
            }
        }
    }

    private void catalogRead(String dc, Map<String, List<String>> services, String id) {
        Datacenter d = datacenters.get(dc);
        if (d == null) return;
        recovered(id);
        Set<String> wanted = new TreeSet<>();
        for (Map.Entry<String, List<String>> e : services.entrySet()) {
            if (mapper.filter().acceptsService(e.getKey(), e.getValue())) wanted.add(e.getKey());
        }
        for (Iterator<ServiceWatch> it = d.services.values().iterator(); it.hasNext(); ) {
            ServiceWatch w = it.next();
            if (!wanted.contains(w.key.name())) {
                it.remove();
                stop(w);
            }
        }
        for (String name : wanted) {
            if (d.services.containsKey(name)) continue;
            String host;
            try {
                host = mapper.host(dc, name);
            } catch (IllegalArgumentException e) {
                status.skipped(dc + "/" + name, e.getMessage());
                continue;
            }
            ServiceWatch w = new ServiceWatch(mapper.key(dc, name), host);
            d.services.put(name, w);
            try {
                w.query = queries.submit(() -> watchService(w, 0, BigInteger.ZERO));
            } catch (RejectedExecutionException e) {
                return;
            }
        }
        d.listed = true;
        maybeSynced();
    }

    private void stop(ServiceWatch w) {
        w.stopped = true;
        Future<?> q = w.query;
        if (q != null) q.cancel(true);
        publisher.remove(w.key);
        // a service that left the catalog while its query was failing (a restart that lost it) no longer holds the
        // registry down: its query will never succeed again
        String id = queryId(w);
        if (failing.containsKey(id)) recovered(id);
    }

    private static String queryId(ServiceWatch w) {
        return SERVICE_QUERY + w.key.namespace() + "/" + w.key.name();
    }

    private void serviceRead(ServiceWatch w, ServiceUpsert upsert, String id) {
        if (w.stopped) return;
        recovered(id);
        w.reported = true;
        // still in the catalog's list: the service keeps its host with no endpoints
        publisher.upsert(upsert);
        maybeSynced();
    }

    /**
     * A query failed. The registry shows as disconnected (logged once per outage by the status); the failure is also
     * counted as an error once per query and episode, except a service query that merely lost the connection (every
     * service query does in an outage, and the catalog query already reports it).
     */
    private void failed(String id, String reason, Exception cause) {
        boolean first = failing.put(id, reason) == null;
        boolean http = cause instanceof ConsulException ce && ce.hasCode();
        // the registry goes down first, so the error is counted without a second log line
        status.disconnected(reason);
        if (first && (!id.startsWith(SERVICE_QUERY) || http)) status.error(id + " failed: " + reason, null);
        if (cause instanceof ConsulException ce && ce.getCode() == 403) {
            if (token != null) token.invalidate();
            if (!authErrorLogged) {
                authErrorLogged = true;
                log.error(
                        "registry={} type=consul at {}: {}; the token (from {}) must exist and have service:read and"
                                + " node:read",
                        config.name(),
                        config.addresses(),
                        reason,
                        token == null ? "consulToken, not set" : token.describe());
            }
        }
        log.debug("registry={} type=consul query={} failed: {}", config.name(), id, reason);
        kit.disconnected();
    }

    private void recovered(String id) {
        if (failing.remove(id) != null && failing.isEmpty()) {
            authErrorLogged = false;
            if (firstSyncDone) {
                resyncPending = true;
                kit.reconnected("reconnected to Consul");
            }
        }
        if (failing.isEmpty()) status.connected();
    }

    private void maybeSynced() {
        if (!failing.isEmpty() || datacenters.isEmpty()) return;
        if (firstSyncDone && !resyncPending) return;
        for (Datacenter d : datacenters.values()) {
            if (!d.listed) return;
            for (ServiceWatch w : d.services.values()) {
                if (!w.reported) return;
            }
        }
        publisher.synced();
        status.synced();
        firstSyncDone = true;
        resyncPending = false;
    }

    // ------------------------------------------------------------------ errors

    /** A short, credential-free explanation of a failed call ({@code dc} is the datacenter queried, if any). */
    private String describe(Exception e, String dc) {
        if (e instanceof ConsulException ce && ce.hasCode()) {
            String body = ce.getMessage();
            int cut = body == null ? -1 : body.indexOf("]: ");
            String detail =
                    cut < 0 ? String.valueOf(body) : body.substring(cut + 3).trim();
            return switch (ce.getCode()) {
                case 403 -> "Consul refused the ACL token (403 " + detail + ")";
                case 400 -> "Consul rejected the query (400 " + detail + ")";
                case 500 ->
                    detail.contains("No path to datacenter")
                            ? "datacenter " + dc + " is unknown to Consul (500 " + detail + ")"
                            : "Consul failed (500 " + detail + ")";
                default -> "Consul answered " + ce.getCode() + " " + detail;
            };
        }
        Throwable root = e;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConsulClients.TokenUnavailableException) return t.getMessage();
            root = t;
        }
        String what =
                root == e ? String.valueOf(e.getMessage()) : root.getClass().getSimpleName() + ": " + root.getMessage();
        return "cannot reach Consul at " + config.addresses() + " (" + what + ")";
    }
}
