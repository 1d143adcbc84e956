package dev.meshbridge.registry.eureka.testing;

import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.appinfo.EurekaInstanceConfig;
import com.netflix.appinfo.MyDataCenterInstanceConfig;
import com.netflix.appinfo.providers.EurekaConfigBasedInstanceInfoProvider;
import com.netflix.discovery.DefaultEurekaClientConfig;
import com.netflix.discovery.DiscoveryClient;
import com.netflix.discovery.EurekaClientConfig;
import com.netflix.discovery.Jersey3DiscoveryClientOptionalArgs;
import com.netflix.discovery.shared.transport.jersey3.Jersey3TransportClientFactories;
import com.netflix.eureka.DefaultEurekaServerConfig;
import com.netflix.eureka.DefaultEurekaServerContext;
import com.netflix.eureka.EurekaServerConfig;
import com.netflix.eureka.EurekaServerContext;
import com.netflix.eureka.cluster.Jersey3PeerEurekaNodes;
import com.netflix.eureka.registry.PeerAwareInstanceRegistry;
import com.netflix.eureka.registry.PeerAwareInstanceRegistryImpl;
import com.netflix.eureka.resources.DefaultServerCodecs;
import com.netflix.eureka.resources.ServerCodecs;
import com.netflix.eureka.transport.Jersey3EurekaServerHttpClientFactory;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.glassfish.jersey.internal.inject.AbstractBinder;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

/**
 * A real Eureka server (Netflix {@code eureka-core-jersey3} 2.0.x, the code inside Spring Cloud's Eureka server) in
 * embedded Tomcat 10.1 on 127.0.0.1, serving the REST API under {@code /eureka} as Spring Cloud does.
 *
 * <p>How it differs from a stock server, each on purpose for tests:
 *
 * <ol>
 *   <li>it neither registers with nor fetches from peers, and has no peers;
 *   <li>reads bypass the read-only response cache (a stock server refreshes it every 30 s), so a change is visible to
 *       the next read;
 *   <li>it serves reads at once after start, without waiting for a peer sync ({@code waitTimeInMsWhenSyncEmpty=0});
 *   <li>self-preservation is off; leases expire after their normal 90 s, far beyond any test;
 *   <li>optionally, HTTP basic authentication in front of everything (as Spring Security does in front of a Spring
 *       Cloud Eureka server).
 * </ol>
 *
 * <p>Several servers may run in one JVM: each binds its own server context into its own Jersey application instead of
 * Eureka's static holder. Also runnable on its own ({@link #main}) for demos.
 */
public final class EmbeddedEurekaServer implements AutoCloseable {

    private final Tomcat tomcat;
    private String scheme = "http";
    private final EurekaServerContext serverContext;
    private final DiscoveryClient selfClient;
    private final BasicAuthFilter auth;
    private final int port;
    private final AtomicBoolean closed = new AtomicBoolean();

    private EmbeddedEurekaServer(
            Tomcat tomcat,
            EurekaServerContext serverContext,
            DiscoveryClient selfClient,
            BasicAuthFilter auth,
            int port) {
        this.tomcat = tomcat;
        this.serverContext = serverContext;
        this.selfClient = selfClient;
        this.auth = auth;
        this.port = port;
    }

    /** Starts a server on a random port without authentication. */
    public static EmbeddedEurekaServer start() {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options of a server to start. */
    public static final class Builder {
        private int port;
        private String username;
        private String password;
        private Duration deltaRetention = Duration.ofMinutes(3);
        private boolean disableDelta;
        private java.nio.file.Path certFile;
        private java.nio.file.Path keyFile;
        private java.nio.file.Path clientCaFile;

        private Builder() {}

        /**
         * Serves HTTPS with this PEM certificate and key; with {@code clientCaFile}, every client must present a
         * certificate that chains to it (Tomcat's {@code certificateVerification="required"}).
         */
        public Builder https(java.nio.file.Path certFile, java.nio.file.Path keyFile, java.nio.file.Path clientCaFile) {
            this.certFile = certFile;
            this.keyFile = keyFile;
            this.clientCaFile = clientCaFile;
            return this;
        }

        /** The port to listen on; 0 (the default) picks a free one. Use a fixed one to restart a server in place. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** Requires HTTP basic authentication with these credentials on every request. */
        public Builder basicAuth(String username, String password) {
            this.username = username;
            this.password = password;
            return this;
        }

        /**
         * How long the server keeps a change in its delta queue (Eureka's default: 3 minutes). A short one makes a
         * client that polls less often miss changes in deltas, which its hash check must then catch.
         */
        public Builder deltaRetention(Duration deltaRetention) {
            this.deltaRetention = deltaRetention;
            return this;
        }

        /** Refuses deltas ({@code eureka.server.disable-delta}): {@code /apps/delta} answers 403. */
        public Builder disableDelta() {
            this.disableDelta = true;
            return this;
        }

        public EmbeddedEurekaServer start() {
            try {
                return EmbeddedEurekaServer.start(this);
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the embedded Eureka server: " + e, e);
            }
        }
    }

    private static EmbeddedEurekaServer start(Builder b) throws Exception {
        EurekaServerConfig serverConfig = new TestServerConfig(b.deltaRetention, b.disableDelta);
        EurekaClientConfig clientConfig = new StandaloneClientConfig();
        ServerCodecs codecs = new DefaultServerCodecs(serverConfig);
        EurekaInstanceConfig instanceConfig = new MyDataCenterInstanceConfig();
        ApplicationInfoManager infoManager = new ApplicationInfoManager(
                instanceConfig, new EurekaConfigBasedInstanceInfoProvider(instanceConfig).get());
        DiscoveryClient selfClient = new DiscoveryClient(
                infoManager,
                clientConfig,
                Jersey3TransportClientFactories.getInstance(),
                new Jersey3DiscoveryClientOptionalArgs());
        PeerAwareInstanceRegistry registry = new PeerAwareInstanceRegistryImpl(
                serverConfig, clientConfig, codecs, selfClient, new Jersey3EurekaServerHttpClientFactory());
        Jersey3PeerEurekaNodes peers =
                new Jersey3PeerEurekaNodes(registry, serverConfig, clientConfig, codecs, infoManager) {
                    @Override
                    protected List<String> resolvePeerUrls() {
                        return new ArrayList<>();
                    }
                };
        EurekaServerContext serverContext =
                new DefaultEurekaServerContext(serverConfig, codecs, registry, peers, infoManager);
        serverContext.initialize();
        registry.openForTraffic(infoManager, registry.syncUp());

        Path baseDir = Files.createTempDirectory("eureka-tomcat");
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = new Connector();
        connector.setPort(b.port);
        connector.setProperty("address", "127.0.0.1");
        if (b.certFile != null) {
            connector.setScheme("https");
            connector.setSecure(true);
            connector.setProperty("SSLEnabled", "true");
            org.apache.tomcat.util.net.SSLHostConfig ssl = new org.apache.tomcat.util.net.SSLHostConfig();
            org.apache.tomcat.util.net.SSLHostConfigCertificate cert =
                    new org.apache.tomcat.util.net.SSLHostConfigCertificate(
                            ssl, org.apache.tomcat.util.net.SSLHostConfigCertificate.Type.UNDEFINED);
            cert.setCertificateFile(b.certFile.toString());
            cert.setCertificateKeyFile(b.keyFile.toString());
            ssl.addCertificate(cert);
            if (b.clientCaFile != null) {
                // Tomcat's JSSE side reads client CAs from a trust store (caCertificateFile is for OpenSSL)
                java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                int i = 0;
                for (java.security.cert.Certificate c : java.security.cert.CertificateFactory.getInstance("X.509")
                        .generateCertificates(Files.newInputStream(b.clientCaFile))) {
                    trust.setCertificateEntry("ca-" + i++, c);
                }
                Path store = Files.createTempFile("eureka-clients-ca", ".p12");
                try (var out = Files.newOutputStream(store)) {
                    trust.store(out, "changeit".toCharArray());
                }
                ssl.setTruststoreFile(store.toString());
                ssl.setTruststorePassword("changeit");
                ssl.setTruststoreType("PKCS12");
                ssl.setCertificateVerification("required");
            }
            connector.addSslHostConfig(ssl);
        }
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", baseDir.toString());

        ResourceConfig app = new ResourceConfig()
                .packages("com.netflix.eureka.resources", "com.netflix.discovery.provider")
                .register(new AbstractBinder() {
                    @Override
                    protected void configure() {
                        bind(serverContext).to(EurekaServerContext.class);
                    }
                });
        Tomcat.addServlet(context, "eureka", new ServletContainer(app)).setLoadOnStartup(1);
        // Eureka's resources are at /{version}/apps...; mapped at the root, /eureka/apps matches as Spring Cloud serves
        // it
        context.addServletMappingDecoded("/*", "eureka");
        BasicAuthFilter auth = new BasicAuthFilter();
        if (b.username != null) auth.require(b.username, b.password);
        addFilter(context, "basic-auth", auth);
        try {
            tomcat.start();
        } catch (LifecycleException e) {
            stopEureka(serverContext, selfClient);
            throw e;
        }
        int port = connector.getLocalPort();
        if (port <= 0) {
            tomcat.stop();
            tomcat.destroy();
            stopEureka(serverContext, selfClient);
            throw new IOException("port " + b.port + " is not available");
        }
        EmbeddedEurekaServer server = new EmbeddedEurekaServer(tomcat, serverContext, selfClient, auth, port);
        server.scheme = b.certFile != null ? "https" : "http";
        return server;
    }

    private static void addFilter(Context context, String name, Filter filter) {
        FilterDef def = new FilterDef();
        def.setFilterName(name);
        def.setFilter(filter);
        context.addFilterDef(def);
        FilterMap map = new FilterMap();
        map.setFilterName(name);
        map.addURLPatternDecoded("/*");
        context.addFilterMap(map);
    }

    public int port() {
        return port;
    }

    /** The service URL a Eureka client is configured with, e.g. {@code http://127.0.0.1:43121/eureka}. */
    public String serviceUrl() {
        return scheme + "://127.0.0.1:" + port + "/eureka";
    }

    /** From now on, requires these basic-auth credentials (as after a password rotation on the server). */
    public void requireCredentials(String username, String password) {
        auth.require(username, password);
    }

    /** The server's registry, for assertions on what it holds. */
    public PeerAwareInstanceRegistry registry() {
        return serverContext.getRegistry();
    }

    /** Stops the server; its registry is gone (a new server on the same port starts empty, as a restart does). */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        try {
            tomcat.stop();
            tomcat.destroy();
        } catch (LifecycleException e) {
            throw new IllegalStateException("cannot stop the embedded Eureka server: " + e, e);
        } finally {
            stopEureka(serverContext, selfClient);
        }
    }

    private static void stopEureka(EurekaServerContext serverContext, DiscoveryClient selfClient) {
        try {
            serverContext.shutdown();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the Eureka server context: " + e, e);
        } finally {
            selfClient.shutdown();
        }
    }

    /** Runs a server until the process is stopped: {@code EmbeddedEurekaServer [port [username password]]}. */
    public static void main(String[] args) throws InterruptedException {
        Builder b = builder().port(args.length > 0 ? Integer.parseInt(args[0]) : 8761);
        if (args.length > 2) b.basicAuth(args[1], args[2]);
        EmbeddedEurekaServer server = b.start();
        System.out.println("Eureka server at " + server.serviceUrl());
        CountDownLatch forever = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        forever.await();
    }

    /** The server settings listed in the class comment; everything else is Eureka's default. */
    private static final class TestServerConfig extends DefaultEurekaServerConfig {
        private final Duration deltaRetention;
        private final boolean disableDelta;

        TestServerConfig(Duration deltaRetention, boolean disableDelta) {
            this.deltaRetention = deltaRetention;
            this.disableDelta = disableDelta;
        }

        @Override
        public boolean shouldDisableDelta() {
            return disableDelta;
        }

        @Override
        public long getRetentionTimeInMSInDeltaQueue() {
            return deltaRetention.toMillis();
        }

        @Override
        public long getDeltaRetentionTimerIntervalInMs() {
            return Math.max(10, Math.min(30_000, deltaRetention.toMillis() / 2));
        }

        @Override
        public boolean shouldUseReadOnlyResponseCache() {
            return false;
        }

        @Override
        public int getWaitTimeInMsWhenSyncEmpty() {
            return 0;
        }

        @Override
        public boolean shouldEnableSelfPreservation() {
            return false;
        }

        @Override
        public int getRegistrySyncRetries() {
            return 0;
        }

        @Override
        public boolean isRateLimiterEnabled() {
            return false;
        }
    }

    /** The server's own client: no registration, no fetching. */
    private static final class StandaloneClientConfig extends DefaultEurekaClientConfig {
        @Override
        public boolean shouldRegisterWithEureka() {
            return false;
        }

        @Override
        public boolean shouldFetchRegistry() {
            return false;
        }
    }

    /**
     * HTTP basic authentication once credentials are required: 401 with a challenge unless the request carries them.
     */
    private static final class BasicAuthFilter implements Filter {
        private volatile byte[] expected;

        void require(String username, String password) {
            this.expected = ("Basic "
                            + Base64.getEncoder()
                                    .encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8)))
                    .getBytes(StandardCharsets.US_ASCII);
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            byte[] expected = this.expected;
            if (expected == null) {
                chain.doFilter(request, response);
                return;
            }
            String header = ((HttpServletRequest) request).getHeader("Authorization");
            byte[] given = header == null ? new byte[0] : header.getBytes(StandardCharsets.US_ASCII);
            if (MessageDigest.isEqual(expected, given)) {
                chain.doFilter(request, response);
                return;
            }
            HttpServletResponse http = (HttpServletResponse) response;
            http.setHeader("WWW-Authenticate", "Basic realm=\"eureka\"");
            http.sendError(HttpServletResponse.SC_UNAUTHORIZED);
        }
    }
}
