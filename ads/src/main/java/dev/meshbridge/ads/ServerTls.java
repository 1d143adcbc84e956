package dev.meshbridge.ads;

import dev.meshbridge.core.tls.ReloadingTls;
import dev.meshbridge.core.util.Glob;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.GeneralSecurityException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.regex.Pattern;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS of one ADS server: the Netty TLS context over files reloaded on change, and the authorization of clients by
 * their certificate.
 *
 * <ol>
 *   <li>the context is built once over {@link ReloadingTls}'s key and trust managers: a handshake after a change of
 *       the files presents the new certificate, a connection already established keeps its streams;
 *   <li>a client certificate that does not chain to {@code caFile} (or has expired) fails the handshake; the refusal
 *       is counted ({@code meshbridge.<server>.tls.refused{reason}}: {@code untrusted}, {@code expired},
 *       {@code not_yet_valid}) and listed on the debug page;
 *   <li>with {@code clientAuth: require}, the TLS layer asks for a certificate and every call is checked: no
 *       certificate ends the call with {@code UNAUTHENTICATED} ({@code reason="no_certificate"}), a certificate whose
 *       SANs match none of the allow lists with {@code PERMISSION_DENIED} ({@code reason="san_not_allowed"}); the
 *       status names nothing of the configuration, and nothing is served before the check;
 *   <li>{@code meshbridge.<server>.tls.reloads{result}} counts reloads ({@code ok}, {@code failed}) and
 *       {@code meshbridge.<server>.tls.cert.not.after} is the serving certificate's expiry (epoch seconds).
 * </ol>
 */
public final class ServerTls implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ServerTls.class);
    private static final int RECENT = 20;
    private static final int MAX_LOGGED_SAN = 200;
    private static final java.time.Duration LOG_EVERY = java.time.Duration.ofSeconds(10);

    private final String server;
    private final TlsOptions options;
    private final ReloadingTls files;
    private final Clock clock;
    private final List<Pattern> uriGlobs;
    private final List<Pattern> dnsGlobs;
    private final SslContext sslContext;
    private final MeterRegistry registry;
    private final Map<String, Counter> refused = new ConcurrentHashMap<>();
    private final Counter reloadsOk;
    private final Counter reloadsFailed;
    private final Deque<Refusal> recent = new ArrayDeque<>();
    private final Map<String, Instant> lastLogged = new ConcurrentHashMap<>();
    private long lastFailures;

    /** A refused client, as the debug page shows it (its address, why, and the SANs it presented, shortened). */
    public record Refusal(Instant at, String peer, String reason, List<String> sans) {}

    /** The {@code tls} part of {@code /debug/xds} and {@code /debug/mcp}. */
    public record View(
            String mode,
            String clientAuth,
            List<String> allowedUriSans,
            List<String> allowedDnsSans,
            ReloadingTls.Status certificate,
            Map<String, Long> refused,
            List<Refusal> recentRefusals) {

        static View plaintext() {
            return new View("plaintext", "none", List.of(), List.of(), null, Map.of(), List.of());
        }
    }

    ServerTls(String server, TlsOptions options, MeterRegistry registry, Clock clock)
            throws IOException, GeneralSecurityException {
        this.server = Objects.requireNonNull(server, "server");
        this.options = Objects.requireNonNull(options, "options");
        this.registry = Objects.requireNonNull(registry, "registry");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.files = new ReloadingTls(server + " server", options.files(), clock).load();
        this.uriGlobs = options.allowedUriSans().stream()
                .map(g -> Glob.compile(g, false, '/'))
                .toList();
        this.dnsGlobs = options.allowedDnsSans().stream()
                .map(g -> Glob.compile(g, true, '.'))
                .toList();
        String p = "meshbridge." + server + ".tls.";
        this.reloadsOk = Counter.builder(p + "reloads")
                .description("certificate files reloaded after a change")
                .tag("result", "ok")
                .register(registry);
        this.reloadsFailed = Counter.builder(p + "reloads")
                .description("certificate files reloaded after a change")
                .tag("result", "failed")
                .register(registry);
        for (String reason : List.of("untrusted", "expired", "not_yet_valid", "no_certificate", "san_not_allowed"))
            refusedCounter(reason);
        Gauge.builder(p + "cert.not.after", files, f -> {
                    Instant na = f.status().notAfter();
                    return na == null ? 0 : na.getEpochSecond();
                })
                .description("expiry of the serving certificate, epoch seconds")
                .register(registry);
        files.onReload(s -> reloadsOk.increment());
        SslContextBuilder b = GrpcSslContexts.configure(
                SslContextBuilder.forServer(files.keyManager()), SslProvider.JDK); // JDK: no key caching by alias
        if (options.clientAuth() != TlsOptions.ClientAuth.NONE) {
            b.trustManager(files.trustManager(e -> refuse(null, ReloadingTls.refusalReason(e), List.of())));
            // a missing certificate is refused per call (counted, with a clear status), not by a bare TLS alert
            b.clientAuth(ClientAuth.OPTIONAL);
        }
        this.sslContext = b.build();
    }

    SslContext sslContext() {
        return sslContext;
    }

    /** Polls the files for changes on {@code scheduler} every {@code reloadInterval}. */
    void startReloading(ScheduledExecutorService scheduler) {
        scheduler.scheduleWithFixedDelay(
                this::checkFiles,
                options.reloadInterval().toMillis(),
                options.reloadInterval().toMillis(),
                java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** Reloads the files now when they changed (the poller calls it; tests may too); true when reloaded. */
    public boolean checkFiles() {
        boolean reloaded = files.reloadIfChanged();
        long f = files.status().failures();
        synchronized (this) {
            if (f > lastFailures) {
                reloadsFailed.increment(f - lastFailures);
                lastFailures = f;
            }
        }
        return reloaded;
    }

    ServerInterceptor authorizer() {
        return new Authorizer();
    }

    public View view() {
        Map<String, Long> counts = new TreeMap<>();
        refused.forEach((k, c) -> counts.put(k, (long) c.count()));
        List<Refusal> r;
        synchronized (recent) {
            r = new ArrayList<>(recent);
        }
        return new View(
                options.mode(),
                options.clientAuth().name().toLowerCase(java.util.Locale.ROOT),
                options.allowedUriSans(),
                options.allowedDnsSans(),
                files.status(),
                counts,
                r);
    }

    @Override
    public void close() {
        files.close();
    }

    private Counter refusedCounter(String reason) {
        return refused.computeIfAbsent(
                reason,
                r -> Counter.builder("meshbridge." + server + ".tls.refused")
                        .description("client connections or calls refused by TLS or client authorization")
                        .tag("reason", r)
                        .register(registry));
    }

    private void refuse(String peer, String reason, List<String> sans) {
        refusedCounter(reason).increment();
        Instant now = clock.instant();
        List<String> shown = sans.stream().limit(8).map(ServerTls::printable).toList();
        synchronized (recent) {
            if (recent.size() == RECENT) recent.removeFirst();
            recent.addLast(new Refusal(now, peer == null ? "?" : peer, reason, shown));
        }
        Instant last = lastLogged.get(reason);
        if (last == null || !now.isBefore(last.plus(LOG_EVERY))) {
            lastLogged.put(reason, now);
            log.warn(
                    "{} server refused a client (logged at most every {}s per reason; all are counted): peer={}"
                            + " reason={} sans={}",
                    server,
                    LOG_EVERY.toSeconds(),
                    peer == null ? "?" : peer,
                    reason,
                    shown);
        }
    }

    /** A SAN from outside, fit for a log line and a debug page: printable ASCII, bounded. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_LOGGED_SAN) + 8);
        for (int i = 0; i < s.length() && b.length() < MAX_LOGGED_SAN; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '\\') b.append(c);
            else b.append(String.format("\\u%04x", (int) c));
        }
        if (s.length() > MAX_LOGGED_SAN) b.append("...");
        return b.toString();
    }

    /** True when the certificate may connect: no allow lists, or one of its SANs matches one. */
    boolean allowed(X509Certificate cert) {
        if (uriGlobs.isEmpty() && dnsGlobs.isEmpty()) return true;
        ReloadingTls.Sans sans = ReloadingTls.Sans.of(cert);
        for (String uri : sans.uris()) {
            for (Pattern g : uriGlobs) if (g.matcher(uri).matches()) return true;
        }
        for (String dns : sans.dnsNames()) {
            for (Pattern g : dnsGlobs) if (g.matcher(dns).matches()) return true;
        }
        return false;
    }

    private final class Authorizer implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            if (options.clientAuth() != TlsOptions.ClientAuth.REQUIRE) return next.startCall(call, headers);
            SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
            X509Certificate leaf = null;
            if (session != null) {
                try {
                    Certificate[] chain = session.getPeerCertificates();
                    if (chain.length > 0 && chain[0] instanceof X509Certificate x) leaf = x;
                } catch (SSLPeerUnverifiedException e) {
                    // no certificate presented
                }
            }
            if (leaf == null) {
                refuse(peer(call), "no_certificate", List.of());
                call.close(Status.UNAUTHENTICATED.withDescription("a client certificate is required"), new Metadata());
                return new ServerCall.Listener<>() {};
            }
            if (!allowed(leaf)) {
                refuse(peer(call), "san_not_allowed", ReloadingTls.Sans.of(leaf).all());
                call.close(
                        Status.PERMISSION_DENIED.withDescription("the client certificate is not authorized here"),
                        new Metadata());
                return new ServerCall.Listener<>() {};
            }
            return next.startCall(call, headers);
        }
    }

    private static String peer(ServerCall<?, ?> call) {
        SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        return remote instanceof InetSocketAddress i
                ? i.getAddress().getHostAddress() + ":" + i.getPort()
                : String.valueOf(remote);
    }
}
