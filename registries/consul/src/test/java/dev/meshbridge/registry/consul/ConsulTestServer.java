package dev.meshbridge.registry.consul;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.meshbridge.registry.consul.ConsulTestCatalog.Check;
import dev.meshbridge.registry.consul.ConsulTestCatalog.Dc;
import dev.meshbridge.registry.consul.ConsulTestCatalog.Node;
import dev.meshbridge.registry.consul.ConsulTestCatalog.Svc;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * A protocol-level Consul server for tests, following the HTTP API of Consul {@value #CONSUL_VERSION}: what a real
 * client (kiwiproject consul-client, Spring Cloud Consul, the Go {@code api} package) sends works, and answers have
 * Consul's shape.
 *
 * <p>What it keeps of Consul:
 *
 * <ol>
 *   <li>the blocking-query contract: {@code index} and {@code wait} (Go durations, default 5m, at most 10m, plus
 *       Consul's random jitter of up to wait/16); {@code X-Consul-Index} on every read, always above 0; a wait that
 *       times out answers with the same index; indexes move only on a real change (see {@link ConsulTestCatalog});
 *   <li>endpoints: {@code /v1/catalog/services}, {@code /v1/catalog/service/<name>}, {@code /v1/catalog/datacenters},
 *       {@code /v1/catalog/register}, {@code /v1/catalog/deregister}, {@code /v1/health/service/<name>} (with {@code
 *       tag}, {@code passing} and {@code filter} on {@code ==}/{@code !=} clauses joined by {@code and}), {@code
 *       /v1/agent/self}, {@code /v1/agent/services}, {@code /v1/agent/service/register}, {@code
 *       /v1/agent/service/deregister/<id>}, {@code /v1/agent/service/maintenance/<id>}, {@code /v1/agent/maintenance},
 *       {@code /v1/agent/check/pass|warn|fail/<id>}, {@code /v1/agent/check/update/<id>}, {@code
 *       /v1/status/leader}, {@code /v1/status/peers};
 *   <li>JSON: request field names matched without regard to case or underscores (Consul's decoder does the same),
 *       response field names as Consul writes them, nodes with {@code TaggedAddresses} {@code lan}/{@code wan}, health
 *       entries with the node's and the service's {@code Checks}; agent-registered check IDs {@code service:<id>}
 *       (or {@code service:<id>:<n>} for several), TTL, HTTP and TCP checks run by the agent;
 *   <li>ACLs when enabled: the token from {@code X-Consul-Token}, {@code Authorization: Bearer} or {@code ?token=};
 *       an unknown token gets 403 {@code ACL not found}; reads are filtered to what the token may read (anonymous:
 *       nothing); a write without permission gets 403 {@code Permission denied: ...};
 *   <li>datacenters by {@code ?dc=} (an unknown one gets 500 {@code No path to datacenter}); Enterprise namespace and
 *       partition ({@code ns}, {@code partition}, {@code X-Consul-Namespace}, {@code X-Consul-Partition}) scope the
 *       data in Enterprise mode and get Consul CE's 400 otherwise; as in Consul, these 400s come before the datacenter
 *       is resolved (500) and before the token is (403).
 * </ol>
 *
 * <p>{@link #stop()} takes the listener down (open connections drop, state stays), {@link #restart()} brings it back on
 * the same port, as a Consul agent restart with persisted state does; {@link #restartLosingCatalog} comes back with an
 * empty catalog and an index that went back, and the agent's services return one by one over seconds.
 */
public final class ConsulTestServer implements AutoCloseable {

    public static final String CONSUL_VERSION = "1.22.0";

    static {
        // Consul is written in Go, whose sockets disable Nagle's algorithm; without this the JDK server holds back the
        // tail of larger answers for the client's delayed ACK (some 40 ms), which Consul never does.
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);
    static final Duration MAX_WAIT = Duration.ofMinutes(10);
    static final String ANONYMOUS_ACCESSOR = "00000000-0000-0000-0000-000000000002";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern GO_DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");
    private static final Pattern CLAUSE = Pattern.compile("\\s*([A-Za-z.]+)\\s*(==|!=)\\s*\"([^\"]*)\"\\s*");

    /** What a token may do: read services with one of {@code readPrefixes} ({@code ""} is every service), write them. */
    public record Policy(Set<String> readPrefixes, Set<String> writePrefixes, boolean agentRead) {
        public static final Policy MANAGEMENT = new Policy(Set.of(""), Set.of(""), true);
        public static final Policy NONE = new Policy(Set.of(), Set.of(), false);

        public static Policy readOnly(String... prefixes) {
            return new Policy(Set.of(prefixes), Set.of(), false);
        }

        boolean mayRead(String service) {
            return readPrefixes.stream().anyMatch(service::startsWith);
        }

        boolean mayWrite(String service) {
            return writePrefixes.stream().anyMatch(service::startsWith);
        }
    }

    private record Token(String accessorId, Policy policy) {}

    /** Configures a server before it starts. */
    public static final class Builder {
        private String localDc = "dc1";
        private final List<String> otherDcs = new ArrayList<>();
        private final Map<String, Token> tokens = new LinkedHashMap<>();
        private boolean acl;
        private boolean enterprise;
        private SSLContext tls;
        private boolean needClientAuth;

        public Builder datacenter(String name) {
            localDc = name;
            return this;
        }

        /** Another datacenter this server answers for (as WAN-federated servers do through {@code ?dc=}). */
        public Builder federatedDatacenter(String name) {
            otherDcs.add(name);
            return this;
        }

        /** Enables ACLs with default policy deny; {@code managementToken} may do everything. */
        public Builder acl(String managementToken) {
            acl = true;
            return token(managementToken, Policy.MANAGEMENT);
        }

        public Builder token(String secret, Policy policy) {
            tokens.put(
                    secret, new Token(UUID.nameUUIDFromBytes(secret.getBytes()).toString(), policy));
            return this;
        }

        /** Accept namespaces and partitions, as Consul Enterprise does. */
        public Builder enterprise() {
            enterprise = true;
            return this;
        }

        /** Serve HTTPS only, as Consul with {@code ports.https} and {@code verify_incoming}. */
        public Builder tls(SSLContext context, boolean needClientAuth) {
            this.tls = context;
            this.needClientAuth = needClientAuth;
            return this;
        }

        public ConsulTestServer start() throws IOException {
            ConsulTestServer s = new ConsulTestServer(this);
            s.listen(0);
            return s;
        }
    }

    private final ConsulTestCatalog catalog;
    private final Map<String, Token> tokens;
    private final boolean acl;
    private final boolean enterprise;
    private final SSLContext tls;
    private final boolean needClientAuth;
    private final ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
    private volatile HttpServer server;
    private volatile boolean running;
    private int port;

    private ConsulTestServer(Builder b) {
        this.catalog = new ConsulTestCatalog(b.localDc, b.otherDcs, "consul-test-agent");
        this.tokens = Map.copyOf(b.tokens);
        this.acl = b.acl;
        this.enterprise = b.enterprise;
        this.tls = b.tls;
        this.needClientAuth = b.needClientAuth;
    }

    public static Builder builder() {
        return new Builder();
    }

    private synchronized void listen(int wantedPort) throws IOException {
        InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), wantedPort);
        HttpServer s;
        if (tls != null) {
            HttpsServer https = HttpsServer.create(at, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(tls) {
                @Override
                public void configure(HttpsParameters params) {
                    SSLParameters p = tls.getDefaultSSLParameters();
                    p.setNeedClientAuth(needClientAuth);
                    params.setSSLParameters(p);
                }
            });
            s = https;
        } else {
            s = HttpServer.create(at, 64);
        }
        s.createContext("/", this::handle);
        s.setExecutor(handlers);
        s.start();
        port = s.getAddress().getPort();
        server = s;
        running = true;
    }

    /** {@code 127.0.0.1:<port>}. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public String localDatacenter() {
        return catalog.localDc;
    }

    /** Takes the listener down and drops open connections, keeping all state (Consul is down). */
    public synchronized void stop() {
        HttpServer s = server;
        if (s == null) return;
        running = false;
        server = null;
        catalog.wakeAll();
        s.stop(0);
    }

    /** Listens again on the same port, with the state it had. */
    public synchronized void restart() throws IOException {
        if (server != null) return;
        listen(port);
    }

    /**
     * A restart without the servers' data: down for {@code down}, back with an empty catalog and a raft index that
     * went back, then the local agent's services come back one per {@code every}, as the agent's anti-entropy sync
     * registers them again. Returns at once. Services registered only through the catalog API do not come back (no
     * agent holds them), as in Consul.
     */
    public void restartLosingCatalog(Duration down, Duration every) {
        CompletableFuture<Void> afterDown = new CompletableFuture<>();
        afterDown.completeAsync(() -> null, CompletableFuture.delayedExecutor(down.toMillis(), TimeUnit.MILLISECONDS));
        restartLosingCatalog(down, every, 0, afterDown);
    }

    /**
     * As {@link #restartLosingCatalog(Duration, Duration)}, but the agent registers only its first {@code first}
     * services again after the restart, and the others once {@code refill} completes, so a test can keep the catalog
     * partial until a watcher has read it, whatever the watcher's reconnect timing.
     */
    public void restartLosingCatalog(Duration down, Duration every, int first, CompletableFuture<?> refill) {
        stop();
        List<ConsulTestCatalog.AgentService> agent = catalog.loseState();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "consul-test-anti-entropy");
            t.setDaemon(true);
            return t;
        });
        CompletableFuture<Void> up = new CompletableFuture<>();
        timer.schedule(
                () -> {
                    try {
                        restart();
                        up.complete(null);
                    } catch (IOException e) {
                        up.completeExceptionally(e);
                        throw new UncheckedIOException(e);
                    }
                },
                down.toMillis(),
                TimeUnit.MILLISECONDS);
        int early = Math.min(first, agent.size());
        up.thenRun(() -> {
            for (int i = 0; i < early; i++) {
                ConsulTestCatalog.AgentService s = agent.get(i);
                timer.schedule(
                        () -> catalog.resync(s), every.multipliedBy(i + 1).toMillis(), TimeUnit.MILLISECONDS);
            }
        });
        CompletableFuture.allOf(up, refill).thenRun(() -> {
            for (int i = early; i < agent.size(); i++) {
                ConsulTestCatalog.AgentService s = agent.get(i);
                timer.schedule(
                        () -> catalog.resync(s), every.multipliedBy(i + 1).toMillis(), TimeUnit.MILLISECONDS);
            }
            timer.schedule(timer::shutdown, every.multipliedBy(agent.size() + 1).toMillis(), TimeUnit.MILLISECONDS);
        });
    }

    @Override
    public synchronized void close() {
        stop();
        catalog.close();
        handlers.shutdownNow();
    }

    // ------------------------------------------------------------------ HTTP plumbing

    private record Request(
            String method,
            String path,
            Map<String, List<String>> query,
            Map<String, List<String>> headers,
            byte[] body) {

        String param(String name) {
            List<String> v = query.get(name);
            return v == null || v.isEmpty() ? null : v.get(0);
        }

        boolean flag(String name) {
            return query.containsKey(name);
        }

        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey() != null
                        && e.getKey().equalsIgnoreCase(name)
                        && !e.getValue().isEmpty()) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }

        JsonNode json() {
            if (body.length == 0) return JSON.createObjectNode();
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new HttpError(400, "Request decode failed: " + e.getMessage());
            }
        }
    }

    private record Response(int code, byte[] body, String contentType, Map<String, String> headers) {
        static Response json(Object value) {
            try {
                return new Response(200, JSON.writeValueAsBytes(value), "application/json", new LinkedHashMap<>());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        static Response text(int code, String text) {
            return new Response(
                    code, text.getBytes(StandardCharsets.UTF_8), "text/plain; charset=utf-8", new LinkedHashMap<>());
        }

        Response header(String name, String value) {
            headers.put(name, value);
            return this;
        }
    }

    /** An error Consul answers with a status code and a plain-text reason. */
    private static final class HttpError extends RuntimeException {
        final int code;

        HttpError(int code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }

    private final java.util.Set<java.math.BigInteger> clientSerials =
            java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The serial numbers of the client certificates presented so far (TLS with client authentication). */
    public java.util.Set<java.math.BigInteger> clientSerials() {
        return java.util.Set.copyOf(clientSerials);
    }

    private void handle(HttpExchange ex) {
        if (ex instanceof com.sun.net.httpserver.HttpsExchange hx) {
            try {
                var peer = hx.getSSLSession().getPeerCertificates();
                if (peer.length > 0 && peer[0] instanceof java.security.cert.X509Certificate x)
                    clientSerials.add(x.getSerialNumber());
            } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
                // no client certificate
            }
        }
        try (ex) {
            Request req = new Request(
                    ex.getRequestMethod(),
                    ex.getRequestURI().getPath(),
                    parseQuery(ex.getRequestURI().getRawQuery()),
                    ex.getRequestHeaders(),
                    ex.getRequestBody().readAllBytes());
            Response res;
            try {
                res = route(req);
            } catch (HttpError e) {
                res = Response.text(e.code, e.getMessage());
            } catch (RuntimeException e) {
                res = Response.text(500, e.toString());
            }
            if (!running) return; // the listener went down meanwhile: the connection is gone
            res.headers().forEach((k, v) -> ex.getResponseHeaders().set(k, v));
            ex.getResponseHeaders().set("Content-Type", res.contentType());
            ex.getResponseHeaders().set("Vary", "Accept-Encoding");
            ex.sendResponseHeaders(res.code(), res.body().length == 0 ? -1 : res.body().length);
            if (res.body().length > 0) {
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(res.body());
                }
            }
        } catch (IOException e) {
            // client went away or the server stopped
        }
    }

    private static Map<String, List<String>> parseQuery(String raw) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) return out;
        for (String part : raw.split("&")) {
            if (part.isEmpty()) continue;
            int eq = part.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
            out.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
        }
        return out;
    }

    private Response route(Request r) {
        String p = r.path();
        if (p.equals("/v1/status/leader")) return read(r, () -> Response.json("127.0.0.1:8300"));
        if (p.equals("/v1/status/peers")) return read(r, () -> Response.json(List.of("127.0.0.1:8300")));
        if (p.equals("/v1/agent/self")) return agentSelf(r);
        if (p.equals("/v1/agent/services")) return agentServices(r);
        if (p.equals("/v1/agent/service/register")) return agentRegister(r);
        if (p.startsWith("/v1/agent/service/deregister/"))
            return agentDeregister(r, tail(p, "/v1/agent/service/deregister/"));
        if (p.startsWith("/v1/agent/service/maintenance/"))
            return serviceMaintenance(r, tail(p, "/v1/agent/service/maintenance/"));
        if (p.equals("/v1/agent/maintenance")) return nodeMaintenance(r);
        if (p.startsWith("/v1/agent/check/update/")) return checkUpdate(r, tail(p, "/v1/agent/check/update/"));
        Matcher ttl = Pattern.compile("/v1/agent/check/(pass|warn|fail)/(.+)").matcher(p);
        if (ttl.matches()) return checkTtl(r, ttl.group(1), ttl.group(2));
        if (p.equals("/v1/catalog/datacenters")) return read(r, () -> Response.json(datacenters()));
        if (p.equals("/v1/catalog/services")) return catalogServices(r);
        if (p.startsWith("/v1/catalog/service/")) return catalogService(r, tail(p, "/v1/catalog/service/"));
        if (p.equals("/v1/catalog/register")) return catalogRegister(r);
        if (p.equals("/v1/catalog/deregister")) return catalogDeregister(r);
        if (p.startsWith("/v1/health/service/")) return healthService(r, tail(p, "/v1/health/service/"));
        return Response.text(404, "404 page not found");
    }

    private static String tail(String path, String prefix) {
        String t = path.substring(prefix.length());
        if (t.isEmpty()) throw new HttpError(400, "Missing name");
        return t;
    }

    private static void method(Request r, String... allowed) {
        for (String m : allowed) {
            if (m.equals(r.method())) return;
        }
        throw new HttpError(405, "method " + r.method() + " not allowed");
    }

    private Response read(Request r, Supplier<Response> answer) {
        method(r, "GET");
        return answer.get();
    }

    /** Runs {@code body} holding the catalog lock. */
    private <T> T locked(Supplier<T> body) {
        catalog.lock.lock();
        try {
            return body.get();
        } finally {
            catalog.lock.unlock();
        }
    }

    /** Runs {@code body} on the local agent's datacenter and node, holding the catalog lock. */
    private <T> T onAgent(java.util.function.BiFunction<Dc, Node, T> body) {
        return locked(() -> {
            Dc dc = catalog.dc(catalog.localDc);
            return body.apply(dc, dc.nodes.get(catalog.localNode));
        });
    }

    // ------------------------------------------------------------------ ACL, scope, datacenter

    private Token token(Request r) {
        String secret = r.header("X-Consul-Token");
        if (secret == null) {
            String auth = r.header("Authorization");
            if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7))
                secret = auth.substring(7).trim();
        }
        if (secret == null) secret = r.param("token");
        if (!acl) return new Token("anonymous", Policy.MANAGEMENT);
        if (secret == null || secret.isEmpty()) return new Token(ANONYMOUS_ACCESSOR, Policy.NONE);
        Token t = tokens.get(secret);
        if (t == null) throw new HttpError(403, "ACL not found");
        return t;
    }

    private static HttpError denied(Token t, String permission, String on) {
        return new HttpError(
                403,
                "Permission denied: token with AccessorID '" + t.accessorId() + "' lacks permission '" + permission
                        + "' on \"" + on + "\"");
    }

    /** {@code namespace/partition} of the request (body fields may override in Enterprise mode). */
    private String scope(Request r, JsonNode body) {
        String ns = firstNonEmpty(r.param("ns"), r.header("X-Consul-Namespace"), text(body, "Namespace", null));
        String partition =
                firstNonEmpty(r.param("partition"), r.header("X-Consul-Partition"), text(body, "Partition", null));
        if (!enterprise) {
            if (r.header("X-Consul-Namespace") != null) {
                throw new HttpError(
                        400, "Invalid header: \"X-Consul-Namespace\" - Namespaces are a Consul Enterprise feature");
            }
            if (r.param("ns") != null && !r.param("ns").isEmpty()) {
                throw new HttpError(
                        400, "Invalid query parameter: \"ns\" - Namespaces are a Consul Enterprise feature");
            }
            if (r.header("X-Consul-Partition") != null) {
                throw new HttpError(
                        400, "Invalid header: \"X-Consul-Partition\" - Partitions are a Consul Enterprise feature");
            }
            if (r.param("partition") != null && !r.param("partition").isEmpty()) {
                throw new HttpError(
                        400, "Invalid query parameter: \"partition\" - Partitions are a Consul Enterprise feature");
            }
            return ConsulTestCatalog.DEFAULT_SCOPE;
        }
        return (ns == null ? "default" : ns) + "/" + (partition == null ? "default" : partition);
    }

    private static String firstNonEmpty(String... values) {
        for (String v : values) {
            if (v != null && !v.isEmpty()) return v;
        }
        return null;
    }

    private Dc datacenter(Request r, String fromBody) {
        String name = firstNonEmpty(r.param("dc"), fromBody);
        Dc dc = catalog.dc(name == null ? catalog.localDc : name);
        if (dc == null) throw new HttpError(500, "No path to datacenter");
        return dc;
    }

    private List<String> datacenters() {
        return locked(() -> {
            return List.copyOf(catalog.dcs.keySet());
        });
    }

    // ------------------------------------------------------------------ blocking reads

    /**
     * Runs a read under Consul's blocking contract: waits (lock held) until the index passes the client's or the wait
     * runs out, then answers with the body and the index of the same moment.
     */
    private Response blocking(Request r, String watch, LongSupplier index, Supplier<Object> body) {
        long clientIndex = 0;
        String idx = r.param("index");
        if (idx != null && !idx.isEmpty()) {
            try {
                clientIndex = Long.parseUnsignedLong(idx);
            } catch (NumberFormatException e) {
                throw new HttpError(400, "Invalid index");
            }
        }
        Duration wait = DEFAULT_WAIT;
        String w = r.param("wait");
        if (w != null && !w.isEmpty()) {
            wait = parseGoDuration(w);
            if (wait == null) throw new HttpError(400, "Invalid wait time");
            if (wait.compareTo(MAX_WAIT) > 0) wait = MAX_WAIT;
        }
        long jitter = wait.toNanos() / 16 > 0 ? ThreadLocalRandom.current().nextLong(wait.toNanos() / 16) : 0;
        long deadline = System.nanoTime() + wait.toNanos() + jitter;
        long fromIndex = clientIndex;
        return locked(() -> {
            try {
                catalog.await(watch, index, fromIndex, deadline, () -> running);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HttpError(500, "interrupted");
            }
            long current = Math.max(1, index.getAsLong());
            Object value = body.get();
            String consistency = r.flag("stale") ? "stale" : r.flag("consistent") ? "consistent" : "leader";
            return Response.json(value)
                    .header("X-Consul-Index", Long.toString(current))
                    .header("X-Consul-KnownLeader", "true")
                    .header("X-Consul-LastContact", "0")
                    .header("X-Consul-Effective-Consistency", consistency);
        });
    }

    private Response catalogServices(Request r) {
        method(r, "GET");
        String scope = scope(r, null);
        Dc dc = datacenter(r, null);
        Token t = token(r);
        boolean[] filtered = {false};
        Response res = blocking(r, ConsulTestCatalog.servicesWatch(dc), () -> dc.servicesIndex, () -> {
            Map<String, Set<String>> out = new TreeMap<>();
            for (Node n : dc.nodes.values()) {
                for (Svc s : n.services.values()) {
                    if (!s.scope().equals(scope)) continue;
                    if (!t.policy().mayRead(s.name)) {
                        filtered[0] = true;
                        continue;
                    }
                    out.computeIfAbsent(s.name, x -> new TreeSet<>()).addAll(s.tags);
                }
            }
            return out;
        });
        return filtered[0] ? res.header("X-Consul-Results-Filtered-By-ACLs", "true") : res;
    }

    private Response healthService(Request r, String name) {
        method(r, "GET");
        String scope = scope(r, null);
        Dc dc = datacenter(r, null);
        Token t = token(r);
        List<String> tags = r.query().getOrDefault("tag", List.of());
        boolean passingOnly = r.flag("passing") && !"false".equals(r.param("passing"));
        Predicate<ObjectNode> filter = filter(r.param("filter"));
        boolean readable = t.policy().mayRead(name);
        Response res = blocking(
                r,
                ConsulTestCatalog.serviceWatch(dc, ConsulTestCatalog.key(scope, name)),
                () -> catalog.serviceIndex(dc, scope, name),
                () -> {
                    ArrayNode out = JSON.createArrayNode();
                    if (!readable) return out;
                    for (Node n : dc.nodes.values()) {
                        for (Svc s : n.services.values()) {
                            if (!s.name.equals(name) || !s.scope().equals(scope) || !s.tags.containsAll(tags)) continue;
                            ArrayNode checks = JSON.createArrayNode();
                            boolean allPassing = true;
                            for (Check c : n.checks.values()) {
                                if (!c.serviceId.isEmpty() && !c.serviceId.equals(s.id)) continue;
                                checks.add(checkJson(n, c, s));
                                allPassing &= c.status.equals("passing");
                            }
                            if (passingOnly && !allPassing) continue;
                            ObjectNode entry = JSON.createObjectNode();
                            entry.set("Node", nodeJson(n));
                            entry.set("Service", serviceJson(s));
                            entry.set("Checks", checks);
                            if (filter.test(entry)) out.add(entry);
                        }
                    }
                    return out;
                });
        return readable ? res : res.header("X-Consul-Results-Filtered-By-ACLs", "true");
    }

    private Response catalogService(Request r, String name) {
        method(r, "GET");
        String scope = scope(r, null);
        Dc dc = datacenter(r, null);
        Token t = token(r);
        List<String> tags = r.query().getOrDefault("tag", List.of());
        boolean readable = t.policy().mayRead(name);
        return blocking(
                r,
                ConsulTestCatalog.serviceWatch(dc, ConsulTestCatalog.key(scope, name)),
                () -> catalog.serviceIndex(dc, scope, name),
                () -> {
                    ArrayNode out = JSON.createArrayNode();
                    if (!readable) return out;
                    for (Node n : dc.nodes.values()) {
                        for (Svc s : n.services.values()) {
                            if (!s.name.equals(name) || !s.scope().equals(scope) || !s.tags.containsAll(tags)) continue;
                            ObjectNode o = JSON.createObjectNode();
                            o.put("ID", n.id);
                            o.put("Node", n.name);
                            o.put("Address", n.address);
                            o.put("Datacenter", n.dc);
                            o.set("TaggedAddresses", JSON.valueToTree(n.taggedAddresses));
                            o.set("NodeMeta", JSON.valueToTree(n.meta));
                            o.put("ServiceKind", s.kind);
                            o.put("ServiceID", s.id);
                            o.put("ServiceName", s.name);
                            o.set("ServiceTags", JSON.valueToTree(s.tags));
                            o.put("ServiceAddress", s.address);
                            o.set("ServiceWeights", weights(s));
                            o.set("ServiceMeta", JSON.valueToTree(s.meta));
                            o.put("ServicePort", s.port);
                            o.put("ServiceEnableTagOverride", s.enableTagOverride);
                            o.set("ServiceProxy", proxy());
                            o.set("ServiceConnect", JSON.createObjectNode());
                            o.put("ServicePeerName", "");
                            if (enterprise) {
                                o.put("Namespace", s.namespace);
                                o.put("Partition", s.partition);
                            }
                            o.put("CreateIndex", s.createIndex);
                            o.put("ModifyIndex", s.modifyIndex);
                            out.add(o);
                        }
                    }
                    return out;
                });
    }

    private Response agentSelf(Request r) {
        method(r, "GET");
        Token t = token(r);
        if (!t.policy().agentRead()) throw denied(t, "agent:read", catalog.localNode);
        return locked(() -> {
            Node n = catalog.dc(catalog.localDc).nodes.get(catalog.localNode);
            ObjectNode self = JSON.createObjectNode();
            ObjectNode config = self.putObject("Config");
            config.put("Datacenter", catalog.localDc);
            config.put("PrimaryDatacenter", catalog.localDc);
            config.put("NodeName", n.name);
            config.put("NodeID", n.id);
            config.put("Revision", "test");
            config.put("Server", true);
            config.put("Version", CONSUL_VERSION);
            ObjectNode member = self.putObject("Member");
            member.put("Name", n.name);
            member.put("Addr", n.address);
            member.put("Port", 8301);
            ObjectNode tags = member.putObject("Tags");
            tags.put("dc", catalog.localDc);
            tags.put("role", "consul");
            tags.put("build", CONSUL_VERSION + ":test");
            tags.put("port", "8300");
            member.put("Status", 1);
            member.put("ProtocolMin", 1);
            member.put("ProtocolMax", 5);
            member.put("ProtocolCur", 2);
            member.put("DelegateMin", 2);
            member.put("DelegateMax", 5);
            member.put("DelegateCur", 4);
            self.set("Meta", JSON.valueToTree(n.meta));
            return Response.json(self);
        });
    }

    private Response agentServices(Request r) {
        method(r, "GET");
        Token t = token(r);
        String scope = scope(r, null);
        return locked(() -> {
            Node n = catalog.dc(catalog.localDc).nodes.get(catalog.localNode);
            ObjectNode out = JSON.createObjectNode();
            for (Svc s : n.services.values()) {
                if (s.scope().equals(scope) && t.policy().mayRead(s.name)) {
                    ObjectNode o = serviceJson(s);
                    o.put("Datacenter", catalog.localDc);
                    out.set(s.id, o);
                }
            }
            return Response.json(out);
        });
    }

    // ------------------------------------------------------------------ writes

    private Response agentRegister(Request r) {
        method(r, "PUT");
        Token t = token(r);
        JsonNode b = r.json();
        String scope = scope(r, b);
        Svc s = service(b, "Name", scope);
        if (!t.policy().mayWrite(s.name)) throw denied(t, "service:write", s.name);
        List<Check> checks = new ArrayList<>();
        JsonNode single = field(b, "Check");
        JsonNode many = field(b, "Checks");
        if (single != null && single.isObject()) checks.add(check(single, s, "service:" + s.id));
        if (many != null && many.isArray()) {
            int i = 1;
            for (JsonNode c : many) checks.add(check(c, s, "service:" + s.id + ":" + i++));
        }
        onAgent((dc, node) -> {
            catalog.registerService(dc, node, s, checks);
            return null;
        });
        return Response.text(200, "");
    }

    private Svc service(JsonNode b, String nameField, String scope) {
        Svc s = new Svc();
        s.name = text(b, nameField, "");
        if (s.name.isEmpty()) throw new HttpError(400, "Missing service name");
        s.id = text(b, "ID", s.name);
        if (s.id.isEmpty()) s.id = s.name;
        s.kind = text(b, "Kind", "");
        s.address = text(b, "Address", "");
        s.port = (int) number(b, "Port", 0);
        s.tags = strings(b, "Tags");
        s.meta = stringMap(b, "Meta");
        s.enableTagOverride = bool(b, "EnableTagOverride");
        JsonNode w = field(b, "Weights");
        if (w != null && w.isObject()) {
            s.passing = (int) number(w, "Passing", 1);
            s.warning = (int) number(w, "Warning", 1);
            if (s.passing < 1) throw new HttpError(400, "Passing must be greater than 0");
            if (s.warning < 0) throw new HttpError(400, "Warning must be greater or equal than 0");
        }
        int slash = scope.indexOf('/');
        s.namespace = scope.substring(0, slash);
        s.partition = scope.substring(slash + 1);
        return s;
    }

    private Check check(JsonNode c, Svc s, String defaultId) {
        Check k = new Check();
        k.id = text(c, "CheckID", text(c, "ID", defaultId));
        if (k.id.isEmpty()) k.id = defaultId;
        k.name = text(c, "Name", "Service '" + s.name + "' check");
        k.serviceId = s.id;
        k.serviceName = s.name;
        k.namespace = s.namespace;
        k.partition = s.partition;
        k.notes = text(c, "Notes", "");
        k.status = text(c, "Status", "critical");
        if (!Set.of("passing", "warning", "critical").contains(k.status))
            throw new HttpError(400, "Invalid check status");
        JsonNode args = field(c, "Args");
        JsonNode script = field(c, "Script");
        if ((args != null && args.isArray() && !args.isEmpty())
                || (script != null && !script.asText("").isEmpty())) {
            throw new HttpError(
                    400,
                    "Scripts are disabled on this agent; to enable, configure 'enable_script_checks' or"
                            + " 'enable_local_script_checks' to true");
        }
        k.ttl = duration(c, "TTL");
        k.interval = duration(c, "Interval");
        Duration timeout = duration(c, "Timeout");
        if (timeout != null) k.timeout = timeout;
        k.http = text(c, "HTTP", null);
        k.method = text(c, "Method", "GET");
        k.tcp = text(c, "TCP", null);
        if (k.ttl != null) {
            k.type = "ttl";
        } else if (k.http != null || k.tcp != null) {
            if (k.interval == null || k.interval.isZero()) {
                throw new HttpError(
                        400, "Invalid check: Interval must be > 0 for Script, HTTP, H2PING, TCP or UDP checks");
            }
            k.type = k.http != null ? "http" : "tcp";
        } else {
            throw new HttpError(400, "Invalid check: TTL must be > 0 for TTL checks");
        }
        return k;
    }

    private Response agentDeregister(Request r, String id) {
        method(r, "PUT");
        Token t = token(r);
        String scope = scope(r, null);
        return onAgent((dc, node) -> {
            Svc s = node.services.get(ConsulTestCatalog.key(scope, id));
            if (s == null) {
                throw new HttpError(
                        404,
                        "Unknown service ID \"" + id
                                + "\". Ensure that the service ID is passed, not the service name.");
            }
            if (!t.policy().mayWrite(s.name)) throw denied(t, "service:write", s.name);
            catalog.deregisterService(dc, node, scope, id);
            return Response.text(200, "");
        });
    }

    private Response serviceMaintenance(Request r, String id) {
        method(r, "PUT");
        Token t = token(r);
        String scope = scope(r, null);
        String enable = r.param("enable");
        if (enable == null) throw new HttpError(400, "Missing value for enable");
        return onAgent((dc, node) -> {
            Svc s = node.services.get(ConsulTestCatalog.key(scope, id));
            if (s == null) throw new HttpError(404, "Unknown service ID \"" + id + "\"");
            if (!t.policy().mayWrite(s.name)) throw denied(t, "service:write", s.name);
            String checkId = "_service_maintenance:" + id;
            if (Boolean.parseBoolean(enable)) {
                Check c = new Check();
                c.id = checkId;
                c.name = "Service Maintenance Mode";
                c.status = "critical";
                c.serviceId = s.id;
                c.serviceName = s.name;
                c.type = "maintenance";
                String reason = r.param("reason");
                c.notes = reason == null || reason.isEmpty()
                        ? "Maintenance mode is enabled for this service, but no reason was provided. This is a default"
                                + " message."
                        : reason;
                if (!node.checks.containsKey(checkId)) catalog.putCheck(dc, node, c);
            } else {
                catalog.removeCheck(dc, node, checkId);
            }
            return Response.text(200, "");
        });
    }

    private Response nodeMaintenance(Request r) {
        method(r, "PUT");
        Token t = token(r);
        if (!t.policy().mayWrite("")) throw denied(t, "node:write", catalog.localNode);
        String enable = r.param("enable");
        if (enable == null) throw new HttpError(400, "Missing value for enable");
        return onAgent((dc, node) -> {
            if (Boolean.parseBoolean(enable)) {
                Check c = new Check();
                c.id = "_node_maintenance";
                c.name = "Node Maintenance Mode";
                c.status = "critical";
                c.type = "maintenance";
                c.notes = r.param("reason") == null ? "" : r.param("reason");
                if (!node.checks.containsKey(c.id)) catalog.putCheck(dc, node, c);
            } else {
                catalog.removeCheck(dc, node, "_node_maintenance");
            }
            return Response.text(200, "");
        });
    }

    private Response checkTtl(Request r, String state, String checkId) {
        method(r, "PUT");
        Token t = token(r);
        String status = switch (state) {
            case "pass" -> "passing";
            case "warn" -> "warning";
            default -> "critical";
        };
        return updateCheck(t, checkId, status, r.param("note"));
    }

    private Response checkUpdate(Request r, String checkId) {
        method(r, "PUT");
        Token t = token(r);
        JsonNode b = r.json();
        String status = text(b, "Status", "");
        if (!Set.of("passing", "warning", "critical").contains(status))
            throw new HttpError(400, "Invalid check status");
        return updateCheck(t, checkId, status, text(b, "Output", ""));
    }

    private Response updateCheck(Token t, String checkId, String status, String output) {
        return onAgent((dc, node) -> {
            Check c = node.checks.get(checkId);
            if (c == null) {
                throw new HttpError(
                        404,
                        "Unknown check ID \"" + checkId
                                + "\". Ensure that the check ID is passed, not the check name.");
            }
            if (!t.policy().mayWrite(c.serviceName)) throw denied(t, "service:write", c.serviceName);
            if (c.ttl == null) throw new HttpError(500, "CheckID \"" + checkId + "\" does not have associated TTL");
            catalog.setStatus(dc, node, c, status, output);
            catalog.armTtl(dc, node, c);
            return Response.text(200, "");
        });
    }

    private Response catalogRegister(Request r) {
        method(r, "PUT");
        Token t = token(r);
        JsonNode b = r.json();
        String scope = scope(r, field(b, "Service") == null ? b : field(b, "Service"));
        String nodeName = text(b, "Node", "");
        String address = text(b, "Address", "");
        if (nodeName.isEmpty()) throw new HttpError(400, "Must provide node");
        if (address.isEmpty()) throw new HttpError(400, "Must provide address");
        JsonNode sb = field(b, "Service");
        Svc s = sb == null || !sb.isObject() ? null : service(sb, "Service", scope);
        if (!t.policy().mayWrite(s == null ? "" : s.name)) throw denied(t, "node:write", nodeName);
        List<Check> checks = new ArrayList<>();
        JsonNode single = field(b, "Check");
        JsonNode many = field(b, "Checks");
        List<JsonNode> defs = new ArrayList<>();
        if (single != null && single.isObject()) defs.add(single);
        if (many != null && many.isArray()) many.forEach(defs::add);
        for (JsonNode c : defs) {
            Check k = new Check();
            k.id = text(c, "CheckID", "");
            if (k.id.isEmpty()) throw new HttpError(400, "Missing check ID");
            k.name = text(c, "Name", k.id);
            k.status = text(c, "Status", "critical");
            k.notes = text(c, "Notes", "");
            k.output = text(c, "Output", "");
            k.serviceId = text(c, "ServiceID", "");
            if (s != null && k.serviceId.equals(s.id)) k.serviceName = s.name;
            checks.add(k);
        }
        return locked(() -> {
            Dc dc = datacenter(r, text(b, "Datacenter", null));
            Node node = catalog.ensureNode(
                    dc,
                    nodeName,
                    text(b, "ID", null),
                    address,
                    stringMap(b, "NodeMeta"),
                    stringMap(b, "TaggedAddresses"));
            if (s != null) {
                catalog.registerService(dc, node, s, List.of());
            }
            for (Check k : checks) {
                Check existing = node.checks.get(k.id);
                if (existing == null) {
                    catalog.putCheck(dc, node, k);
                } else {
                    catalog.setStatus(dc, node, existing, k.status, k.output);
                }
            }
            return Response.json(true);
        });
    }

    private Response catalogDeregister(Request r) {
        method(r, "PUT");
        Token t = token(r);
        JsonNode b = r.json();
        String scope = scope(r, b);
        String nodeName = text(b, "Node", "");
        if (nodeName.isEmpty()) throw new HttpError(400, "Must provide node");
        if (!t.policy().mayWrite("")) throw denied(t, "node:write", nodeName);
        return locked(() -> {
            Dc dc = datacenter(r, text(b, "Datacenter", null));
            Node node = dc.nodes.get(nodeName);
            if (node == null) return Response.json(true);
            String serviceId = text(b, "ServiceID", "");
            String checkId = text(b, "CheckID", "");
            if (!serviceId.isEmpty()) {
                catalog.deregisterService(dc, node, scope, serviceId);
            } else if (!checkId.isEmpty()) {
                catalog.removeCheck(dc, node, checkId);
            } else {
                catalog.removeNode(dc, nodeName);
            }
            return Response.json(true);
        });
    }

    // ------------------------------------------------------------------ JSON rendering

    private ObjectNode nodeJson(Node n) {
        ObjectNode o = JSON.createObjectNode();
        o.put("ID", n.id);
        o.put("Node", n.name);
        o.put("Address", n.address);
        o.put("Datacenter", n.dc);
        o.set("TaggedAddresses", JSON.valueToTree(n.taggedAddresses));
        o.set("Meta", JSON.valueToTree(n.meta));
        if (enterprise) o.put("Partition", "default");
        o.put("CreateIndex", n.createIndex);
        o.put("ModifyIndex", n.modifyIndex);
        return o;
    }

    private ObjectNode serviceJson(Svc s) {
        ObjectNode o = JSON.createObjectNode();
        if (!s.kind.isEmpty()) o.put("Kind", s.kind);
        o.put("ID", s.id);
        o.put("Service", s.name);
        o.set("Tags", JSON.valueToTree(s.tags));
        o.put("Address", s.address);
        o.set("Meta", JSON.valueToTree(s.meta));
        o.put("Port", s.port);
        o.set("Weights", weights(s));
        o.put("EnableTagOverride", s.enableTagOverride);
        o.set("Proxy", proxy());
        o.set("Connect", JSON.createObjectNode());
        o.put("PeerName", "");
        if (enterprise) {
            o.put("Namespace", s.namespace);
            o.put("Partition", s.partition);
        }
        o.put("CreateIndex", s.createIndex);
        o.put("ModifyIndex", s.modifyIndex);
        return o;
    }

    private ObjectNode checkJson(Node n, Check c, Svc s) {
        ObjectNode o = JSON.createObjectNode();
        o.put("Node", n.name);
        o.put("CheckID", c.id);
        o.put("Name", c.name);
        o.put("Status", c.status);
        o.put("Notes", c.notes);
        o.put("Output", c.output);
        o.put("ServiceID", c.serviceId);
        o.put("ServiceName", c.serviceName);
        o.set("ServiceTags", JSON.valueToTree(c.serviceId.isEmpty() ? List.of() : s.tags));
        o.put("Type", c.type);
        o.put("Interval", c.interval == null ? "" : goDuration(c.interval));
        o.put("Timeout", c.interval == null ? "" : goDuration(c.timeout));
        o.put("ExposedPort", 0);
        o.set("Definition", JSON.createObjectNode());
        if (enterprise) {
            o.put("Namespace", c.namespace);
            o.put("Partition", c.partition);
        }
        o.put("CreateIndex", c.createIndex);
        o.put("ModifyIndex", c.modifyIndex);
        return o;
    }

    private static ObjectNode weights(Svc s) {
        ObjectNode w = JSON.createObjectNode();
        w.put("Passing", s.passing);
        w.put("Warning", s.warning);
        return w;
    }

    private static ObjectNode proxy() {
        ObjectNode p = JSON.createObjectNode();
        p.put("Mode", "");
        p.set("MeshGateway", JSON.createObjectNode());
        p.set("Expose", JSON.createObjectNode());
        return p;
    }

    // ------------------------------------------------------------------ filter expressions

    /** Consul's {@code filter}: {@code Selector == "value"} and {@code !=} clauses joined by {@code and}. */
    private static Predicate<ObjectNode> filter(String expression) {
        if (expression == null || expression.isBlank()) return e -> true;
        List<Predicate<ObjectNode>> clauses = new ArrayList<>();
        for (String part : expression.split("\\s+and\\s+")) {
            Matcher m = CLAUSE.matcher(part);
            if (!m.matches()) {
                throw new HttpError(
                        400, "Failed to create boolean expression evaluator: 1:1: no match found for '" + part + "'");
            }
            String selector = m.group(1);
            boolean equal = m.group(2).equals("==");
            String value = m.group(3);
            String[] path = selector.split("\\.");
            if (path.length != 2 || !Set.of("Service", "Node").contains(path[0])) {
                throw new HttpError(
                        400,
                        "Failed to create boolean expression evaluator: Selector \"" + selector + "\" is not valid");
            }
            clauses.add(entry -> {
                JsonNode v = entry.path(path[0]).path(path[1]);
                String actual = v.isMissingNode() || v.isNull() ? "" : v.asText();
                return actual.equals(value) == equal;
            });
        }
        return e -> clauses.stream().allMatch(c -> c.test(e));
    }

    // ------------------------------------------------------------------ request fields (case-insensitive)

    /** The field whose name equals {@code name} ignoring case and underscores, as Consul's request decoding does. */
    static JsonNode field(JsonNode obj, String name) {
        if (obj == null || !obj.isObject()) return null;
        JsonNode exact = obj.get(name);
        if (exact != null) return exact;
        String want = name.replace("_", "").toLowerCase(Locale.ROOT);
        for (Iterator<Map.Entry<String, JsonNode>> it = obj.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().replace("_", "").toLowerCase(Locale.ROOT).equals(want)) return e.getValue();
        }
        return null;
    }

    private static String text(JsonNode obj, String name, String defaultValue) {
        JsonNode v = field(obj, name);
        return v == null || v.isNull() ? defaultValue : v.asText();
    }

    private static long number(JsonNode obj, String name, long defaultValue) {
        JsonNode v = field(obj, name);
        if (v == null || v.isNull()) return defaultValue;
        if (!v.canConvertToLong()) throw new HttpError(400, "Request decode failed: " + name + " is not a number");
        return v.asLong();
    }

    private static boolean bool(JsonNode obj, String name) {
        JsonNode v = field(obj, name);
        return v != null && v.asBoolean(false);
    }

    private static List<String> strings(JsonNode obj, String name) {
        JsonNode v = field(obj, name);
        if (v == null || !v.isArray()) return List.of();
        List<String> out = new ArrayList<>();
        v.forEach(x -> out.add(x.asText()));
        return List.copyOf(out);
    }

    private static Map<String, String> stringMap(JsonNode obj, String name) {
        JsonNode v = field(obj, name);
        if (v == null || !v.isObject()) return Map.of();
        Map<String, String> out = new LinkedHashMap<>();
        v.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return Map.copyOf(out);
    }

    private static Duration duration(JsonNode obj, String name) {
        String s = text(obj, name, null);
        if (s == null || s.isEmpty()) return null;
        Duration d = parseGoDuration(s);
        if (d == null) throw new HttpError(400, "Request decode failed: time: invalid duration \"" + s + "\"");
        return d;
    }

    /** Go's {@code time.ParseDuration} for the units Consul users write: {@code 10s}, {@code 1m30s}, {@code 500ms}. */
    static Duration parseGoDuration(String s) {
        Matcher m = GO_DURATION.matcher(s);
        long nanos = 0;
        int end = 0;
        while (m.find()) {
            if (m.start() != end) return null;
            end = m.end();
            double v = Double.parseDouble(m.group(1));
            long unit = switch (m.group(2)) {
                case "ns" -> 1L;
                case "us", "µs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                default -> 3_600_000_000_000L;
            };
            nanos += (long) (v * unit);
        }
        if (s.equals("0")) return Duration.ZERO;
        return end == s.length() && end > 0 ? Duration.ofNanos(nanos) : null;
    }

    private static String goDuration(Duration d) {
        if (d.toMillis() % 1000 == 0) return d.toSeconds() + "s";
        return d.toMillis() + "ms";
    }
}
