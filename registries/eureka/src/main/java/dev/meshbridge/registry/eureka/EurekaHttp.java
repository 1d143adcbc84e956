package dev.meshbridge.registry.eureka;

import com.netflix.discovery.converters.jackson.EurekaJsonJacksonCodec;
import com.netflix.discovery.shared.Applications;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.zip.GZIPInputStream;

/**
 * Reads Eureka's registry over its REST API ({@code GET {serviceUrl}/apps/} and {@code GET {serviceUrl}/apps/delta}),
 * decoded with Eureka's own JSON codec, on the JDK HTTP client with virtual threads. Thread-safe; {@link #close()}
 * aborts requests in flight.
 */
final class EurekaHttp implements AutoCloseable {

    /** A failed request: what went wrong, safe to show (never credentials). */
    static final class FetchException extends Exception {
        private final int statusCode;

        FetchException(String message, int statusCode, Throwable cause) {
            super(message, cause);
            this.statusCode = statusCode;
        }

        /** The HTTP status, or 0 when no response came. */
        int statusCode() {
            return statusCode;
        }
    }

    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient http;
    private final Duration requestTimeout;
    private final EurekaJsonJacksonCodec codec = new EurekaJsonJacksonCodec();

    EurekaHttp(Duration connectTimeout, Duration requestTimeout) {
        this(connectTimeout, requestTimeout, null);
    }

    /** @param ssl the TLS context of {@code https://} servers, null for the JVM's default */
    EurekaHttp(Duration connectTimeout, Duration requestTimeout, javax.net.ssl.SSLContext ssl) {
        this.requestTimeout = requestTimeout;
        HttpClient.Builder b = HttpClient.newBuilder();
        if (ssl != null) b.sslContext(ssl);
        this.http = b.version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .executor(executor)
                .build();
    }

    /** The basic-auth header value for the given credentials. */
    static String basicAuth(String username, String password) {
        return "Basic "
                + Base64.getEncoder().encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Fetches the whole registry ({@code delta} false) or the recent changes ({@code delta} true).
     *
     * @param authorization the {@code Authorization} header value, or null
     */
    Applications fetch(String serviceUrl, boolean delta, String authorization)
            throws FetchException, InterruptedException {
        URI uri = URI.create(serviceUrl + (delta ? "/apps/delta" : "/apps/"));
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .GET()
                .timeout(requestTimeout)
                .header("Accept", "application/json")
                .header("Accept-Encoding", "gzip");
        if (authorization != null) request.header("Authorization", authorization);
        String what = "GET " + uri;
        HttpResponse<InputStream> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            throw new FetchException(what + " failed: " + describe(e), 0, e);
        }
        try (InputStream raw = response.body()) {
            int code = response.statusCode();
            if (code != 200) {
                throw new FetchException(what + " answered HTTP " + code + hint(code), code, null);
            }
            boolean gzip = response.headers()
                    .firstValue("Content-Encoding")
                    .map(v -> v.equalsIgnoreCase("gzip"))
                    .orElse(false);
            try (InputStream body = gzip ? new GZIPInputStream(raw) : raw) {
                Applications apps = codec.getObjectMapper(Applications.class).readValue(body, Applications.class);
                if (apps == null) throw new FetchException(what + " answered an empty body", code, null);
                return apps;
            }
        } catch (IOException e) {
            throw new FetchException(what + " gave a response that is not Eureka JSON: " + describe(e), 200, e);
        }
    }

    private static String hint(int code) {
        return switch (code) {
            case 401 -> " (unauthorized: check username and password)";
            case 403 -> " (forbidden: wrong credentials, or the server does not serve reads yet after a restart)";
            default -> "";
        };
    }

    private static String describe(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : ": " + firstLine(m));
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    @Override
    public void close() {
        http.shutdownNow();
        executor.shutdownNow();
    }
}
