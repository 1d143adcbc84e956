package dev.meshbridge.registry.nacos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.core.config.Secret;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.SSLContext;

/**
 * The few Nacos HTTP APIs the watcher needs beyond the gRPC naming protocol: login (to report wrong credentials
 * clearly and to call the others), the namespace list (for {@code nacosNamespaceId: "*"}) and the service list of all
 * groups (for {@code nacosGroups: ["*"]}, which the gRPC protocol cannot list).
 *
 * <p>Each call tries the Nacos 3 path first and falls back to the Nacos 2 path when the server answers 404, then
 * remembers which one worked:
 *
 * <ol>
 *   <li>login: {@code POST /v3/auth/user/login}, else {@code POST /v1/auth/users/login};
 *   <li>namespaces: {@code GET /v3/admin/core/namespace/list}, else {@code GET /v1/console/namespaces};
 *   <li>services: {@code GET /v3/admin/ns/service/list}, else {@code GET /v1/ns/catalog/services}.
 * </ol>
 *
 * <p>With {@code tls} the calls go to {@code https://} with the configured CA and client certificate; with access keys
 * the namespace and service lists carry nacos-client's signature ({@code ak}, {@code data}, {@code signature}) as
 * query parameters, as nacos-client 2.x's HTTP naming client sent them.
 *
 * <p>Not thread-safe: the watcher calls it from its one I/O thread. Never logs or returns credentials.
 */
final class NacosHttpApi {

    /** A service name with its group. */
    record GroupedName(String group, String name) {}

    /** Nacos refused the credentials (a refused login, or HTTP 401). */
    static final class AuthException extends IOException {
        AuthException(String message) {
            super(message);
        }
    }

    /** Nacos accepted the credentials but the user lacks a permission (HTTP 403 after a login). */
    static final class PermissionException extends IOException {
        PermissionException(String message) {
            super(message);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int PAGE_SIZE = 500;

    private final List<String> addresses;
    private final String contextPath;
    private final Secret username;
    private final Secret password;
    private final Secret accessKey;
    private final Secret secretKey;
    private final SSLContext ssl;
    private final Duration timeout;
    private final Clock clock;
    private HttpClient http;

    private String token;
    private Instant tokenExpiry = Instant.MIN;
    private int preferred;
    private Boolean v3Login;
    private Boolean v3Namespaces;
    private Boolean v3Services;

    NacosHttpApi(List<String> addresses, String contextPath, Secret username, Secret password, Duration timeout) {
        this(addresses, contextPath, username, password, null, null, null, timeout, Clock.systemUTC());
    }

    /**
     * @param accessKey {@code nacosAccessKey}: the list calls are signed as nacos-client signs its naming requests;
     *     null for none
     * @param ssl the TLS context of {@code https://} calls (custom CA, client certificate); null for {@code http://}
     */
    NacosHttpApi(
            List<String> addresses,
            String contextPath,
            Secret username,
            Secret password,
            Secret accessKey,
            Secret secretKey,
            SSLContext ssl,
            Duration timeout,
            Clock clock) {
        this.addresses = List.copyOf(addresses);
        this.contextPath = contextPath;
        this.username = username;
        this.password = password;
        this.accessKey = accessKey;
        this.secretKey = secretKey;
        this.ssl = ssl;
        this.timeout = timeout;
        this.clock = clock;
    }

    /** Logs in when credentials are configured and the token is missing or about to expire; no-op otherwise. */
    void login() throws IOException, InterruptedException {
        if (username == null) return;
        if (token != null && clock.instant().isBefore(tokenExpiry)) return;
        String user = username.resolve();
        String form = "username=" + encode(user) + "&password=" + encode(password.resolve());
        Response r = null;
        if (v3Login == null || v3Login) {
            r = send("POST", contextPath + "/v3/auth/user/login", form);
            if (r.status == 404 || r.status == 501) {
                v3Login = false;
                r = null;
            } else {
                v3Login = true;
            }
        }
        if (r == null) r = send("POST", contextPath + "/v1/auth/users/login", form);
        // Nacos 2 refuses a login with 401 or 403; Nacos 3 answers a wrong user or password with HTTP 500 and a body
        // that says so ("User not found! Please check user exist or password is right!")
        if (r.status == 401 || r.status == 403 || (r.status != 200 && refusedLogin(r.body))) {
            throw new AuthException("Nacos at " + r.address + " refused the login of user '" + user + "' (HTTP "
                    + r.status + ": " + abbreviate(r.body) + "); check nacosUsername and nacosPassword");
        }
        if (r.status != 200) {
            throw new IOException(
                    "login to Nacos at " + r.address + " failed: HTTP " + r.status + " " + abbreviate(r.body));
        }
        JsonNode json = parse(r);
        JsonNode t = json.path("accessToken");
        if (!t.isTextual() || t.asText().isEmpty()) {
            // a server with auth disabled answers without a token
            token = "";
            tokenExpiry = clock.instant().plus(Duration.ofMinutes(5));
            return;
        }
        token = t.asText();
        long ttl = json.path("tokenTtl").asLong(18_000);
        tokenExpiry = clock.instant().plusSeconds(Math.max(10, ttl * 9 / 10));
    }

    /** Drops the token, so that the next {@link #login} logs in again (the server refused it). */
    void forgetToken() {
        token = null;
    }

    /** The token of the last successful login: empty when the server has auth off, null before any login. */
    String token() {
        return token;
    }

    /** Every namespace id; the public namespace is {@code public} (Nacos 2 lists it as an empty id). */
    List<String> namespaces() throws IOException, InterruptedException {
        login();
        JsonNode data;
        String what = "list the namespaces (nacosNamespaceId: \"*\")";
        if (v3Namespaces == null || v3Namespaces) {
            Response r = send("GET", contextPath + "/v3/admin/core/namespace/list" + query(Map.of()), null);
            if (r.status == 404 || r.status == 501) {
                v3Namespaces = false;
            } else {
                v3Namespaces = true;
                data = checked(
                                r,
                                what,
                                "the right to list namespaces: read on Nacos 3's admin API /v3/admin/core/namespace"
                                        + " (the global admin role ROLE_ADMIN has it); or list the namespace ids in"
                                        + " nacosNamespaceId instead of \"*\"")
                        .path("data");
                return namespaceIds(data);
            }
        }
        Response r = send("GET", contextPath + "/v1/console/namespaces" + query(Map.of()), null);
        data = checked(r, what, "the right to list namespaces (GET /v1/console/namespaces)")
                .path("data");
        return namespaceIds(data);
    }

    private static List<String> namespaceIds(JsonNode data) throws IOException {
        if (!data.isArray()) throw new IOException("namespace list has no data array");
        Set<String> ids = new LinkedHashSet<>();
        for (JsonNode ns : data) {
            String id = ns.path("namespace").asText("");
            ids.add(id.isEmpty() ? NacosOptions.PUBLIC_NAMESPACE : id);
        }
        return new ArrayList<>(ids);
    }

    /** Every service of every group in a namespace, paged. */
    Set<GroupedName> servicesOfAllGroups(String namespaceId) throws IOException, InterruptedException {
        login();
        Set<GroupedName> out = new LinkedHashSet<>();
        for (int page = 1; ; page++) {
            Map<String, String> params = new LinkedHashMap<>();
            params.put("namespaceId", namespaceId);
            params.put("groupNameParam", "");
            params.put("serviceNameParam", "");
            params.put("pageNo", Integer.toString(page));
            params.put("pageSize", Integer.toString(PAGE_SIZE));
            params.put("withInstances", "false");
            List<JsonNode> items = new ArrayList<>();
            boolean done = false;
            if (v3Services == null || v3Services) {
                params.put("ignoreEmptyService", "false");
                Response r = send("GET", contextPath + "/v3/admin/ns/service/list" + query(params), null);
                if (r.status == 404 || r.status == 501) {
                    v3Services = false;
                    params.remove("ignoreEmptyService");
                } else {
                    v3Services = true;
                    JsonNode pageNode = checked(r, servicesWhat(namespaceId), servicesNeed(namespaceId))
                            .path("data")
                            .path("pageItems");
                    pageNode.forEach(items::add);
                    done = true;
                }
            }
            if (!done) {
                Response r = send("GET", contextPath + "/v1/ns/catalog/services" + query(params), null);
                checked(r, servicesWhat(namespaceId), servicesNeed(namespaceId))
                        .path("serviceList")
                        .forEach(items::add);
            }
            for (JsonNode item : items) {
                String name = item.path("name").asText("");
                String group = item.path("groupName").asText(NacosOptions.DEFAULT_GROUP);
                if (!name.isEmpty()) out.add(new GroupedName(group, name));
            }
            if (items.size() < PAGE_SIZE) return out;
        }
    }

    void close() {
        if (http != null) http.close();
    }

    private String query(Map<String, String> params) {
        StringJoiner q = new StringJoiner("&", "?", "");
        q.setEmptyValue("");
        params.forEach((k, v) -> q.add(encode(k) + "=" + encode(v)));
        if (token != null && !token.isEmpty()) q.add("accessToken=" + encode(token));
        if (accessKey != null) {
            // as nacos-client's naming requests: the list calls name no service, so the signed data is the time
            String data = Long.toString(clock.millis());
            q.add("ak=" + encode(accessKey.resolve()));
            q.add("data=" + encode(data));
            q.add("signature=" + encode(sign(data, secretKey.resolve())));
        }
        return q.toString();
    }

    /**
     * nacos-client's access-key signature: Base64 of HMAC-SHA1 over {@code data} keyed with the secret key's UTF-8
     * bytes. {@code data} is the time in milliseconds, then {@code @@} and the grouped service name when the request
     * is about one service.
     */
    static String sign(String data, String secretKey) {
        try {
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(secretKey.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
            return java.util.Base64.getEncoder().encodeToString(mac.doFinal(data.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.GeneralSecurityException e) {
            // HmacSHA1 is in every JDK; never the key in the message
            throw new IllegalStateException(
                    "cannot compute an HmacSHA1 signature: " + e.getClass().getSimpleName());
        }
    }

    private static String servicesWhat(String namespaceId) {
        return "list the services of every group in namespace '" + namespaceId + "' (nacosGroups: [\"*\"])";
    }

    private static String servicesNeed(String namespaceId) {
        return "read permission (r) on namespace '" + namespaceId + "' (resource " + namespaceId + ":*:*)";
    }

    /**
     * The answer's JSON, or the reason it has none: 401 (or 403 without credentials) is about the credentials, 403
     * with them is a missing permission, named with {@code need}.
     */
    private JsonNode checked(Response r, String what, String need) throws IOException {
        if (r.status == 401 || (r.status == 403 && username == null)) {
            token = null;
            String check = username != null
                    ? "; check nacosUsername and nacosPassword"
                    : accessKey != null
                            ? "; check nacosAccessKey and nacosSecretKey (the access key from " + accessKey.describe()
                                    + ")"
                            : "; the server has auth on: set nacosUsername and nacosPassword";
            throw new AuthException("Nacos at " + r.address + " refused to " + what + " (HTTP " + r.status + ": "
                    + abbreviate(r.body) + ")" + check);
        }
        if (r.status == 403) {
            String user = username.resolve();
            throw new PermissionException("Nacos at " + r.address + " refused to " + what + " for user '" + user
                    + "' (HTTP 403: " + abbreviate(r.body) + "); the user needs " + need);
        }
        if (r.status != 200) {
            throw new IOException("Nacos at " + r.address + " answered HTTP " + r.status + ": " + abbreviate(r.body));
        }
        return parse(r);
    }

    private static JsonNode parse(Response r) throws IOException {
        try {
            return JSON.readTree(r.body);
        } catch (IOException e) {
            throw new IOException(
                    "Nacos at " + r.address + " answered something that is not JSON: " + abbreviate(r.body));
        }
    }

    private record Response(String address, int status, String body) {}

    /** Sends to the last address that worked, then to the others in turn when one cannot be reached. */
    private Response send(String method, String pathAndQuery, String form) throws IOException, InterruptedException {
        if (http == null) {
            HttpClient.Builder b =
                    HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1);
            if (ssl != null) b.sslContext(ssl);
            http = b.build();
        }
        IOException last = null;
        for (int i = 0; i < addresses.size(); i++) {
            int index = (preferred + i) % addresses.size();
            String address = addresses.get(index);
            HttpRequest.Builder b = HttpRequest.newBuilder(
                            URI.create((ssl != null ? "https://" : "http://") + address + pathAndQuery))
                    .timeout(timeout);
            if (form != null) {
                b.header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString(form));
            } else {
                b.method(method, HttpRequest.BodyPublishers.noBody());
            }
            try {
                HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
                preferred = index;
                return new Response(address, r.statusCode(), r.body());
            } catch (IOException e) {
                last = new IOException("cannot reach Nacos at " + address + ": " + NacosErrors.cause(e), e);
            }
        }
        throw last != null ? last : new IOException("no Nacos address configured");
    }

    /** Nacos 3's answer to a wrong user or password, whatever its status code. */
    static boolean refusedLogin(String body) {
        if (body == null) return false;
        String b = body.toLowerCase(java.util.Locale.ROOT);
        return b.contains("user not found")
                || b.contains("password is right")
                || b.contains("password is wrong")
                || b.contains("unknown user")
                || b.contains("authentication failed");
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String abbreviate(String s) {
        if (s == null) return "";
        String t = s.strip();
        return t.length() > 200 ? t.substring(0, 200) + "..." : t;
    }
}
