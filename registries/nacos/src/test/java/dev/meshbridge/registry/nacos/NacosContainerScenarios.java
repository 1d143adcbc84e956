package dev.meshbridge.registry.nacos;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The scenarios against a real {@code nacos/nacos-server} image (standalone, embedded Derby), one container per
 * class (a second one with auth for the credentials scenario). Skipped where there is no Docker engine.
 *
 * <p>nacos-client reaches gRPC at the main port + 1000, so the container's 8848 and 9848 are bound to a free host
 * pair {@code p} and {@code p + 1000} rather than to random ports.
 */
@Testcontainers(disabledWithoutDocker = true)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class NacosContainerScenarios extends NacosScenarios {

    /** A JWT secret of 32+ bytes, base64, as every 2.2+ image requires. */
    private static final String TOKEN_SECRET = "bWVzaGJyaWRnZS10ZXN0LXNlY3JldC1rZXktZm9yLW5hY29zLWp3dA==";

    private static final Pattern STARTED = Pattern.compile("Nacos started successfully");

    private NacosContainer shared;

    /** The image, e.g. {@code nacos/nacos-server:v3.1.1}. */
    abstract String image();

    abstract boolean isNacos3();

    @BeforeAll
    void startContainer() {
        shared = new NacosContainer(image(), isNacos3(), false);
        shared.launch();
    }

    @AfterAll
    void stopContainer() {
        if (shared != null) shared.close();
    }

    @Override
    protected ServerHandle server() {
        return shared;
    }

    @Override
    protected ServerHandle startServerWithAuth(String username, String password) {
        NacosContainer c = new NacosContainer(image(), isNacos3(), true);
        c.launch();
        c.setPassword(username, password);
        return c;
    }

    /** One Nacos container on a fixed port pair. */
    private static final class NacosContainer implements ServerHandle {
        private final boolean nacos3;
        private final boolean auth;
        private final int port = NacosTestServer.freePortPair();
        private final GenericContainer<?> container;

        NacosContainer(String image, boolean nacos3, boolean auth) {
            this.nacos3 = nacos3;
            this.auth = auth;
            this.container = new GenericContainer<>(DockerImageName.parse(image))
                    .withEnv("MODE", "standalone")
                    .withEnv("NACOS_AUTH_ENABLE", Boolean.toString(auth))
                    .withEnv("NACOS_AUTH_TOKEN", TOKEN_SECRET)
                    .withEnv("NACOS_AUTH_IDENTITY_KEY", "meshbridge")
                    .withEnv("NACOS_AUTH_IDENTITY_VALUE", "meshbridge-test")
                    .withEnv("JVM_XMS", "256m")
                    .withEnv("JVM_XMX", "512m")
                    .withExposedPorts(8848, 9848)
                    .waitingFor(Wait.forLogMessage(".*Nacos started successfully.*", 1)
                            .withStartupTimeout(Duration.ofMinutes(3)));
            container.setPortBindings(List.of(port + ":8848", (port + 1000) + ":9848"));
        }

        void launch() {
            container.start();
        }

        @Override
        public String address() {
            return "127.0.0.1:" + port;
        }

        /** {@code POST /v3/admin/core/namespace} (Nacos 3) or {@code POST /v1/console/namespaces} (Nacos 2). */
        @Override
        public void createNamespace(String id) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://" + address() + "/nacos";
            try {
                if (nacos3) {
                    post(http, base + "/v3/admin/core/namespace", "namespaceId=" + id + "&namespaceName=" + id);
                } else {
                    post(http, base + "/v1/console/namespaces", "customNamespaceId=" + id + "&namespaceName=" + id);
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot create namespace " + id, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        @Override
        public boolean pushesNewServices() {
            return nacos3;
        }

        @Override
        public void stop() {
            container
                    .getDockerClient()
                    .stopContainerCmd(container.getContainerId())
                    .exec();
        }

        @Override
        public void start() {
            // the container keeps its port bindings across a docker stop/start
            int startsBefore = starts();
            container
                    .getDockerClient()
                    .startContainerCmd(container.getContainerId())
                    .exec();
            await().atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> starts() > startsBefore);
        }

        private int starts() {
            Matcher m = STARTED.matcher(container.getLogs());
            int n = 0;
            while (m.find()) n++;
            return n;
        }

        /**
         * Sets the user's password: Nacos 3 has no default password and takes the first one through
         * {@code POST /v3/auth/user/admin}; Nacos 2 starts with {@code nacos/nacos}, changed through the user API.
         */
        void setPassword(String username, String password) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://" + address() + "/nacos";
            try {
                if (nacos3) {
                    post(http, base + "/v3/auth/user/admin", "password=" + password);
                } else {
                    String login = post(http, base + "/v1/auth/users/login", "username=nacos&password=nacos");
                    String token = login.replaceAll(".*\"accessToken\"\\s*:\\s*\"([^\"]+)\".*", "$1");
                    HttpRequest put = HttpRequest.newBuilder(URI.create(base + "/v1/auth/users?username=" + username
                                    + "&newPassword=" + password + "&accessToken=" + token))
                            .PUT(HttpRequest.BodyPublishers.noBody())
                            .build();
                    http.send(put, HttpResponse.BodyHandlers.ofString());
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot set the Nacos password", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        private static String post(HttpClient http, String url, String form) throws IOException, InterruptedException {
            HttpRequest r = HttpRequest.newBuilder(URI.create(url))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(form))
                    .build();
            return http.send(r, HttpResponse.BodyHandlers.ofString()).body();
        }

        @Override
        public void close() {
            container.stop();
        }
    }
}
