package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryEvent;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.RegistrySynced;
import dev.meshbridge.core.spi.RegistryWatcher;
import dev.meshbridge.core.spi.WatcherContext;
import dev.meshbridge.core.watch.Backoff;
import dev.meshbridge.core.watch.ShardPublisher;
import dev.meshbridge.core.watch.WatcherKit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ZKConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the configured roots of one ZooKeeper ensemble (Dubbo interface-level providers, Dubbo 3 applications and
 * their interface mapping, Spring Cloud services) and sends their services as {@link RegistryEvent}s.
 *
 * <p>How it works:
 *
 * <ol>
 *   <li>the kit's owner thread ({@link dev.meshbridge.core.watch.SerialExecutor}) holds all state ({@link
 *       ZookeeperCatalog}); Curator's callback and watch threads only enqueue onto it; every change leaves through the
 *       kit's {@link ShardPublisher};
 *   <li>each root carries one persistent recursive watch, added before the root is read, so no change between the
 *       read and the watch is missed; events then update the copy one znode at a time;
 *   <li>a full sync (at start and after every reconnect or session loss) lists the roots, interfaces and provider
 *       lists and reads every instance, with at most {@value #MAX_IN_FLIGHT} reads in flight; it sends nothing until
 *       it is complete, then only what differs from before, then {@link RegistrySynced};
 *   <li>a root that cannot be watched is retried with jittered backoff on the kit's ticker;
 *   <li>while the connection is down nothing is sent, so the catalog keeps the last known state; after a reconnect
 *       (or a new session) the kit's warm-up holds removals while clients re-register, then a full sync decides;
 *   <li>a malformed znode is skipped and reported on the {@link RegistryStatus}; nothing stops the watcher.
 * </ol>
 */
public final class ZookeeperWatcher implements RegistryWatcher {

    private static final Logger log = LoggerFactory.getLogger(ZookeeperWatcher.class);

    /** Reads in flight at once during a sync. */
    static final int MAX_IN_FLIGHT = 1000;

    private static final Duration RETRY_MIN = Duration.ofMillis(500);
    private static final Duration RETRY_MAX = Duration.ofSeconds(30);

    private final RegistryConfig config;
    private final ZookeeperOptions options;
    private final RegistryStatus status;
    private final String connectString;
    private final WatcherKit kit;
    private final ShardPublisher publisher;
    private final Map<String, Watcher> rootWatchers = new HashMap<>();
    private volatile CuratorFramework client;

    // --- owned by the owner thread ---
    private final ZookeeperCatalog catalog;
    private final ArrayDeque<ZnodeRead> queue = new ArrayDeque<>();
    private final Map<String, Backoff> rootBackoff = new HashMap<>();
    private int epoch;
    private int inFlight;
    private int pending;
    private boolean syncing;
    /** Why the current session has no digest credentials (its password could not be read), or null. */
    private volatile String credentialProblem;

    /** The first path ZooKeeper denied in this sync (wrong credentials or ACL), or null. */
    private String denied;

    private final Backoff deniedBackoff = new Backoff(RETRY_MIN, RETRY_MAX);
    private boolean connected;
    private boolean flushQueued;
    private boolean sessionLost;
    private long syncStartedNanos;

    ZookeeperWatcher(RegistryConfig config, ZookeeperOptions options, WatcherContext context) {
        this.config = config;
        this.options = options;
        this.status = context.status();
        this.connectString = String.join(",", config.addresses()) + options.chroot();
        this.kit = new WatcherKit(context, "meshbridge-zk-" + config.name(), defaultWarmUp(options));
        this.publisher = kit.publisher();
        publisher.onFullRead(this::startSync);
        this.catalog = new ZookeeperCatalog(config, options, status);
        for (String root : options.servicesPaths()) {
            rootWatchers.put(root, event -> enqueue(() -> onWatchEvent(root, event)));
        }
    }

    private ZKClientConfig clientConfig;

    @Override
    public void start() {
        kit.start();
        ZKClientConfig clientConfig = new ZKClientConfig();
        clientConfig.setProperty(ZKConfig.JUTE_MAXBUFFER, Integer.toString(options.maxResponseBytes()));
        if (options.tls() != null) options.tls().apply(clientConfig);
        this.clientConfig = clientConfig;
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) options.sessionTimeout().toMillis())
                .connectionTimeoutMs((int) options.connectionTimeout().toMillis())
                .retryPolicy(new ExponentialBackoffRetry(100, 3, 2_000))
                .ensembleTracker(false)
                .zkClientConfig(clientConfig)
                .zookeeperFactory(new AuthenticatingFactory(clientConfig))
                .build();
        client = c;
        c.getConnectionStateListenable().addListener((cl, newState) -> enqueue(() -> onConnectionState(newState)));
        log.info(
                "registry={} type=zookeeper connecting to {} roots={} auth={} tls={}",
                config.name(),
                connectString,
                options.servicesPaths(),
                options.authenticated() ? "digest:" + options.username() : "none",
                options.tls() == null ? "off" : "on");
        c.start();
        kit.loop().schedule(options.connectionTimeout(), this::checkConnected);
    }

    @Override
    public void close() {
        if (!kit.beginClose()) return;
        CuratorFramework c = client;
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                log.debug("registry={} closing the ZooKeeper client failed", config.name(), e);
            }
        }
        kit.close();
        log.info("registry={} type=zookeeper stopped", config.name());
    }

    /**
     * The warm-up after a reconnect: a client whose session could not be kept loses its ephemeral znodes up to one
     * session timeout after the server is back, then re-registers at once (Dubbo on its new session, curator
     * x-discovery on reconnect); Dubbo's and Curator's default session timeout is 60 s, as is the watcher's. So: the
     * watcher's session timeout plus 30 s.
     */
    static Duration defaultWarmUp(ZookeeperOptions options) {
        return options.sessionTimeout().plusSeconds(30);
    }

    /** The Curator client (for tests that expire its session). */
    CuratorFramework client() {
        return client;
    }

    // ------------------------------------------------------------------ owner thread

    private void enqueue(Runnable task) {
        kit.loop().execute(() -> {
            if (kit.open()) task.run();
        });
    }

    private void onConnectionState(ConnectionState newState) {
        switch (newState) {
            case CONNECTED, RECONNECTED, READ_ONLY -> {
                connected = true;
                status.connected();
                if (newState == ConnectionState.RECONNECTED || sessionLost) {
                    // clients whose sessions expired meanwhile re-register over the next seconds
                    kit.reconnected(
                            sessionLost
                                    ? "ZooKeeper session lost and renewed (server restart or long outage)"
                                    : "reconnected to ZooKeeper");
                }
                sessionLost = false;
                startSync();
            }
            case SUSPENDED -> lostConnection("connection to " + connectString + " suspended");
            case LOST -> {
                sessionLost = true;
                lostConnection("ZooKeeper session lost (" + connectString + ")");
            }
        }
    }

    private void lostConnection(String reason) {
        connected = false;
        kit.disconnected();
        newEpoch();
        status.disconnected(reason + "; keeping the last known state until it is back");
        if (options.tls() != null) kit.loop().schedule(options.connectionTimeout(), this::checkConnected);
    }

    private void checkConnected() {
        if (connected) return;
        String tlsProblem = tlsProblem();
        if (tlsProblem != null) {
            // a handshake the client retries in silence: name it on /healthz and /debug/registries
            status.disconnected(tlsProblem + "; keeping the last known state, still trying");
        } else if (!status.hasSynced()) {
            status.disconnected(
                    "cannot connect to " + connectString + " within " + options.connectionTimeout() + "; still trying");
        }
    }

    /** With TLS, why a handshake with the first server fails (null when it succeeds or TLS is off). */
    private String tlsProblem() {
        ZookeeperTls tls = options.tls();
        if (tls == null || clientConfig == null) return null;
        String first = config.addresses().get(0);
        int colon = first.lastIndexOf(':');
        String host = colon > 0 ? first.substring(0, colon) : first;
        int port = colon > 0 ? Integer.parseInt(first.substring(colon + 1)) : 2181;
        return tls.probe(clientConfig, host, port, (int)
                Math.min(5000, options.connectionTimeout().toMillis()));
    }

    /** Forgets every read in flight: their answers are ignored from now on. */
    private void newEpoch() {
        epoch++;
        queue.clear();
        inFlight = 0;
        pending = 0;
        syncing = false;
    }

    private void startSync() {
        if (!connected) return; // the reconnect starts one
        newEpoch();
        syncing = true;
        denied = null;
        syncStartedNanos = kit.ticker().nanoTime();
        log.info("registry={} full sync of {} started", config.name(), options.servicesPaths());
        for (String root : options.servicesPaths()) addWatch(root, true);
    }

    /** Sets the root's persistent recursive watch, then lists the root. */
    private void addWatch(String root, boolean partOfSync) {
        int ep = epoch;
        if (partOfSync) pending++;
        try {
            client.watchers()
                    .add()
                    .withMode(AddWatchMode.PERSISTENT_RECURSIVE)
                    .inBackground((cl, event) -> enqueue(() -> onWatchAdded(root, ep, partOfSync, event)))
                    .usingWatcher(rootWatchers.get(root))
                    .forPath(root);
        } catch (Exception e) {
            if (partOfSync) pending--;
            status.error("cannot watch " + root, e);
            retryWatch(root);
        }
    }

    private void onWatchAdded(String root, int ep, boolean partOfSync, CuratorEvent event) {
        if (ep != epoch) return;
        if (partOfSync) pending--;
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        if (code == KeeperException.Code.OK) {
            Backoff b = rootBackoff.get(root);
            if (b != null) b.reset();
            submit(ZnodeRead.listRoot(root));
        } else if (isDenied(code)) {
            denied(root, code);
        } else if (!isConnectionProblem(code)) {
            status.error("cannot watch " + root, KeeperException.create(code, root));
            retryWatch(root);
        }
        afterResult();
    }

    private static boolean isDenied(KeeperException.Code code) {
        return code == KeeperException.Code.NOAUTH || code == KeeperException.Code.AUTHFAILED;
    }

    /**
     * ZooKeeper refused to show a path (a wrong digest password, or an ACL that does not name the user): the registry
     * is DOWN, not up, and the sync does not finish (a sync that read nothing would tell the catalog the registry has
     * no services); it is tried again with a backoff.
     */
    private void denied(String path, KeeperException.Code code) {
        // when this session could not read its password, say so: that is why ZooKeeper denies
        String why = credentialProblem;
        String cause = why != null ? " (" + why + ")" : "";
        status.error("ZooKeeper denied access to " + path + cause, KeeperException.create(code, path));
        if (denied == null) {
            denied = path;
            status.disconnected("ZooKeeper denied access to " + path + " ("
                    + KeeperException.create(code, path).getMessage()
                    + "): "
                    + (why != null ? why : "check username and password (digest) and the znodes' ACL")
                    + "; keeping the last known state");
        }
    }

    private void retryWatch(String root) {
        Duration delay = rootBackoff
                .computeIfAbsent(root, r -> new Backoff(RETRY_MIN, RETRY_MAX))
                .next();
        int ep = epoch;
        kit.loop().schedule(delay, () -> {
            if (ep == epoch && connected && kit.open()) addWatch(root, false);
        });
    }

    private void onWatchEvent(String root, WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None || event.getPath() == null) return;
        String path = event.getPath();
        String relative;
        if (path.equals(root)) relative = "";
        else if (root.equals("/")) relative = path.substring(1);
        else if (path.startsWith(root + "/")) relative = path.substring(root.length() + 1);
        else return;
        catalog.event(root, event.getType(), relative, this::submit);
        afterResult();
    }

    private void submit(ZnodeRead read) {
        pending++;
        queue.add(read);
        pump();
    }

    private void pump() {
        while (inFlight < MAX_IN_FLIGHT && !queue.isEmpty()) issue(queue.poll());
    }

    private void issue(ZnodeRead read) {
        int ep = epoch;
        inFlight++;
        try {
            switch (read.kind()) {
                case LIST_ROOT, LIST_NODE, LIST_PROVIDERS, LIST_CONFIGURATORS, LIST_CONFIG ->
                    client.getChildren()
                            .inBackground((cl, event) -> enqueue(() -> onRead(read, ep, event)))
                            .forPath(read.path());
                case READ_INSTANCE, READ_MAPPING, READ_CONFIG ->
                    client.getData()
                            .inBackground((cl, event) -> enqueue(() -> onRead(read, ep, event)))
                            .forPath(read.path());
            }
        } catch (Exception e) {
            inFlight--;
            pending--;
            status.error("cannot read " + read.path(), e);
        }
    }

    private void onRead(ZnodeRead read, int ep, CuratorEvent event) {
        if (ep != epoch) return;
        inFlight--;
        pending--;
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        if (code == KeeperException.Code.OK) {
            apply(read, true, event.getChildren(), event.getData());
        } else if (code == KeeperException.Code.NONODE) {
            apply(read, false, List.of(), null);
        } else if (isDenied(code)) {
            denied(read.path(), code);
        } else if (!isConnectionProblem(code)) {
            status.error(
                    "cannot read " + read.path() + "; keeping what was known and trying again at the next sync",
                    KeeperException.create(code, read.path()));
        }
        pump();
        afterResult();
    }

    /** Applies one answer about a znode that exists or not. */
    private void apply(ZnodeRead read, boolean exists, List<String> children, byte[] data) {
        boolean gone = !exists;
        byte[] bytes = data == null ? new byte[0] : data;
        List<String> names = children == null ? List.of() : children;
        switch (read.kind()) {
            case LIST_ROOT -> {
                if (gone) catalog.rootGone(read.root());
                else catalog.rootListed(read.root(), names, this::submit);
            }
            case LIST_NODE -> {
                if (gone) catalog.nodeGone(read.root(), read.child());
                else catalog.nodeListed(read.root(), read.child(), names, this::submit);
            }
            case LIST_PROVIDERS -> {
                if (gone) catalog.providersGone(read.root(), read.child());
                else catalog.providersListed(read.root(), read.child(), names);
            }
            case READ_INSTANCE -> catalog.instanceRead(read.root(), read.child(), read.leaf(), gone ? null : bytes);
            case READ_MAPPING -> catalog.mappingRead(read.root(), read.leaf(), gone ? null : bytes);
            case LIST_CONFIGURATORS -> catalog.configuratorsListed(read.root(), read.child(), gone ? List.of() : names);
            case LIST_CONFIG -> catalog.configListed(read.root(), gone ? List.of() : names, this::submit);
            case READ_CONFIG -> catalog.configRead(read.root(), read.leaf(), gone ? null : bytes);
        }
    }

    private void afterResult() {
        if (syncing) {
            if (pending == 0 && denied != null) {
                syncing = false;
                Duration delay = deniedBackoff.next();
                kit.loop().schedule(delay, () -> {
                    if (connected && kit.open()) startSync();
                });
            } else if (pending == 0) {
                deniedBackoff.reset();
                finishSync();
            }
        } else if (catalog.hasChanges() && !flushQueued) {
            flushQueued = true;
            enqueue(this::flush);
        }
    }

    private void finishSync() {
        syncing = false;
        int changes = catalog.drain(publisher);
        publisher.synced();
        status.synced();
        log.info(
                "registry={} full sync done in {} ms: nodes={} services={} changes={}",
                config.name(),
                (kit.ticker().nanoTime() - syncStartedNanos) / 1_000_000,
                catalog.nodeCount(),
                publisher.services().size(),
                changes);
    }

    private void flush() {
        flushQueued = false;
        if (syncing) return;
        catalog.drain(publisher);
    }

    private static boolean isConnectionProblem(KeeperException.Code code) {
        return code == KeeperException.Code.CONNECTIONLOSS
                || code == KeeperException.Code.SESSIONEXPIRED
                || code == KeeperException.Code.SESSIONMOVED
                || code == KeeperException.Code.OPERATIONTIMEOUT;
    }

    /**
     * Makes the ZooKeeper handles (one per session) and adds the digest credentials to each, reading the password
     * again every time so a rotated secret file is used from the next session on.
     */
    private final class AuthenticatingFactory implements ZookeeperFactory {
        private final ZKClientConfig clientConfig;

        AuthenticatingFactory(ZKClientConfig clientConfig) {
            this.clientConfig = clientConfig;
        }

        @Override
        public ZooKeeper newZooKeeper(String connect, int sessionTimeout, Watcher watcher, boolean canBeReadOnly)
                throws Exception {
            return newZooKeeper(connect, sessionTimeout, watcher, canBeReadOnly, clientConfig);
        }

        @Override
        public ZooKeeper newZooKeeper(
                String connect, int sessionTimeout, Watcher watcher, boolean canBeReadOnly, ZKClientConfig cfg)
                throws Exception {
            ZooKeeper zk =
                    new ZooKeeper(connect, sessionTimeout, watcher, canBeReadOnly, cfg == null ? clientConfig : cfg);
            if (options.authenticated()) {
                try {
                    String credentials =
                            options.username() + ":" + options.password().resolve();
                    zk.addAuthInfo("digest", credentials.getBytes(StandardCharsets.UTF_8));
                    credentialProblem = null;
                } catch (IllegalStateException e) {
                    // the message names where the password is (file, variable, Secret and key), never the value
                    credentialProblem = "cannot read the ZooKeeper password from "
                            + options.password().describe() + ": " + e.getMessage()
                            + "; this session is not authenticated";
                    status.error(credentialProblem, null);
                }
            }
            return zk;
        }
    }
}
