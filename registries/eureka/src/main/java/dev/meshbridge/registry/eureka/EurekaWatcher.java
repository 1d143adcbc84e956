package dev.meshbridge.registry.eureka;

import com.netflix.appinfo.InstanceInfo;
import com.netflix.discovery.shared.Applications;
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
import dev.meshbridge.registry.eureka.EurekaHttp.FetchException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Watches one Eureka cluster: fetches the whole registry once, then deltas on an interval, and sends every
 * application that passes the filter as one service.
 *
 * <p>How it keeps the catalog right:
 *
 * <ol>
 *   <li>the kit's owner thread ({@link dev.meshbridge.core.watch.SerialExecutor}) holds all state: each poll runs on
 *       it (fetch, apply, map, send), and the next poll is scheduled on the kit's ticker;
 *   <li>a delta is applied to the local copy of the whole registry, then the copy's reconcile hash is compared with the
 *       server's {@code apps_hashcode}; on a mismatch a full fetch follows at once (as in Eureka's client);
 *   <li>a full fetch also follows every failure, a switch to another server, a server that refuses deltas (HTTP 403
 *       on {@code /apps/delta} while {@code /apps/} works), and a gap of more than {@link #MAX_DELTA_GAP} since the
 *       last successful fetch (longer than a server keeps its deltas); after it the watcher sends {@link
 *       RegistrySynced};
 *   <li>every application touched is handed to the kit's {@link ShardPublisher}, which sends only what changed;
 *   <li>the configured servers are peers: the watcher stays on the one that answers and, when it fails, tries the
 *       others in order; when all fail it reports {@link RegistryStatus#disconnected}, sends nothing (the catalog keeps
 *       its last state) and retries with jittered exponential backoff.
 * </ol>
 */
public final class EurekaWatcher implements RegistryWatcher {

    private static final Logger log = LoggerFactory.getLogger(EurekaWatcher.class);

    /** A poll later than this after the last success reads the whole registry (Eureka keeps deltas for 3 min). */
    static final Duration MAX_DELTA_GAP = Duration.ofSeconds(150);

    /**
     * The warm-up after a reconnect: a restarted Eureka server knows no instance until each client's next renewal
     * (every 30 s) is answered 404 and the client registers again; the server itself counts an instance gone after
     * 90 s without a renewal (its lease). 90 s covers three renewal cycles.
     */
    static final Duration DEFAULT_WARM_UP = Duration.ofSeconds(90);

    /** Counters of one watcher, for tests, benchmarks and debugging. */
    public record Stats(long fullFetches, long deltaFetches, long hashMismatches, long failovers, String server) {}

    /** A failed read of one server: what to report, and the unexpected exception behind it (or null). */
    private record Failure(String text, Throwable cause) {}

    private final RegistryConfig config;
    private final EurekaOptions options;
    private final RegistryStatus status;
    private final List<String> servers;
    private final EurekaHttp http;
    private final ApplicationMapper mapper;
    private final WatcherKit kit;
    private final ShardPublisher publisher;

    private final AtomicLong fullFetches = new AtomicLong();
    private final AtomicLong deltaFetches = new AtomicLong();
    private final AtomicLong hashMismatches = new AtomicLong();
    private final AtomicLong failovers = new AtomicLong();
    private volatile int current;

    // --- owned by the kit's owner thread ---
    private final LocalRegistry registry = new LocalRegistry();
    private final Map<String, ServiceKey> published = new HashMap<>();
    private final Set<String> deltaRefused = new HashSet<>();
    private final Backoff backoff;
    private boolean fullFetchDue = true;
    private long lastSuccessNanos;
    private String authorization;

    public EurekaWatcher(WatcherContext context) {
        this.config = context.config();
        this.options = config.options(EurekaOptions.class);
        this.status = context.status();
        this.servers = List.copyOf(config.addresses());
        if (servers.isEmpty()) throw new IllegalArgumentException("registry " + config.name() + " has no server URL");
        this.http =
                new EurekaHttp(options.connectTimeout(), options.requestTimeout(), tlsContext(config.name(), options));
        this.mapper = new ApplicationMapper(config, options, status);
        this.kit = new WatcherKit(context, "meshbridge-eureka-" + config.name(), DEFAULT_WARM_UP);
        this.publisher = kit.publisher();
        // the end of a warm-up: the next poll reads the whole registry, and ends with RegistrySynced
        publisher.onFullRead(() -> fullFetchDue = true);
        this.backoff = new Backoff(options.fetchInterval(), options.maxBackoff());
    }

    /** HTTPS with the configured CA and client certificate, the files read again when they change; null: none. */
    private static javax.net.ssl.SSLContext tlsContext(String registry, EurekaOptions options) {
        if (options.tls() == null) return null;
        try {
            return new dev.meshbridge.core.tls.ReloadingTls(
                            "registry " + registry, options.tls(), java.time.Clock.systemUTC())
                    .load()
                    .checkOnHandshake(java.time.Duration.ofSeconds(10))
                    .clientContext();
        } catch (java.io.IOException | java.security.GeneralSecurityException e) {
            throw new IllegalArgumentException(
                    "registry " + registry + ": cannot use the TLS files: " + e.getMessage(), e);
        }
    }

    @Override
    public void start() {
        kit.start();
        log.info(
                "registry={} type=eureka watching servers={} fetchInterval={} applications={} auth={}",
                config.name(),
                servers,
                EurekaOptions.format(options.fetchInterval()),
                options.applications(),
                options.authenticated() ? options.username().describe() : "none");
        kit.loop().execute(this::pollAndReschedule);
    }

    public Stats stats() {
        return new Stats(
                fullFetches.get(), deltaFetches.get(), hashMismatches.get(), failovers.get(), servers.get(current));
    }

    private boolean stopping() {
        return !kit.open();
    }

    /** One round, then the next one after the fetch interval (or the backoff, when every server failed). */
    private void pollAndReschedule() {
        if (stopping()) return;
        Duration pause = poll() ? options.fetchInterval() : backoff.next();
        if (!stopping()) kit.loop().schedule(pause, this::pollAndReschedule);
    }

    /** One round: the current server, then the others in order. True when one of them answered. */
    private boolean poll() {
        String lastFailure = null;
        List<Failure> failures = new java.util.ArrayList<>();
        for (int attempt = 0; attempt < servers.size(); attempt++) {
            if (stopping()) return false;
            int index = (current + attempt) % servers.size();
            String server = servers.get(index);
            try {
                fetch(server, index != current);
                for (Failure f : failures) status.error(f.text(), f.cause());
                if (backoff.failures() > 0) kit.reconnected("reconnected to Eureka");
                if (index != current) {
                    String failed = servers.get(current);
                    current = index;
                    failovers.incrementAndGet();
                    log.info(
                            "registry={} type=eureka reading from server={} after server={} failed",
                            config.name(),
                            server,
                            failed);
                }
                backoff.reset();
                lastSuccessNanos = kit.ticker().nanoTime();
                status.connected();
                return true;
            } catch (FetchException e) {
                lastFailure = e.getMessage();
                failures.add(new Failure(lastFailure, null));
                fullFetchDue = true;
                authorization = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // closing
                return false;
            } catch (RuntimeException e) {
                // a bug or an unexpected answer: keep the last state and the watcher alive, read everything again
                lastFailure = "reading from " + server + " failed: " + e;
                failures.add(new Failure(lastFailure, e));
                log.warn("registry={} type=eureka unexpected failure", config.name(), e);
                fullFetchDue = true;
            }
        }
        if (!stopping()) {
            kit.disconnected();
            // down first: the errors are then counted without a log line each (the status reminds of the outage)
            status.disconnected(
                    servers.size() == 1
                            ? lastFailure
                            : "all " + servers.size() + " servers failed, last: " + lastFailure);
            for (Failure f : failures) status.error(f.text(), f.cause());
        }
        return false;
    }

    /** A delta when one may be used, else (or when the delta does not reconcile) the whole registry. */
    private void fetch(String server, boolean switching) throws FetchException, InterruptedException {
        String auth = authorization();
        boolean full = fullFetchDue
                || switching
                || deltaRefused.contains(server)
                || kit.ticker().nanoTime() - lastSuccessNanos > MAX_DELTA_GAP.toNanos();
        boolean deltaForbidden = false;
        if (!full) {
            try {
                Applications delta = http.fetch(server, true, auth);
                deltaFetches.incrementAndGet();
                Set<String> touched = registry.apply(delta);
                String local = registry.reconcileHash();
                if (local.equals(delta.getAppsHashCode())) {
                    if (!touched.isEmpty()) {
                        log.debug("registry={} delta touched applications={}", config.name(), touched);
                    }
                    publish(touched);
                    return;
                }
                hashMismatches.incrementAndGet();
                log.info(
                        "registry={} type=eureka delta does not reconcile (local={} server={}); reading the whole"
                                + " registry",
                        config.name(),
                        local,
                        delta.getAppsHashCode());
            } catch (FetchException e) {
                if (e.statusCode() != 403) throw e;
                deltaForbidden = true;
            }
        }
        fullFetchDue = true;
        Applications all = http.fetch(server, false, auth);
        fullFetches.incrementAndGet();
        if (deltaForbidden && deltaRefused.add(server)) {
            log.info(
                    "registry={} type=eureka server={} refuses deltas (HTTP 403); reading the whole registry each time",
                    config.name(),
                    server);
        }
        Set<String> touched = registry.replace(all);
        publish(touched);
        fullFetchDue = false;
        if (stopping()) return;
        publisher.synced();
        status.synced();
        // routine for a server that refuses deltas, worth a line otherwise (start, recovery, drift)
        log.atLevel(deltaRefused.contains(server) ? Level.DEBUG : Level.INFO)
                .log(
                        "registry={} type=eureka read the whole registry from server={}: applications={} instances={}"
                                + " services={}",
                        config.name(),
                        server,
                        registry.applications().size(),
                        registry.instanceCount(),
                        published.size());
    }

    private String authorization() throws FetchException {
        if (!options.authenticated()) return null;
        if (authorization == null) {
            try {
                authorization = EurekaHttp.basicAuth(
                        options.username().resolve(), options.password().resolve());
            } catch (IllegalStateException e) {
                throw new FetchException("credentials are not available: " + e.getMessage(), 0, e);
            }
        }
        return authorization;
    }

    /** Hands the applications to the publisher, which sends those whose service changed. */
    private void publish(Set<String> applications) {
        for (String app : applications) {
            if (stopping()) return;
            ServiceUpsert upsert;
            try {
                upsert = service(app);
            } catch (RuntimeException e) {
                // one application the mapping cannot handle must not hold back the others: it keeps its last state
                status.skipped("application " + app, e.toString());
                continue;
            }
            if (upsert == null) {
                ServiceKey key = published.remove(app);
                if (key != null) {
                    publisher.remove(key);
                    log.debug("registry={} application={} removed", config.name(), app);
                }
            } else {
                published.put(app, upsert.key());
                publisher.upsert(upsert);
            }
        }
    }

    /** The service of one application now, or null when it has none (no instances, filtered out, no valid host). */
    private ServiceUpsert service(String app) {
        Collection<InstanceInfo> instances = registry.instances(app);
        if (instances.isEmpty() || !options.applications().accepts(app)) return null;
        if (app.isBlank()) {
            status.skipped("application ''", "an application without a name");
            return null;
        }
        String host;
        try {
            host = mapper.host(app);
        } catch (IllegalArgumentException e) {
            status.skipped("application " + app, e.getMessage());
            return null;
        }
        return mapper.map(app, host, instances);
    }

    @Override
    public void close() {
        if (!kit.beginClose()) return;
        http.close(); // aborts a request in flight, so the owner thread stops at once
        kit.close();
        log.info("registry={} type=eureka stopped", config.name());
    }
}
