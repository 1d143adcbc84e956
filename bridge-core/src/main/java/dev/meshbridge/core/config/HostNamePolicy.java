package dev.meshbridge.core.config;

import java.time.Duration;
import java.util.Objects;

/**
 * What a registry's watcher does with an instance registered under a host name rather than an IP address (Spring
 * Cloud Consul and ZooKeeper register the machine's host name unless {@code prefer-ip-address} is set; Eureka's
 * {@code hostName} is one unless {@code preferIpAddress} is set). The keys every registry entry has: {@code
 * nonIpAddress} and {@code hostNameRefresh}.
 *
 * @param mode resolve the name, or leave the instance out
 * @param refresh how long a looked-up address is used before the name is looked up again (a failed lookup is retried
 *     after the same time; a failure after a success keeps the last address)
 */
public record HostNamePolicy(Mode mode, Duration refresh) {

    public static final Duration DEFAULT_REFRESH = Duration.ofSeconds(30);
    public static final Duration MIN_REFRESH = Duration.ofSeconds(1);
    public static final Duration MAX_REFRESH = Duration.ofHours(1);

    public static final HostNamePolicy DEFAULT = new HostNamePolicy(Mode.RESOLVE, DEFAULT_REFRESH);

    /** The {@code nonIpAddress} values. */
    public enum Mode {
        /**
         * Look the name up (first IPv4 address, else the first address), keep the answer for {@code
         * hostNameRefresh}; an instance whose name does not resolve is left out and reported, and gets traffic once
         * it does.
         */
        RESOLVE,
        /** Leave the instance out and report it. */
        SKIP
    }

    public HostNamePolicy {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(refresh, "refresh");
        if (refresh.compareTo(MIN_REFRESH) < 0 || refresh.compareTo(MAX_REFRESH) > 0) {
            throw new IllegalArgumentException("hostNameRefresh must be between 1s and 1h, got " + refresh);
        }
    }

    /** Reads {@code nonIpAddress} and {@code hostNameRefresh}; problems are recorded on the entry. */
    static HostNamePolicy parse(ConfigNode entry) {
        Mode mode = entry.enumValue("nonIpAddress", Mode.class, Mode.RESOLVE);
        Duration refresh = entry.duration("hostNameRefresh", DEFAULT_REFRESH);
        if (refresh.compareTo(MIN_REFRESH) < 0 || refresh.compareTo(MAX_REFRESH) > 0) {
            entry.problem(
                    "hostNameRefresh",
                    "must be between 1s and 1h, got "
                            + refresh.toString().substring(2).toLowerCase(java.util.Locale.ROOT));
            refresh = DEFAULT_REFRESH;
        }
        return new HostNamePolicy(mode, refresh);
    }
}
