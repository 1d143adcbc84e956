package dev.meshbridge.app;

import dev.meshbridge.app.admin.AdminServer;
import dev.meshbridge.app.admin.BridgeMetrics;
import dev.meshbridge.app.admin.CatalogDebug;
import dev.meshbridge.app.admin.RegistriesDebug;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.app.state.CatalogFile;
import dev.meshbridge.app.state.CatalogKeeper;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.core.watch.WatcherRuntime;
import dev.meshbridge.ingress.IngressController;
import dev.meshbridge.mcp.McpServer;
import dev.meshbridge.xds.XdsServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running bridge: the aggregator, the registry watchers (through the reconciler), the servers and the admin
 * server, started in that order and closed in reverse.
 */
public final class Bridge implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Bridge.class);

    private final Map<String, RegistryWatcherProvider> providers;
    private final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ServiceAggregator aggregator;
    private final BridgeMetrics metrics;
    private final RegistryReconciler reconciler;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Set on shutdown: {@code /ready} answers 503 from then on, while everything is still served. */
    private volatile boolean draining;

    private volatile BridgeConfig config;
    private XdsServer xds;
    private McpServer mcp;
    private IngressController ingress;
    private final java.util.concurrent.ScheduledExecutorService readiness =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "meshbridge-readiness");
                t.setDaemon(true);
                return t;
            });
    private List<RegistryConfig> mcpBridgeRegistries = List.of();
    private AdminServer admin;
    private ConfigFileWatcher fileWatcher;
    private final HeapBudget heapBudget;
    private CatalogKeeper keeper;
    /** Registries whose services were loaded from the catalog file and have not synced since: served stale. */
    private final java.util.Set<String> staleRegistries = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private Bridge(BridgeConfig config, Map<String, RegistryWatcherProvider> providers, WatcherRuntime runtime) {
        this.config = config;
        this.providers = Map.copyOf(providers);
        this.aggregator = new ServiceAggregator(config.aggregator());
        this.metrics = new BridgeMetrics(meters, aggregator);
        this.reconciler = new RegistryReconciler(aggregator, providers, metrics::add, metrics::remove, runtime);
        this.heapBudget = new HeapBudget(config.admin().heapBudgetPercent() / 100.0, meters);
    }

    /**
     * Starts a bridge.
     *
     * @param configFile the file {@code config} came from, watched for changes when {@code reload.enabled}; null for
     *     none
     */
    public static Bridge start(BridgeConfig config, Path configFile, Map<String, RegistryWatcherProvider> providers)
            throws IOException {
        return start(config, configFile, providers, WatcherRuntime.system());
    }

    /**
     * As {@link #start(BridgeConfig, Path, Map)}, with the watchers' time and host-name lookups from {@code runtime}
     * (tests drive warm-ups and deletion guards through it).
     */
    static Bridge start(
            BridgeConfig config,
            Path configFile,
            Map<String, RegistryWatcherProvider> providers,
            WatcherRuntime runtime)
            throws IOException {
        Bridge b = new Bridge(config, providers, runtime);
        try {
            b.startAll(configFile);
        } catch (IOException | RuntimeException e) {
            b.close();
            throw e;
        }
        return b;
    }

    /**
     * A server that stops holding its first answers before a registry's {@code syncTimeout} may answer a reconnecting
     * client with a catalog that lacks that registry: said once at start, with the keys to change.
     */
    private void warnIfHoldShorterThanSync(String server, java.time.Duration hold) {
        if (hold.isZero()) return; // 0s: answering at once was asked for
        config.registries().stream()
                .filter(r -> r.syncTimeout().compareTo(hold) > 0)
                .findFirst()
                .ifPresent(r -> log.warn(
                        "{}.initialSyncTimeout={} is shorter than registry={} syncTimeout={}: after a restart the {}"
                                + " server may answer before that registry has synced; raise {}.initialSyncTimeout",
                        server,
                        hold,
                        r.name(),
                        r.syncTimeout(),
                        server,
                        server));
    }

    private void startAll(Path configFile) throws IOException {
        // both servers hold their first answers until the registries have synced (checkCatalogReady)
        warnIfHoldShorterThanSync("xds", config.xds().initialSyncTimeout());
        if (config.mcp().enabled())
            warnIfHoldShorterThanSync("mcp", config.mcp().initialSyncTimeout());
        xds = new XdsServer(config.xds(), meters).start();
        aggregator.subscribe(xds).join();
        if (config.mcp().enabled()) {
            mcp = new McpServer(config.mcp(), meters).start();
            aggregator.subscribe(mcp).join();
        }
        if (config.data().enabled()) {
            keeper = new CatalogKeeper(
                    config.data().directory(), config.data().writeInterval(), java.time.Clock.systemUTC());
            loadLastCatalog(keeper.file());
            aggregator.subscribe(keeper).join();
        }
        io.fabric8.kubernetes.client.KubernetesClient cluster = null;
        if (config.ingress().kubernetes().enabled()) {
            // before the registries: their {secret: ...} credentials are read through this client at each connect
            cluster = IngressController.connect(config.ingress().kubernetes());
            closeables.add(cluster);
            dev.meshbridge.ingress.ClusterSecrets secrets = new dev.meshbridge.ingress.ClusterSecrets(cluster, null);
            closeables.add(secrets);
            closeables.add(dev.meshbridge.core.config.KubernetesSecrets.install(secrets));
        }
        reconciler.apply(config.registries());
        readiness.scheduleWithFixedDelay(this::checkCatalogReady, 50, 100, java.util.concurrent.TimeUnit.MILLISECONDS);
        if (config.ingress().kubernetes().enabled()
                || config.ingress().directory().enabled()) {
            ingress =
                    new IngressController(config.ingress(), cluster, meters, providers, this::onMcpBridge, this::ready);
            ingress.routes().addListener(aggregator::setRoutes);
            aggregator.subscribe(ingress.destinations()).join();
            ingress.start();
        }
        if (config.admin().enabled()) {
            admin = new AdminServer(
                    config.admin().address(),
                    config.admin().port(),
                    config.admin().token(),
                    this::readiness,
                    this::liveness,
                    meters::scrape,
                    config.admin().maxConcurrentDebugRequests());
            admin.addAction("/admin/registries/", this::registryAction);
            admin.addDebugSource(new CatalogDebug(aggregator));
            admin.addDebugSource(new RegistriesDebug(reconciler::running, aggregator));
            admin.addDebugSource(xds.debugSource());
            if (ingress != null) admin.addDebugSource(ingress.debug());
            if (mcp != null) admin.addDebugSource(mcp.debugSource());
            admin.start();
        }
        if (configFile != null && config.reload().enabled()) {
            fileWatcher = new ConfigFileWatcher(
                    configFile,
                    Files.readAllBytes(configFile),
                    config.reload().interval(),
                    f -> BridgeConfig.load(f, providers),
                    this::reconfigure);
            io.micrometer.core.instrument.FunctionCounter.builder(
                            "meshbridge.config.reloads", fileWatcher, ConfigFileWatcher::appliedCount)
                    .description("run-time edits of the configuration file, applied or refused")
                    .tag("result", "applied")
                    .register(meters);
            io.micrometer.core.instrument.FunctionCounter.builder(
                            "meshbridge.config.reloads", fileWatcher, ConfigFileWatcher::refusedCount)
                    .description("run-time edits of the configuration file, applied or refused")
                    .tag("result", "refused")
                    .register(meters);
        }
        log.info(
                "bridge started: {} registries; xDS on {}:{}",
                config.registries().size(),
                config.xds().bindAddress(),
                xds.port());
    }

    /**
     * Loads the last good catalog, marked stale, so that a restart while a registry is unreachable serves what was
     * served before; each registry's services are replaced by the registry's own once it has synced (only real
     * differences change anything). A file that cannot be read, or is not a catalog file, is refused and ignored.
     */
    private void loadLastCatalog(CatalogFile file) {
        CatalogFile.Loaded loaded;
        try {
            loaded = file.read();
        } catch (CatalogFile.RefusedException e) {
            log.error(
                    "catalog file refused and ignored; the bridge starts from its registries alone: {}",
                    e.getMessage());
            return;
        }
        if (loaded == null) {
            log.info("catalog file={} not found: the bridge starts from its registries alone", file.path());
            return;
        }
        java.util.Set<String> configured = new java.util.HashSet<>();
        for (RegistryConfig r : config.registries()) configured.add(r.name());
        int used = 0;
        java.util.Set<String> hosts = new java.util.HashSet<>();
        for (dev.meshbridge.core.spi.ServiceUpsert u : loaded.upserts()) {
            // a registry no longer configured must not come back from the file
            if (!configured.contains(u.registry())) continue;
            aggregator.accept(u);
            staleRegistries.add(u.registry());
            hosts.add(u.host());
            used++;
        }
        aggregator.flushNow().join();
        log.info(
                "catalog file={} written at {} (sequence={} version={}) loaded: {} services from registries {},"
                        + " served as stale until each has synced",
                file.path(),
                loaded.writtenAt(),
                loaded.sequence(),
                loaded.catalogVersion(),
                hosts.size(),
                staleRegistries);
        if (used < loaded.upserts().size()) {
            log.info(
                    "catalog file: {} entries of registries no longer configured were left out",
                    loaded.upserts().size() - used);
        }
    }

    /** Registries whose services are still the ones loaded from the catalog file. */
    public java.util.Set<String> staleRegistries() {
        staleRegistries.removeIf(name -> reconciler.running().stream()
                .anyMatch(r -> r.config().name().equals(name) && r.status().hasSynced()));
        return java.util.Set.copyOf(staleRegistries);
    }

    /**
     * Applies a changed, valid configuration: registries are reconciled; other sections need a restart. An edit that
     * removes registries the file does not confirm ({@code reload.confirmRemoval}) is refused: an empty, cut or
     * half-written file looks just like one that removes registries, and the running state stays.
     *
     * @return false when the edit was refused
     */
    synchronized boolean reconfigure(BridgeConfig next) {
        BridgeConfig previous = config;
        java.util.Set<String> kept = new java.util.HashSet<>();
        for (RegistryConfig r : next.registries()) kept.add(r.name());
        List<String> unconfirmed = new ArrayList<>();
        for (RegistryConfig r : previous.registries()) {
            if (!kept.contains(r.name()) && !next.reload().removalConfirmed(r.name())) unconfirmed.add(r.name());
        }
        if (!unconfirmed.isEmpty()) {
            String what = next.registries().isEmpty()
                    ? "removes every registry (an empty or cut file looks the same)"
                    : "removes registries " + unconfirmed + " (a cut file looks the same)";
            log.error(
                    "config: the edit {}; refused, the running registries stay. To remove them, list them in"
                            + " reload.confirmRemoval (\"*\" for any) in the same edit",
                    what);
            return false;
        }
        config = next;
        reconciler.apply(registries());
        if (!next.ingress().equals(previous.ingress())) log.warn("config: ingress changes apply after a restart");
        if (!next.aggregator().equals(previous.aggregator()))
            log.warn("config: aggregator changes apply after a restart");
        if (!next.admin().equals(previous.admin())) log.warn("config: admin changes apply after a restart");
        if (!next.xds().equals(previous.xds())) log.warn("config: xds changes apply after a restart");
        if (!next.mcp().equals(previous.mcp())) log.warn("config: mcp changes apply after a restart");
        if (!next.reload().withoutConfirmation().equals(previous.reload().withoutConfirmation()))
            log.warn("config: reload changes apply after a restart");
        if (!next.data().equals(previous.data())) log.warn("config: data changes apply after a restart");
        return true;
    }

    /** The registries an McpBridge resource configures changed: reconcile them together with the file's. */
    private synchronized void onMcpBridge(List<RegistryConfig> registries) {
        mcpBridgeRegistries = List.copyOf(registries);
        reconciler.apply(registries());
    }

    /**
     * The registries to run: those of the configuration file, then those of the McpBridge resource. On a name both
     * use, the file's entry wins and the clash is logged.
     */
    private List<RegistryConfig> registries() {
        List<RegistryConfig> all = new ArrayList<>(config.registries());
        java.util.Set<String> names = new java.util.HashSet<>();
        for (RegistryConfig r : all) names.add(r.name());
        for (RegistryConfig r : mcpBridgeRegistries) {
            if (names.add(r.name())) {
                all.add(r);
            } else {
                log.warn(
                        "registry name={} is in both the configuration file and the McpBridge; the file's entry is used",
                        r.name());
            }
        }
        return all;
    }

    public ServiceAggregator aggregator() {
        return aggregator;
    }

    public PrometheusMeterRegistry meters() {
        return meters;
    }

    public RegistryReconciler reconciler() {
        return reconciler;
    }

    /**
     * Once every registry has had its first sync (or passed its sync timeout), lets both servers answer (they hold
     * their first answers so a restarting bridge never hands a client a half-filled catalog) after the catalog
     * holding that sync is published, and starts keeping the catalog on disk.
     */
    private void checkCatalogReady() {
        if (!ready()) return;
        readiness.shutdown();
        aggregator.flushNow().thenAccept(catalog -> {
            java.util.Set<String> stale = staleRegistries();
            log.info(
                    "catalog ready: {} services{}",
                    catalog.serviceCount(),
                    stale.isEmpty() ? "" : "; registries " + stale + " not synced, served from the catalog file");
            xds.markCatalogReady();
            if (mcp != null) mcp.markCatalogReady();
            if (keeper != null) keeper.enable();
        });
    }

    /** The MCP server's port (useful when configured as 0), or -1 when it is off. */
    public int mcpPort() {
        return mcp == null ? -1 : mcp.port();
    }

    /** The xDS server's port (useful when configured as 0). */
    public int xdsPort() {
        return xds.port();
    }

    /** The admin server's port (useful when configured as 0), or -1 when it is off. */
    public int adminPort() {
        return admin == null ? -1 : admin.port();
    }

    public BridgeConfig config() {
        return config;
    }

    /** Re-reads the configuration file now instead of waiting for the interval (tests). */
    void checkConfigFile() {
        if (fileWatcher != null) fileWatcher.check();
    }

    /** True once every registry has synced, or passed its sync timeout. */
    public boolean ready() {
        return reconciler.running().stream()
                .allMatch(r -> r.status().ready(r.config().syncTimeout()));
    }

    private AdminServer.Health readiness() {
        Map<String, Object> body = new LinkedHashMap<>();
        if (draining) {
            // the Service must stop sending new clients here before the streams are sent away
            body.put("ready", false);
            body.put("draining", true);
            return new AdminServer.Health(false, body);
        }
        List<String> pending = new ArrayList<>();
        for (RegistryReconciler.Running r : reconciler.running()) {
            if (!r.status().ready(r.config().syncTimeout()))
                pending.add(r.config().name());
        }
        body.put("ready", pending.isEmpty());
        if (!pending.isEmpty()) body.put("waitingForFirstSync", pending);
        List<String> resyncing = new ArrayList<>();
        for (RegistryReconciler.Running r : reconciler.running()) {
            if (r.status().resyncing()) resyncing.add(r.config().name());
        }
        // a watcher restarted by a configuration edit resyncs while its predecessor's state is served: still ready
        if (!resyncing.isEmpty()) body.put("resyncing", resyncing);
        body.put("services", aggregator.current().serviceCount());
        body.put("catalogVersion", aggregator.current().version());
        java.util.Set<String> stale = staleRegistries();
        if (!stale.isEmpty()) body.put("servedFromCatalogFile", new java.util.TreeSet<>(stale));
        return new AdminServer.Health(pending.isEmpty(), body);
    }

    private AdminServer.Health liveness() {
        Map<String, Object> body = new LinkedHashMap<>();
        List<String> guarded = new ArrayList<>();
        body.put("status", "ok");
        List<Map<String, Object>> regs = new ArrayList<>();
        for (RegistryReconciler.Running r : reconciler.running()) {
            RegistryStatus s = r.status();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", s.registry());
            m.put("type", s.type());
            m.put("state", s.state().name());
            if (s.lastError() != null) m.put("lastError", s.lastError());
            if (s.warmingUntil() != null) m.put("removalsHeldUntil", s.warmingUntil());
            RegistryStatus.Guard guard = s.guard();
            if (guard != null) {
                m.put("deletionGuard", guard(guard));
                guarded.add(s.registry());
            }
            regs.add(m);
        }
        body.put("registries", regs);
        if (!guarded.isEmpty()) {
            body.put(
                    "attention",
                    "the deletion guard holds removals of registries " + guarded
                            + ": their last state is served; see registries[].deletionGuard");
        }
        // a registry being down is not a reason to restart the bridge: that would throw away its last good state
        return new AdminServer.Health(true, body);
    }

    /** The deletion guard's state as {@code /healthz} and {@code /debug/registries} show it. */
    public static Map<String, Object> guard(RegistryStatus.Guard g) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("since", g.since());
        m.put("scope", g.scope());
        m.put("heldEndpoints", g.heldEndpoints());
        m.put("servedEndpoints", g.servedEndpoints());
        m.put("percent", g.percent());
        m.put("services", g.services());
        if (g.moreServices() > 0) m.put("moreServices", g.moreServices());
        m.put("release", g.release());
        return m;
    }

    /** {@code POST /admin/registries/<name>/release}: the deletion guard of that registry lets its removals go. */
    private AdminServer.Answer registryAction(String rest) {
        String[] parts = rest.split("/");
        if (parts.length != 2 || !parts[1].equals("release")) {
            return new AdminServer.Answer(404, Map.of("error", "expected /admin/registries/<name>/release"));
        }
        String name = parts[0];
        for (RegistryReconciler.Running r : reconciler.running()) {
            if (!r.config().name().equals(name)) continue;
            RegistryStatus.Guard held = r.status().guard();
            if (!r.status().release()) {
                return new AdminServer.Answer(
                        409, Map.of("registry", name, "released", false, "reason", "the deletion guard holds nothing"));
            }
            log.info(
                    "registry={} deletion guard released by an operator: {} endpoints of {} services",
                    name,
                    held.heldEndpoints(),
                    held.services().size() + held.moreServices());
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("registry", name);
            body.put("released", true);
            body.put("heldEndpoints", held.heldEndpoints());
            body.put("services", held.services());
            return new AdminServer.Answer(200, body);
        }
        return new AdminServer.Answer(
                404, Map.of("error", "no registry named " + dev.meshbridge.core.util.LogText.safe(name)));
    }

    /** Adds something to close with the bridge (closed before the aggregator, in reverse order of adding). */
    void closeWith(AutoCloseable c) {
        closeables.add(c);
    }

    /**
     * Leaves gracefully, as on SIGTERM: {@code /ready} answers 503 at once (the Service stops sending new connections
     * here), everything is still served and pushed for {@code shutdown.drainPeriod}, then both servers send GOAWAY and
     * end their streams with {@code UNAVAILABLE} so every client reconnects to another replica holding what it has
     * (replicas serve equal versions, so it is sent nothing new), then the bridge closes. Blocks until closed.
     */
    public void shutdownGracefully() {
        if (closed.get()) return;
        draining = true;
        java.time.Duration period = config.shutdown().drainPeriod();
        log.info("shutting down: /ready answers 503; xDS and MCP clients are sent to other replicas in {}", period);
        try {
            Thread.sleep(period);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        drainServers();
        close();
    }

    /** GOAWAY and the end of every stream, on both servers at once; waits for both (each is bounded). */
    private void drainServers() {
        java.util.concurrent.CompletableFuture<Void> x =
                xds == null ? java.util.concurrent.CompletableFuture.completedFuture(null) : xds.drain();
        java.util.concurrent.CompletableFuture<Void> m =
                mcp == null ? java.util.concurrent.CompletableFuture.completedFuture(null) : mcp.drain();
        java.util.concurrent.CompletableFuture.allOf(x, m).join();
    }

    /** True once a graceful shutdown has begun ({@code /ready} answers 503). */
    public boolean draining() {
        return draining;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        if (fileWatcher != null) fileWatcher.close();
        heapBudget.close();
        if (admin != null) admin.close();
        if (ingress != null) ingress.close();
        reconciler.close();
        readiness.shutdownNow();
        if (mcp != null) mcp.close();
        if (xds != null) xds.close();
        if (keeper != null) keeper.close();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                log.warn("closing {} failed", closeables.get(i), e);
            }
        }
        aggregator.close();
        meters.close();
        log.info("bridge stopped");
    }
}
