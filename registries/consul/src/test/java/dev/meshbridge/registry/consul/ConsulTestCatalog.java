package dev.meshbridge.registry.consul;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The state behind {@link ConsulTestServer}: datacenters, nodes, services and checks, with Consul's raft-style
 * indexes. Every write takes the next index; the {@code services} table index of a datacenter moves only when a
 * service is added, removed or changed (not on health), and each service name has its own index that moves on any
 * change to its instances or to the checks that cover them (service checks and the checks of their nodes), as
 * Consul's state store does. Re-registering an identical service, or a check update that keeps the status, writes
 * nothing. A write wakes only the blocking queries whose index it moved. Agent-run checks (TTL, HTTP, TCP) run here too, with Consul's one-second minimum interval.
 */
final class ConsulTestCatalog implements AutoCloseable {

    static final String DEFAULT_SCOPE = "default/default";
    static final Duration MIN_INTERVAL = Duration.ofSeconds(1);

    final ReentrantLock lock = new ReentrantLock();
    /** One condition per watched thing, so a write wakes only the queries it concerns, as Consul's watch sets do. */
    private final Map<String, Condition> watches = new java.util.HashMap<>();

    private final ScheduledExecutorService timers = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "consul-test-checks");
        t.setDaemon(true);
        return t;
    });
    private final HttpClient checkClient =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private long index = 10;
    private boolean closed;
    final Map<String, Dc> dcs = new LinkedHashMap<>();
    final String localDc;
    final String localNode;

    /** One datacenter. */
    static final class Dc {
        final String name;
        final Map<String, Node> nodes = new LinkedHashMap<>();
        long servicesIndex;
        /** Per {@code scope|name}: kept after the last instance goes, so watchers of a removed service wake up. */
        final Map<String, Long> serviceIndex = new LinkedHashMap<>();

        Dc(String name) {
            this.name = name;
        }
    }

    /** One node. */
    static final class Node {
        String id;
        String name;
        String address;
        String dc;
        Map<String, String> meta = new LinkedHashMap<>();
        Map<String, String> taggedAddresses = new LinkedHashMap<>();
        final Map<String, Svc> services = new LinkedHashMap<>();
        final Map<String, Check> checks = new LinkedHashMap<>();
        long createIndex;
        long modifyIndex;
    }

    /** One service instance. */
    static final class Svc {
        String id;
        String name;
        String kind = "";
        String address = "";
        List<String> tags = List.of();
        Map<String, String> meta = Map.of();
        int port;
        int passing = 1;
        int warning = 1;
        boolean enableTagOverride;
        String namespace = "default";
        String partition = "default";
        long createIndex;
        long modifyIndex;

        String scope() {
            return namespace + "/" + partition;
        }

        boolean sameDefinition(Svc o) {
            return o != null
                    && id.equals(o.id)
                    && name.equals(o.name)
                    && kind.equals(o.kind)
                    && address.equals(o.address)
                    && tags.equals(o.tags)
                    && meta.equals(o.meta)
                    && port == o.port
                    && passing == o.passing
                    && warning == o.warning
                    && enableTagOverride == o.enableTagOverride
                    && scope().equals(o.scope());
        }
    }

    /** One check (node-level when {@code serviceId} is empty). */
    static final class Check {
        String id;
        String name;
        String status = "critical";
        String notes = "";
        String output = "";
        String serviceId = "";
        String serviceName = "";
        String type = "";
        String namespace = "default";
        String partition = "default";
        Duration ttl;
        Duration interval;
        Duration timeout = Duration.ofSeconds(10);
        String http;
        String method = "GET";
        String tcp;
        ScheduledFuture<?> task;
        long createIndex;
        long modifyIndex;
    }

    ConsulTestCatalog(String localDc, List<String> otherDcs, String localNode) {
        this.localDc = localDc;
        this.localNode = localNode;
        lock.lock();
        try {
            addDatacenter(localDc, localNode);
            for (String dc : otherDcs) addDatacenter(dc, "consul-server-" + dc);
        } finally {
            lock.unlock();
        }
    }

    /** Each datacenter starts with one server node running Consul's own {@code consul} service and {@code serfHealth}. */
    private void addDatacenter(String name, String serverNode) {
        Dc dc = new Dc(name);
        dcs.put(name, dc);
        long idx = next();
        Node n = new Node();
        n.id = UUID.nameUUIDFromBytes(serverNode.getBytes()).toString();
        n.name = serverNode;
        n.address = "127.0.0.1";
        n.dc = name;
        n.meta.put("consul-network-segment", "");
        n.meta.put("consul-version", ConsulTestServer.CONSUL_VERSION);
        n.taggedAddresses.putAll(
                Map.of("lan", "127.0.0.1", "lan_ipv4", "127.0.0.1", "wan", "127.0.0.1", "wan_ipv4", "127.0.0.1"));
        n.createIndex = n.modifyIndex = idx;
        dc.nodes.put(n.name, n);
        Check serf = new Check();
        serf.id = "serfHealth";
        serf.name = "Serf Health Status";
        serf.status = "passing";
        serf.output = "Agent alive and reachable";
        serf.createIndex = serf.modifyIndex = idx;
        n.checks.put(serf.id, serf);
        Svc consul = new Svc();
        consul.id = "consul";
        consul.name = "consul";
        consul.port = 8300;
        consul.createIndex = consul.modifyIndex = idx;
        n.services.put(key(consul.scope(), consul.id), consul);
        setServicesIndex(dc, idx);
        setServiceIndex(dc, key(consul.scope(), consul.name), idx);
    }

    static String key(String scope, String name) {
        return scope + "|" + name;
    }

    private long next() {
        return ++index;
    }

    /** The current raft index (lock held). */
    long index() {
        return index;
    }

    /** The watch key of a datacenter's {@code services} table ({@code /v1/catalog/services}). */
    static String servicesWatch(Dc dc) {
        return "services|" + dc.name;
    }

    /** The watch key of one service's instances and checks ({@code /v1/health/service/<name>}). */
    static String serviceWatch(Dc dc, String scopedName) {
        return "service|" + dc.name + "|" + scopedName;
    }

    private void setServicesIndex(Dc dc, long idx) {
        dc.servicesIndex = idx;
        notify(servicesWatch(dc));
    }

    private void setServiceIndex(Dc dc, String scopedName, long idx) {
        dc.serviceIndex.put(scopedName, idx);
        notify(serviceWatch(dc, scopedName));
    }

    private void notify(String watch) {
        Condition c = watches.get(watch);
        if (c != null) c.signalAll();
    }

    // ------------------------------------------------------------------ reads (lock held)

    Dc dc(String name) {
        return dcs.get(name);
    }

    /** Index of {@code /v1/health/service/<name>}: the service's own, or the services table's when it never existed. */
    long serviceIndex(Dc dc, String scope, String name) {
        Long i = dc.serviceIndex.get(key(scope, name));
        return Math.max(1, i != null ? i : dc.servicesIndex);
    }

    /**
     * Blocks (lock held) until {@code current} moves past {@code clientIndex}, the deadline passes or the server
     * stops; a client index of 0 does not block.
     */
    void await(
            String watch,
            LongSupplier current,
            long clientIndex,
            long deadlineNanos,
            java.util.function.BooleanSupplier running)
            throws InterruptedException {
        Condition changed = watches.computeIfAbsent(watch, w -> lock.newCondition());
        while (clientIndex > 0 && current.getAsLong() <= clientIndex && running.getAsBoolean() && !closed) {
            long remaining = deadlineNanos - System.nanoTime();
            if (remaining <= 0) return;
            changed.awaitNanos(remaining);
        }
    }

    /** One service the local agent holds and syncs to the servers again after they lost it (its anti-entropy). */
    record AgentService(String dc, Svc svc, List<Check> checks) {}

    /**
     * The servers lose their state, as a server restarted without its data directory (or a cluster rebuilt from
     * nothing) does: every node, service and check is gone but the servers' own, and the raft index starts again from
     * where a new cluster's does, so it goes back. The local agent still knows its own services: they are returned,
     * for {@link #resync} to register again as the agent's anti-entropy would.
     */
    List<AgentService> loseState() {
        lock.lock();
        try {
            List<AgentService> agent = new ArrayList<>();
            for (Dc dc : dcs.values()) {
                for (Node n : List.copyOf(dc.nodes.values())) {
                    for (Check c : n.checks.values()) {
                        if (c.task != null) c.task.cancel(false);
                    }
                    boolean server = n.services.values().stream().anyMatch(v -> v.name.equals("consul"));
                    if (!server) {
                        dc.nodes.remove(n.name);
                        continue;
                    }
                    for (Svc v : List.copyOf(n.services.values())) {
                        if (v.name.equals("consul")) continue;
                        List<Check> checks = new ArrayList<>();
                        for (Check c : n.checks.values()) {
                            if (c.serviceId.equals(v.id)) checks.add(c);
                        }
                        if (n.name.equals(localNode)) agent.add(new AgentService(dc.name, v, checks));
                        n.services.remove(key(v.scope(), v.id));
                        n.checks.values().removeAll(checks);
                    }
                }
                dc.serviceIndex.clear();
            }
            index = 10;
            for (Dc dc : dcs.values()) {
                long idx = next();
                setServicesIndex(dc, idx);
                setServiceIndex(dc, key(DEFAULT_SCOPE, "consul"), idx);
            }
            return agent;
        } finally {
            lock.unlock();
        }
    }

    /** The local agent registers one of its services again (anti-entropy after the servers lost it). */
    void resync(AgentService s) {
        lock.lock();
        try {
            Dc dc = dcs.get(s.dc());
            Node n = dc.nodes.get(localNode);
            registerService(dc, n, s.svc(), s.checks());
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every blocked query (the server is stopping). */
    void wakeAll() {
        lock.lock();
        try {
            watches.values().forEach(Condition::signalAll);
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ writes

    /** A node as the local agent or a catalog registration describes it (lock held). */
    Node ensureNode(
            Dc dc, String name, String id, String address, Map<String, String> meta, Map<String, String> tagged) {
        Node n = dc.nodes.get(name);
        if (n == null) {
            long idx = next();
            n = new Node();
            n.id = id == null || id.isEmpty()
                    ? UUID.nameUUIDFromBytes(name.getBytes()).toString()
                    : id;
            n.name = name;
            n.address = address;
            n.dc = dc.name;
            if (meta != null) n.meta.putAll(meta);
            n.taggedAddresses.putAll(Map.of("lan", address, "lan_ipv4", address, "wan", address, "wan_ipv4", address));
            if (tagged != null) n.taggedAddresses.putAll(tagged);
            n.createIndex = n.modifyIndex = idx;
            dc.nodes.put(name, n);
        }
        return n;
    }

    /**
     * Adds or replaces a service on a node with its checks (lock held). An identical definition writes nothing;
     * checks not named again are kept, as the agent does without {@code replace-existing-checks}.
     */
    void registerService(Dc dc, Node node, Svc svc, List<Check> checks) {
        String k = key(svc.scope(), svc.id);
        Svc old = node.services.get(k);
        boolean same = svc.sameDefinition(old);
        List<Check> added = new ArrayList<>();
        for (Check c : checks) {
            Check existing = node.checks.get(c.id);
            if (existing == null || !sameCheck(existing, c)) added.add(c);
        }
        if (same && added.isEmpty()) return;
        long idx = next();
        if (!same) {
            svc.createIndex = old == null ? idx : old.createIndex;
            svc.modifyIndex = idx;
            node.services.put(k, svc);
            setServicesIndex(dc, idx);
            if (old != null && !old.name.equals(svc.name)) setServiceIndex(dc, key(old.scope(), old.name), idx);
        }
        for (Check c : added) {
            Check existing = node.checks.remove(c.id);
            if (existing != null && existing.task != null) existing.task.cancel(false);
            c.createIndex = existing == null ? idx : existing.createIndex;
            c.modifyIndex = idx;
            node.checks.put(c.id, c);
            schedule(dc, node, c);
        }
        setServiceIndex(dc, key(svc.scope(), svc.name), idx);
    }

    private static boolean sameCheck(Check a, Check b) {
        return a.name.equals(b.name)
                && a.serviceId.equals(b.serviceId)
                && Objects.equals(a.ttl, b.ttl)
                && Objects.equals(a.interval, b.interval)
                && Objects.equals(a.http, b.http)
                && Objects.equals(a.tcp, b.tcp);
    }

    /** Removes a service and its checks; false when the node does not have it (lock held). */
    boolean deregisterService(Dc dc, Node node, String scope, String id) {
        Svc svc = node.services.remove(key(scope, id));
        if (svc == null) return false;
        long idx = next();
        node.checks.values().removeIf(c -> {
            boolean of = c.serviceId.equals(id);
            if (of && c.task != null) c.task.cancel(false);
            return of;
        });
        setServicesIndex(dc, idx);
        setServiceIndex(dc, key(svc.scope(), svc.name), idx);
        return true;
    }

    /** Adds a check to a node (maintenance mode, catalog registration) (lock held). */
    void putCheck(Dc dc, Node node, Check c) {
        long idx = next();
        Check old = node.checks.put(c.id, c);
        if (old != null && old.task != null) old.task.cancel(false);
        c.createIndex = old == null ? idx : old.createIndex;
        c.modifyIndex = idx;
        touchServicesOf(dc, node, c, idx);
    }

    /** Removes a check; false when absent (lock held). */
    boolean removeCheck(Dc dc, Node node, String checkId) {
        Check c = node.checks.remove(checkId);
        if (c == null) return false;
        if (c.task != null) c.task.cancel(false);
        long idx = next();
        touchServicesOf(dc, node, c, idx);
        return true;
    }

    /** Removes a node with everything on it (lock held). */
    boolean removeNode(Dc dc, String name) {
        Node n = dc.nodes.remove(name);
        if (n == null) return false;
        long idx = next();
        for (Check c : n.checks.values()) {
            if (c.task != null) c.task.cancel(false);
        }
        for (Svc s : n.services.values()) setServiceIndex(dc, key(s.scope(), s.name), idx);
        if (!n.services.isEmpty()) setServicesIndex(dc, idx);
        return true;
    }

    /**
     * Sets a check's status; writes (and wakes watchers) only when the status changes: an output-only change is not
     * synced to the catalog at once, as with Consul's {@code check_update_interval} (lock held).
     */
    void setStatus(Dc dc, Node node, Check c, String status, String output) {
        if (c.status.equals(status)) return;
        long idx = next();
        c.status = status;
        c.output = output == null ? "" : output;
        c.modifyIndex = idx;
        touchServicesOf(dc, node, c, idx);
    }

    private void touchServicesOf(Dc dc, Node node, Check c, long idx) {
        for (Svc s : node.services.values()) {
            if (c.serviceId.isEmpty() || c.serviceId.equals(s.id)) setServiceIndex(dc, key(s.scope(), s.name), idx);
        }
    }

    // ------------------------------------------------------------------ agent-run checks

    private void schedule(Dc dc, Node node, Check c) {
        if (closed) return;
        if (c.ttl != null) {
            armTtl(dc, node, c);
        } else if (c.interval != null && (c.http != null || c.tcp != null)) {
            Duration every = c.interval.compareTo(MIN_INTERVAL) < 0 ? MIN_INTERVAL : c.interval;
            c.task = timers.scheduleWithFixedDelay(
                    () -> runCheck(dc, node, c), 0, every.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Restarts a TTL check's timer: without an update within the TTL it turns critical (lock held). */
    void armTtl(Dc dc, Node node, Check c) {
        if (c.task != null) c.task.cancel(false);
        if (closed) return;
        c.task = timers.schedule(
                () -> {
                    lock.lock();
                    try {
                        if (node.checks.get(c.id) == c) setStatus(dc, node, c, "critical", "TTL expired");
                    } finally {
                        lock.unlock();
                    }
                },
                c.ttl.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void runCheck(Dc dc, Node node, Check c) {
        String status;
        String output;
        if (c.http != null) {
            try {
                HttpResponse<String> r = checkClient.send(
                        HttpRequest.newBuilder(URI.create(c.http))
                                .method(c.method, HttpRequest.BodyPublishers.noBody())
                                .timeout(c.timeout)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                int code = r.statusCode();
                status = code >= 200 && code < 300 ? "passing" : code == 429 ? "warning" : "critical";
                output = "HTTP " + c.method + " " + c.http + ": " + code + " Output: " + r.body();
            } catch (IOException e) {
                status = "critical";
                output = "Get \"" + c.http + "\": " + e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        } else {
            int colon = c.tcp.lastIndexOf(':');
            try (Socket s = new Socket()) {
                s.connect(
                        new InetSocketAddress(c.tcp.substring(0, colon), Integer.parseInt(c.tcp.substring(colon + 1))),
                        (int) c.timeout.toMillis());
                status = "passing";
                output = "TCP connect " + c.tcp + ": Success";
            } catch (IOException | RuntimeException e) {
                status = "critical";
                output = "dial tcp " + c.tcp + ": " + e.getMessage();
            }
        }
        lock.lock();
        try {
            if (node.checks.get(c.id) == c) setStatus(dc, node, c, status, output);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            watches.values().forEach(Condition::signalAll);
        } finally {
            lock.unlock();
        }
        timers.shutdownNow();
        checkClient.shutdownNow();
    }
}
