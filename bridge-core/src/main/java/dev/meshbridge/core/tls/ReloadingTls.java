package dev.meshbridge.core.tls;

import java.io.IOException;
import java.math.BigInteger;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TLS identity and trust anchors read from {@link TlsFiles}, read again when the files change: the key and trust
 * managers it hands out delegate to the current generation, so a TLS context built once uses the new certificate
 * for every handshake after a change, while connections already established keep theirs.
 *
 * <ol>
 *   <li>{@link #load()} reads the files once and throws when they cannot be used (the bridge refuses to start);
 *   <li>{@link #reloadIfChanged()} (every {@code reloadInterval} once {@link #startPolling} ran) compares a SHA-256
 *       of the files' bytes, read through symlinks (a Kubernetes Secret volume swaps its {@code ..data} link), and
 *       loads them when it changed; a certificate that does not match its key, an unreadable or half-written file
 *       keeps the last good generation, is logged once per content and counted in {@link Status#failures()};
 *   <li>nothing this class logs or throws carries a key, a password or a file's content.
 * </ol>
 */
public final class ReloadingTls implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReloadingTls.class);

    private final String name;
    private final TlsFiles files;
    private final Clock clock;
    private final AtomicLong generations = new AtomicLong();
    private final List<Consumer<Status>> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final DelegatingKeyManager keyManager = new DelegatingKeyManager();
    private volatile Generation current;
    private volatile Generation previous;
    private volatile byte[] failedFingerprint;
    private volatile String lastError;
    private volatile Instant lastErrorAt;
    private final AtomicLong failures = new AtomicLong();
    private volatile ScheduledFuture<?> poll;
    private volatile long checkEveryNanos = -1;
    private final List<SSLContext> contexts = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<ClientContexts> generationContexts = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final AtomicLong lastCheckNanos = new AtomicLong(System.nanoTime());

    /**
     * @param name what these files are for, in logs and debug pages ({@code xds server}, {@code registry consul-1})
     */
    public ReloadingTls(String name, TlsFiles files, Clock clock) {
        this.name = Objects.requireNonNull(name, "name");
        this.files = Objects.requireNonNull(files, "files");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** What is loaded now, for debug pages and metrics: nothing secret. */
    public record Status(
            String name,
            long generation,
            Instant loadedAt,
            String subject,
            String serial,
            Instant notBefore,
            Instant notAfter,
            List<String> sans,
            int trustedCas,
            long failures,
            String lastError,
            Instant lastErrorAt) {}

    private record Generation(
            long number,
            String alias,
            byte[] fingerprint,
            X509ExtendedKeyManager keys,
            X509ExtendedTrustManager trust,
            X509Certificate leaf,
            int trustedCas,
            Instant loadedAt) {}

    public TlsFiles files() {
        return files;
    }

    /** Reads the files; throws when they cannot be used. */
    public ReloadingTls load() throws IOException, GeneralSecurityException {
        byte[] fp = fingerprint();
        install(read(fp));
        return this;
    }

    /** Reloads when the files' content changed; true when a new generation is in use. Never throws. */
    public boolean reloadIfChanged() {
        byte[] fp;
        try {
            fp = fingerprint();
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            fail(null, "cannot read the files: " + describe(e));
            return false;
        }
        Generation g = current;
        if (g != null && Arrays.equals(g.fingerprint, fp)) return false;
        if (Arrays.equals(failedFingerprint, fp)) return false; // this content failed already; wait for the next
        try {
            install(read(fp));
            return true;
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            fail(fp, describe(e));
            return false;
        }
    }

    /** Checks the files every {@code interval} on {@code scheduler} (the caller owns the scheduler). */
    public void startPolling(ScheduledExecutorService scheduler, Duration interval) {
        long ms = Math.max(10, interval.toMillis());
        poll = scheduler.scheduleWithFixedDelay(this::reloadIfChanged, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Checks the files for a change when a handshake starts, at most every {@code interval}: for clients that make a
     * connection now and then (a registry client), with no thread of their own. A changed file is used by the
     * handshake that noticed it.
     */
    public ReloadingTls checkOnHandshake(Duration interval) {
        checkEveryNanos = Math.max(0, interval.toNanos());
        return this;
    }

    private void maybeReload() {
        long every = checkEveryNanos;
        if (every < 0) return;
        long now = System.nanoTime();
        long last = lastCheckNanos.get();
        // files caught half-written are looked at again by the next connection, not an interval later
        boolean due = now - last >= every || failedFingerprint != null;
        if (due && lastCheckNanos.compareAndSet(last, now)) reloadIfChanged();
    }

    /** Called after each successful reload (not after {@link #load()}), on the polling thread. */
    public void onReload(Consumer<Status> listener) {
        listeners.add(listener);
    }

    /** The key manager of the current generation (for a TLS context built once). */
    public X509ExtendedKeyManager keyManager() {
        return keyManager;
    }

    /**
     * A trust manager of the current generation's CAs (the JVM's default CAs when there is no {@code caFile}).
     *
     * @param onRefused told about each peer chain refused, before the handshake fails (for counting)
     */
    public X509ExtendedTrustManager trustManager(Consumer<CertificateException> onRefused) {
        return new DelegatingTrustManager(onRefused == null ? e -> {} : onRefused);
    }

    /**
     * A client TLS context over the reloading managers (registries: a new connection uses the current files). With
     * {@link #checkOnHandshake}, every connection the context opens (socket or engine) checks the files first, at
     * most every that interval, before its handshake: a resumed TLS session asks for no certificate, so waiting for
     * the key manager would let a connection resume with the old identity. Each generation of the files gets its own
     * session cache: a connection after a reload never resumes a session made with older files, not even one whose
     * TLS 1.3 ticket the client read only after the reload (a connection that was handshaking meanwhile). Sessions are
     * resumed for at most the interval (at least 1 s).
     */
    public SSLContext clientContext() throws GeneralSecurityException {
        long every = checkEveryNanos;
        if (every < 0) {
            SSLContext ctx = newClientContext(every);
            contexts.add(ctx);
            return ctx;
        }
        ClientContexts perGeneration = new ClientContexts(newClientContext(every), every);
        generationContexts.add(perGeneration);
        return CheckingContext.wrap(perGeneration.current, perGeneration::current, this::maybeReload);
    }

    private SSLContext newClientContext(long every) throws GeneralSecurityException {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(
                files.hasIdentity() ? new javax.net.ssl.KeyManager[] {keyManager} : null,
                new TrustManager[] {trustManager(null)},
                null);
        if (every >= 0) {
            ctx.getClientSessionContext().setSessionTimeout((int)
                    Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toSeconds(every))));
        }
        return ctx;
    }

    /** The inner context of one {@link #clientContext()}: replaced, with its session cache, by each reload. */
    private final class ClientContexts {
        private final long every;
        private volatile SSLContext current;

        ClientContexts(SSLContext first, long every) {
            this.current = first;
            this.every = every;
        }

        SSLContext current() {
            return current;
        }

        void renew() {
            SSLContext old = current;
            try {
                current = newClientContext(every);
            } catch (GeneralSecurityException | RuntimeException e) {
                log.warn(
                        "tls={} cannot make a new client context, forgetting the old one's sessions: {}",
                        name,
                        describe(e));
            }
            forgetSessions(old);
        }
    }

    private void forgetSessions() {
        for (SSLContext ctx : contexts) forgetSessions(ctx);
        for (ClientContexts c : generationContexts) c.renew();
    }

    private static void forgetSessions(SSLContext ctx) {
        var sessions = ctx.getClientSessionContext();
        var ids = sessions.getIds();
        while (ids.hasMoreElements()) {
            javax.net.ssl.SSLSession s = sessions.getSession(ids.nextElement());
            if (s != null) s.invalidate();
        }
    }

    public Status status() {
        Generation g = current;
        if (g == null) {
            return new Status(
                    name, 0, null, null, null, null, null, List.of(), 0, failures.get(), lastError, lastErrorAt);
        }
        X509Certificate leaf = g.leaf;
        return new Status(
                name,
                g.number,
                g.loadedAt,
                leaf == null ? null : leaf.getSubjectX500Principal().getName(),
                leaf == null ? null : serialHex(leaf.getSerialNumber()),
                leaf == null ? null : leaf.getNotBefore().toInstant(),
                leaf == null ? null : leaf.getNotAfter().toInstant(),
                leaf == null ? List.of() : Sans.of(leaf).all(),
                g.trustedCas,
                failures.get(),
                lastError,
                lastErrorAt);
    }

    /** A serial number as hex, the way openssl prints it (without colons). */
    public static String serialHex(BigInteger serial) {
        return serial.toString(16);
    }

    @Override
    public void close() {
        ScheduledFuture<?> p = poll;
        if (p != null) p.cancel(false);
    }

    // ------------------------------------------------------------------ loading

    private byte[] fingerprint() throws IOException, GeneralSecurityException {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (Path p : Arrays.asList(files.certFile(), files.keyFile(), files.caFile())) {
            sha.update((byte) (p == null ? 0 : 1));
            if (p != null) sha.update(Files.readAllBytes(p)); // follows symlinks, such as a Secret volume's ..data
        }
        if (files.keyPassword() != null)
            sha.update(files.keyPassword().resolve().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return sha.digest();
    }

    private Generation read(byte[] fp) throws IOException, GeneralSecurityException {
        long number = generations.incrementAndGet();
        String alias = "meshbridge-" + number;
        X509ExtendedKeyManager keys = null;
        X509Certificate leaf = null;
        if (files.hasIdentity()) {
            List<X509Certificate> chain = Pem.certificates(files.certFile());
            char[] password = files.keyPassword() == null
                    ? null
                    : files.keyPassword().resolve().toCharArray();
            PrivateKey key = Pem.privateKey(files.keyFile(), password);
            leaf = chain.get(0);
            checkPair(leaf, key);
            char[] storePassword = new char[0];
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry(alias, key, storePassword, chain.toArray(java.security.cert.Certificate[]::new));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
            kmf.init(store, storePassword);
            keys = (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        int cas = 0;
        if (files.caFile() == null) {
            tmf.init((KeyStore) null);
        } else {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            for (X509Certificate ca : Pem.certificates(files.caFile())) trust.setCertificateEntry("ca-" + cas++, ca);
            tmf.init(trust);
        }
        X509ExtendedTrustManager trust = null;
        for (TrustManager tm : tmf.getTrustManagers()) {
            if (tm instanceof X509ExtendedTrustManager x) trust = x;
        }
        if (trust == null) throw new GeneralSecurityException("no X.509 trust manager available");
        return new Generation(number, alias, fp, keys, trust, leaf, cas, clock.instant());
    }

    /** A certificate written before its key (or the other way round) is not used until both match. */
    private static void checkPair(X509Certificate leaf, PrivateKey key) throws GeneralSecurityException {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (algorithm == null) return;
        byte[] probe = "meshbridge key check".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Signature signer = Signature.getInstance(algorithm);
        signer.initSign(key);
        signer.update(probe);
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance(algorithm);
        verifier.initVerify(leaf.getPublicKey());
        verifier.update(probe);
        if (!verifier.verify(signature))
            throw new GeneralSecurityException("the private key does not belong to the certificate");
    }

    private void install(Generation g) {
        Generation old = current;
        previous = old;
        current = g;
        failedFingerprint = null;
        if (old != null) {
            forgetSessions();
            Status s = status();
            log.info(
                    "tls={} reloaded: subject={} serial={} notAfter={} trustedCas={}",
                    name,
                    s.subject(),
                    s.serial(),
                    s.notAfter(),
                    s.trustedCas());
            for (Consumer<Status> l : listeners) {
                try {
                    l.accept(s);
                } catch (RuntimeException e) {
                    log.warn("tls={} reload listener failed: {}", name, e.toString());
                }
            }
        }
    }

    private void fail(byte[] fp, String message) {
        failures.incrementAndGet();
        lastError = message;
        lastErrorAt = clock.instant();
        if (fp == null || !Arrays.equals(failedFingerprint, fp)) {
            log.warn("tls={} files changed but cannot be used, keeping the last good ones: {}", name, message);
        }
        if (fp != null) failedFingerprint = fp;
    }

    /** An exception's message without anything from a file's content (our messages name files only). */
    private static String describe(Exception e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    // ------------------------------------------------------------------ delegates

    private final class DelegatingKeyManager extends X509ExtendedKeyManager {

        private X509ExtendedKeyManager byAlias(String alias) {
            Generation g = current;
            if (g != null && g.alias.equals(alias)) return g.keys;
            Generation p = previous; // a handshake that chose its alias just before a reload
            if (p != null && p.alias.equals(alias)) return p.keys;
            return null;
        }

        private X509ExtendedKeyManager keys() {
            maybeReload();
            Generation g = current;
            return g == null ? null : g.keys;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            X509ExtendedKeyManager k = keys();
            return k == null ? null : k.getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            X509ExtendedKeyManager k = keys();
            return k == null ? null : k.chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            X509ExtendedKeyManager k = keys();
            return k == null ? null : k.chooseEngineClientAlias(keyType, issuers, engine);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            X509ExtendedKeyManager k = keys();
            return k == null ? null : k.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            X509ExtendedKeyManager k = keys();
            return k == null ? null : k.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            X509ExtendedKeyManager k = keys();
            return k == null ? null : k.chooseEngineServerAlias(keyType, issuers, engine);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            X509ExtendedKeyManager k = byAlias(alias);
            return k == null ? null : k.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            X509ExtendedKeyManager k = byAlias(alias);
            return k == null ? null : k.getPrivateKey(alias);
        }
    }

    private final class DelegatingTrustManager extends X509ExtendedTrustManager {

        private final Consumer<CertificateException> onRefused;

        DelegatingTrustManager(Consumer<CertificateException> onRefused) {
            this.onRefused = onRefused;
        }

        private X509ExtendedTrustManager trust() throws CertificateException {
            maybeReload();
            Generation g = current;
            if (g == null) throw new CertificateException("TLS files of " + name + " are not loaded");
            return g.trust;
        }

        private interface Check {
            void run(X509ExtendedTrustManager t) throws CertificateException;
        }

        private void check(Check c) throws CertificateException {
            try {
                c.run(trust());
            } catch (CertificateException e) {
                onRefused.accept(e);
                throw e;
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            check(t -> t.checkClientTrusted(chain, authType, socket));
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            check(t -> t.checkServerTrusted(chain, authType, socket));
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            check(t -> t.checkClientTrusted(chain, authType, engine));
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            check(t -> t.checkServerTrusted(chain, authType, engine));
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(t -> t.checkClientTrusted(chain, authType));
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(t -> t.checkServerTrusted(chain, authType));
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            Generation g = current;
            return g == null ? new X509Certificate[0] : g.trust.getAcceptedIssuers();
        }
    }

    /** Why a peer's chain was refused, in one word for metrics: {@code expired}, {@code not_yet_valid}, {@code untrusted}. */
    public static String refusalReason(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.security.cert.CertificateExpiredException) return "expired";
            if (t instanceof java.security.cert.CertificateNotYetValidException) return "not_yet_valid";
            if (t instanceof java.security.cert.CertPathValidatorException v
                    && v.getReason() == java.security.cert.CertPathValidatorException.BasicReason.EXPIRED)
                return "expired";
            if (t instanceof java.security.cert.CertPathValidatorException v
                    && v.getReason() == java.security.cert.CertPathValidatorException.BasicReason.NOT_YET_VALID)
                return "not_yet_valid";
        }
        return "untrusted";
    }

    /** The subject alternative names of a certificate, by kind. */
    public record Sans(List<String> uris, List<String> dnsNames, List<String> ips) {

        public static Sans of(X509Certificate cert) {
            List<String> uris = new ArrayList<>();
            List<String> dns = new ArrayList<>();
            List<String> ips = new ArrayList<>();
            try {
                var names = cert.getSubjectAlternativeNames();
                if (names != null) {
                    for (List<?> san : names) {
                        if (san.size() < 2 || !(san.get(1) instanceof String v)) continue;
                        int kind = (Integer) san.get(0);
                        if (kind == 6) uris.add(v);
                        else if (kind == 2) dns.add(v);
                        else if (kind == 7) ips.add(v);
                    }
                }
            } catch (java.security.cert.CertificateParsingException e) {
                // no usable SANs
            }
            return new Sans(List.copyOf(uris), List.copyOf(dns), List.copyOf(ips));
        }

        public List<String> all() {
            List<String> out = new ArrayList<>();
            uris.forEach(u -> out.add("URI:" + u));
            dnsNames.forEach(d -> out.add("DNS:" + d));
            ips.forEach(i -> out.add("IP:" + i));
            return out;
        }
    }
}
