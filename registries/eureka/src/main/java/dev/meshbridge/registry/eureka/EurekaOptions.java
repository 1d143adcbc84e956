package dev.meshbridge.registry.eureka;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.tls.TlsFiles;
import dev.meshbridge.core.watch.NameFilter;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The Eureka-specific options of one {@code registries[]} entry, immutable and with value equality (a watcher is
 * restarted exactly when they change).
 *
 * @param username basic-auth user name, or null for no authentication
 * @param password basic-auth password, or null for no authentication (given together with {@code username})
 * @param fetchInterval pause between two fetches (a delta, or a full fetch when one is due)
 * @param maxBackoff the longest pause between retries while every server fails
 * @param connectTimeout TCP connect timeout per request
 * @param requestTimeout timeout of one whole request
 * @param applications which applications become services ({@code serviceAllowlist} and {@code serviceDenylist})
 * @param weightKey metadata key that holds an instance's weight
 * @param zoneKey metadata key that holds an instance's zone
 * @param regionKey metadata key that holds an instance's region
 * @param hostTemplate how an application name becomes a mesh host
 * @param tls HTTPS to the Eureka servers with a custom CA ({@code caFile}) and optionally a client certificate
 *     ({@code certFile}, {@code keyFile}, {@code keyPassword}), files read again when they change; null for the JVM's
 *     default trust and no client certificate
 */
public record EurekaOptions(
        Secret username,
        Secret password,
        Duration fetchInterval,
        Duration maxBackoff,
        Duration connectTimeout,
        Duration requestTimeout,
        NameFilter applications,
        String weightKey,
        String zoneKey,
        String regionKey,
        HostTemplate hostTemplate,
        TlsFiles tls) {

    public static final Duration DEFAULT_FETCH_INTERVAL = Duration.ofSeconds(3);
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);
    public static final String DEFAULT_HOST_TEMPLATE = "{service}.eureka";
    /** Variables a host template may use: the lower-case application name and the configured registry name. */
    public static final Set<String> HOST_VARIABLES = Set.of("service", "registry");

    private static final Duration MIN_INTERVAL = Duration.ofMillis(10);
    private static final Duration MAX_INTERVAL = Duration.ofMinutes(10);

    public EurekaOptions {
        if ((username == null) != (password == null)) {
            throw new IllegalArgumentException("username and password go together");
        }
        Objects.requireNonNull(fetchInterval, "fetchInterval");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(applications, "applications");
        Objects.requireNonNull(weightKey, "weightKey");
        Objects.requireNonNull(zoneKey, "zoneKey");
        Objects.requireNonNull(regionKey, "regionKey");
        Objects.requireNonNull(hostTemplate, "hostTemplate");
        for (Duration d : List.of(fetchInterval, maxBackoff, connectTimeout, requestTimeout)) {
            if (d.compareTo(MIN_INTERVAL) < 0) throw new IllegalArgumentException("durations must be >= 10ms");
        }
    }

    /** Every option at its default, without credentials. */
    public static EurekaOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds options; starts from the defaults. */
    public static final class Builder {
        private Secret username;
        private Secret password;
        private Duration fetchInterval = DEFAULT_FETCH_INTERVAL;
        private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private NameFilter applications = NameFilter.ALL;
        private String weightKey = "weight";
        private String zoneKey = "zone";
        private String regionKey = "region";
        private HostTemplate hostTemplate = HostTemplate.parse(DEFAULT_HOST_TEMPLATE, HOST_VARIABLES);

        private Builder() {}

        private TlsFiles tls;

        public Builder credentials(Secret username, Secret password) {
            this.username = username;
            this.password = password;
            return this;
        }

        public Builder fetchInterval(Duration fetchInterval) {
            this.fetchInterval = fetchInterval;
            return this;
        }

        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = maxBackoff;
            return this;
        }

        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = requestTimeout;
            return this;
        }

        public Builder applications(NameFilter applications) {
            this.applications = applications;
            return this;
        }

        public Builder weightKey(String weightKey) {
            this.weightKey = weightKey;
            return this;
        }

        public Builder zoneKey(String zoneKey) {
            this.zoneKey = zoneKey;
            return this;
        }

        public Builder regionKey(String regionKey) {
            this.regionKey = regionKey;
            return this;
        }

        public Builder hostTemplate(String template) {
            this.hostTemplate = HostTemplate.parse(template, HOST_VARIABLES);
            return this;
        }

        public EurekaOptions build() {
            return new EurekaOptions(
                    username,
                    password,
                    fetchInterval,
                    maxBackoff,
                    connectTimeout,
                    requestTimeout,
                    applications,
                    weightKey,
                    zoneKey,
                    regionKey,
                    hostTemplate,
                    tls);
        }

        public Builder tls(TlsFiles tls) {
            this.tls = tls;
            return this;
        }
    }

    /** True when requests carry basic-auth credentials. */
    public boolean authenticated() {
        return username != null;
    }

    /** Reads the options from a {@code registries[]} entry; problems are recorded on the entry with their line. */
    static EurekaOptions parse(ConfigNode entry) {
        Builder b = builder();
        Optional<Secret> username = entry.secret("username");
        Optional<Secret> password = entry.secret("password");
        if (username.isPresent() && password.isPresent()) {
            b.credentials(username.get(), password.get());
        } else if (username.isPresent() || password.isPresent()) {
            entry.problem(
                    username.isPresent() ? "password" : "username",
                    "username and password go together: give both or neither");
        }
        Duration fetchInterval = bounded(entry, "fetchInterval", DEFAULT_FETCH_INTERVAL);
        Duration maxBackoff = bounded(entry, "maxBackoff", DEFAULT_MAX_BACKOFF);
        if (fetchInterval != null && maxBackoff != null && maxBackoff.compareTo(fetchInterval) < 0) {
            entry.problem(
                    "maxBackoff",
                    "must not be shorter than fetchInterval (" + format(maxBackoff) + " < " + format(fetchInterval)
                            + ")");
            maxBackoff = fetchInterval;
        }
        b.fetchInterval(fetchInterval == null ? DEFAULT_FETCH_INTERVAL : fetchInterval);
        b.maxBackoff(maxBackoff == null ? DEFAULT_MAX_BACKOFF : maxBackoff);
        Duration connectTimeout = bounded(entry, "connectTimeout", DEFAULT_CONNECT_TIMEOUT);
        Duration requestTimeout = bounded(entry, "requestTimeout", DEFAULT_REQUEST_TIMEOUT);
        if (connectTimeout != null) b.connectTimeout(connectTimeout);
        if (requestTimeout != null) b.requestTimeout(requestTimeout);
        b.applications(NameFilter.parse(entry, List.of()));
        b.weightKey(metadataKey(entry, "weightKey", b.weightKey));
        b.zoneKey(metadataKey(entry, "zoneKey", b.zoneKey));
        b.regionKey(metadataKey(entry, "regionKey", b.regionKey));
        String template = entry.string("hostTemplate", DEFAULT_HOST_TEMPLATE);
        if (template != null) {
            try {
                b.hostTemplate(template);
            } catch (IllegalArgumentException e) {
                entry.problem("hostTemplate", e.getMessage());
            }
        }
        entry.child("tls").ifPresent(t -> {
            if (!t.isMapping()) t.problemHere("expected a mapping with caFile, certFile, keyFile, keyPassword");
            else b.tls(TlsFiles.parse(t));
        });
        return b.build();
    }

    /** The duration at {@code key}, the default when absent, or null after recording a problem. */
    private static Duration bounded(ConfigNode entry, String key, Duration defaultValue) {
        if (!entry.has(key)) return defaultValue;
        Duration v = entry.duration(key, null);
        if (v == null) return null;
        if (v.compareTo(MIN_INTERVAL) < 0 || v.compareTo(MAX_INTERVAL) > 0) {
            entry.problem(key, "must be between 10ms and 10m, got " + format(v));
            return null;
        }
        return v;
    }

    /** A duration as a user writes it: {@code 3s}, {@code 250ms}. */
    static String format(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }

    private static String metadataKey(ConfigNode entry, String key, String defaultValue) {
        String v = entry.string(key, defaultValue);
        if (v == null || v.isBlank()) {
            entry.problem(key, "must be a metadata key, not empty");
            return defaultValue;
        }
        return v.trim();
    }

    @Override
    public String toString() {
        return "EurekaOptions{auth=" + (username == null ? "none" : username.describe() + "/" + password.describe())
                + ", fetchInterval=" + format(fetchInterval) + ", maxBackoff=" + format(maxBackoff) + ", applications="
                + applications
                + ", weightKey=" + weightKey + ", zoneKey=" + zoneKey
                + ", regionKey=" + regionKey + ", hostTemplate=" + hostTemplate + "}";
    }
}
