package dev.meshbridge.registry.eureka.testing;

import com.netflix.appinfo.DataCenterInfo;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import com.netflix.appinfo.LeaseInfo;
import com.netflix.appinfo.MyDataCenterInfo;
import com.netflix.discovery.converters.jackson.EurekaJsonJacksonCodec;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Registers instances with a Eureka server over its REST API the way a Spring Cloud Netflix client does: the same
 * requests (register, heartbeat, status override, cancel) and an {@link InstanceInfo} built as Spring Cloud's {@code
 * InstanceInfoFactory} builds it, encoded with Eureka's own Jackson codec.
 */
public final class EurekaRegistrar implements AutoCloseable {

    private final String serviceUrl;
    private final String authorization;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final EurekaJsonJacksonCodec codec = new EurekaJsonJacksonCodec();
    private final Map<String, InstanceInfo> registered = new ConcurrentHashMap<>();

    public EurekaRegistrar(String serviceUrl) {
        this(serviceUrl, null, null);
    }

    public EurekaRegistrar(String serviceUrl, String username, String password) {
        this.serviceUrl = serviceUrl.endsWith("/") ? serviceUrl : serviceUrl + "/";
        this.authorization = username == null
                ? null
                : "Basic "
                        + Base64.getEncoder()
                                .encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * An instance as a Spring Cloud application {@code spring.application.name=app} with {@code
     * eureka.instance.prefer-ip-address=true} on {@code ip:port} registers it: {@code hostName} is the IP too,
     * instance id {@code ip:app:port}, app name upper case, VIP address the lower-case name, non-secure port enabled,
     * secure port 443 disabled, data center {@code MyOwn}, leases of 30/90 s, status UP (change it on the builder).
     */
    public static InstanceInfo.Builder springCloudInstance(String app, String ip, int port) {
        return springCloudInstance(app, ip, ip, port);
    }

    /**
     * As {@link #springCloudInstance(String, String, int)}, with Spring's default {@code prefer-ip-address=false}: the
     * instance registers the machine's host name as {@code hostName} (what Spring's and Netflix's clients connect
     * to) and its IP as {@code ipAddr}.
     */
    public static InstanceInfo.Builder springCloudInstance(String app, String hostName, String ip, int port) {
        String host = hostName;
        return InstanceInfo.Builder.newBuilder()
                .setInstanceId(host + ":" + app + ":" + port)
                .setAppName(app)
                .setHostName(host)
                .setIPAddr(ip)
                .setPort(port)
                .enablePort(InstanceInfo.PortType.UNSECURE, true)
                .setSecurePort(443)
                .enablePort(InstanceInfo.PortType.SECURE, false)
                .setVIPAddress(app)
                .setSecureVIPAddress(app)
                .setDataCenterInfo(new MyDataCenterInfo(DataCenterInfo.Name.MyOwn))
                .setLeaseInfo(LeaseInfo.Builder.newBuilder()
                        .setRenewalIntervalInSecs(30)
                        .setDurationInSecs(90)
                        .build())
                .setHomePageUrl("/", null)
                .setStatusPageUrl("/actuator/info", null)
                .setHealthCheckUrls("/actuator/health", null, null)
                .setMetadata(Map.of("management.port", Integer.toString(port)))
                .setStatus(InstanceStatus.UP);
    }

    /** {@code POST apps/{APP}}: registers or re-registers (Spring Cloud re-registers on every own status change). */
    public void register(InstanceInfo info) {
        String body;
        try {
            body = codec.getObjectMapper(InstanceInfo.class).writeValueAsString(info);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        send(request("apps/" + info.getAppName())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
        registered.put(instancePath(info), info);
    }

    /**
     * {@code PUT apps/{APP}/{id}?status=..&lastDirtyTimestamp=..}: the 30-second renewal.
     *
     * @return false when the server answers 404 (it does not know the instance, or its status override was removed):
     *     a Spring Cloud client then registers again
     */
    public boolean heartbeat(InstanceInfo info) {
        return send(
                        request(instancePath(info) + "?status=" + info.getStatus() + "&lastDirtyTimestamp="
                                        + info.getLastDirtyTimestamp())
                                .PUT(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        true)
                != 404;
    }

    /** A heartbeat, and a new registration when the server asks for one (what Spring Cloud's client does). */
    public void renew(InstanceInfo info) {
        if (!heartbeat(info)) register(info);
    }

    /** {@code PUT apps/{APP}/{id}/status?value=..}: an operator's status override, e.g. OUT_OF_SERVICE. */
    public void overrideStatus(InstanceInfo info, InstanceStatus status) {
        send(request(instancePath(info) + "/status?value=" + status + "&lastDirtyTimestamp="
                        + info.getLastDirtyTimestamp())
                .PUT(HttpRequest.BodyPublishers.noBody())
                .build());
    }

    /** {@code DELETE apps/{APP}/{id}/status}: removes the override; the instance's own status applies again. */
    public void removeStatusOverride(InstanceInfo info) {
        send(request(instancePath(info) + "/status?lastDirtyTimestamp=" + info.getLastDirtyTimestamp())
                .DELETE()
                .build());
    }

    /** {@code DELETE apps/{APP}/{id}}: the instance shuts down and cancels its lease. */
    public void cancel(InstanceInfo info) {
        send(request(instancePath(info)).DELETE().build());
        registered.remove(instancePath(info));
    }

    /** Cancels every instance this registrar registered and did not cancel (those the server still knows). */
    public void cancelAll() {
        for (String path : List.copyOf(registered.keySet())) {
            send(request(path).DELETE().build(), true);
            registered.remove(path);
        }
    }

    private String instancePath(InstanceInfo info) {
        return "apps/" + info.getAppName() + "/" + info.getId();
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(serviceUrl + path))
                .timeout(Duration.ofSeconds(10))
                .header("Accept", "application/json");
        if (authorization != null) b.header("Authorization", authorization);
        return b;
    }

    private void send(HttpRequest request) {
        send(request, false);
    }

    private int send(HttpRequest request, boolean notFoundIsAnswer) {
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(request.method() + " " + request.uri() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (notFoundIsAnswer && response.statusCode() == 404) return 404;
        if (response.statusCode() / 100 != 2) {
            throw new IllegalStateException(request.method() + " " + request.uri() + " answered "
                    + response.statusCode() + ": " + response.body());
        }
        return response.statusCode();
    }

    @Override
    public void close() {
        http.close();
    }
}
