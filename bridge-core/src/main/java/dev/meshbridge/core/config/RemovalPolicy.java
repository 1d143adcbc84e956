package dev.meshbridge.core.config;

import java.time.Duration;
import java.util.Objects;

/**
 * When the bridge lets an endpoint or a service that left a registry leave the catalog: the rules every registry type
 * shares, applied in bridge-core's {@code ShardPublisher}. The keys of every {@code registries[]} entry: {@code
 * reregistrationWindow}, {@code warmUp} and the {@code deletionGuard} section.
 *
 * <ol>
 *   <li><b>re-registration</b>: an instance that leaves is still served for {@code reregistrationWindow}; one that is
 *       registered again within it (a client reconnecting, a provider re-creating its znode, a rolling restart on the
 *       same address) never leaves;
 *   <li><b>warm-up</b>: after the watcher reconnects, or sees that the server restarted, additions and changes apply
 *       at once but no removal does for {@code warmUp}; then the watcher reads the registry in full and the removals
 *       that are still real apply (subject to 3);
 *   <li><b>deletion guard</b>: removals that would take away more than {@link Guard#share()} of the registry's
 *       endpoints (from {@link Guard#minEndpoints()} endpoints on), or more than {@link Guard#serviceShare()} of one
 *       service's, within {@link Guard#window()}, are held; the last state is served, and the guard is shown until the
 *       registry's state has been stable for {@link Guard#releaseWhenStableFor()} or an operator releases it.
 * </ol>
 *
 * @param reregistrationWindow how long an instance that left is still served, in case it comes back
 * @param warmUp how long removals are held after a reconnect or server restart; null: the registry type's default,
 *     derived from its client heartbeat or session rules
 * @param guard the deletion guard
 */
public record RemovalPolicy(Duration reregistrationWindow, Duration warmUp, Guard guard) {

    public static final Duration DEFAULT_REREGISTRATION_WINDOW = Duration.ofMillis(500);
    public static final Duration MAX_REREGISTRATION_WINDOW = Duration.ofMinutes(1);
    public static final Duration MAX_WARM_UP = Duration.ofHours(1);

    /** The defaults: a 500 ms window, the type's warm-up, the default guard. */
    public static final RemovalPolicy DEFAULT = new RemovalPolicy(DEFAULT_REREGISTRATION_WINDOW, null, Guard.DEFAULT);

    /** No window, no warm-up, no guard: every removal applies at once (tests of other behaviour, benchmarks). */
    public static final RemovalPolicy IMMEDIATE = new RemovalPolicy(Duration.ZERO, Duration.ZERO, Guard.OFF);

    public RemovalPolicy {
        Objects.requireNonNull(reregistrationWindow, "reregistrationWindow");
        Objects.requireNonNull(guard, "guard");
        if (reregistrationWindow.isNegative() || reregistrationWindow.compareTo(MAX_REREGISTRATION_WINDOW) > 0) {
            throw new IllegalArgumentException("reregistrationWindow must be between 0s and 1m");
        }
        if (warmUp != null && (warmUp.isNegative() || warmUp.compareTo(MAX_WARM_UP) > 0)) {
            throw new IllegalArgumentException("warmUp must be between 0s and 1h");
        }
    }

    /** The warm-up in force: the configured one, else the type's default. */
    public Duration warmUpOr(Duration typeDefault) {
        return warmUp != null ? warmUp : typeDefault;
    }

    public RemovalPolicy withWarmUp(Duration d) {
        return new RemovalPolicy(reregistrationWindow, d, guard);
    }

    public RemovalPolicy withReregistrationWindow(Duration d) {
        return new RemovalPolicy(d, warmUp, guard);
    }

    public RemovalPolicy withGuard(Guard g) {
        return new RemovalPolicy(reregistrationWindow, warmUp, g);
    }

    /**
     * The deletion guard.
     *
     * @param enabled false: removals are never held for their amount
     * @param share more than this share of the registry's endpoints leaving within {@code window} trips the guard for
     *     the whole registry
     * @param serviceShare more than this share of one service's endpoints leaving within {@code window} trips it for
     *     that service
     * @param minEndpoints the registry rule applies from this many endpoints on
     * @param minServiceEndpoints the service rule applies to services with at least this many endpoints
     * @param window how far back removals count
     * @param releaseWhenStableFor the guard lets the held removals go once nothing changed in the registry for this
     *     long; {@link Duration#ZERO}: only an operator releases it
     */
    public record Guard(
            boolean enabled,
            double share,
            double serviceShare,
            int minEndpoints,
            int minServiceEndpoints,
            Duration window,
            Duration releaseWhenStableFor) {

        public static final Guard DEFAULT =
                new Guard(true, 0.5, 0.8, 10, 5, Duration.ofMinutes(1), Duration.ofMinutes(2));
        public static final Guard OFF = new Guard(false, 1, 1, 0, 0, Duration.ofMinutes(1), Duration.ZERO);

        public Guard {
            Objects.requireNonNull(window, "window");
            Objects.requireNonNull(releaseWhenStableFor, "releaseWhenStableFor");
            if (!(share >= 0 && share <= 1) || !(serviceShare >= 0 && serviceShare <= 1)) {
                throw new IllegalArgumentException("shares must be between 0 and 1");
            }
            if (minEndpoints < 0 || minServiceEndpoints < 0) throw new IllegalArgumentException("negative minimum");
            if (window.isNegative() || window.isZero()) throw new IllegalArgumentException("window must be positive");
            if (releaseWhenStableFor.isNegative()) throw new IllegalArgumentException("negative releaseWhenStableFor");
        }
    }

    /** Reads {@code reregistrationWindow}, {@code warmUp} and {@code deletionGuard}; problems go on the entry. */
    static RemovalPolicy parse(ConfigNode entry) {
        Duration window = entry.duration("reregistrationWindow", DEFAULT_REREGISTRATION_WINDOW);
        if (window.isNegative() || window.compareTo(MAX_REREGISTRATION_WINDOW) > 0) {
            entry.problem("reregistrationWindow", "expected 0s..1m, got " + text(window));
            window = DEFAULT_REREGISTRATION_WINDOW;
        }
        Duration warmUp = null;
        if (entry.has("warmUp")) {
            warmUp = entry.duration("warmUp", null);
            if (warmUp != null && (warmUp.isNegative() || warmUp.compareTo(MAX_WARM_UP) > 0)) {
                entry.problem("warmUp", "expected 0s..1h, got " + text(warmUp));
                warmUp = null;
            }
        }
        Guard guard = Guard.DEFAULT;
        if (entry.has("deletionGuard")) {
            ConfigNode g = entry.section("deletionGuard");
            Guard d = Guard.DEFAULT;
            boolean enabled = g.bool("enabled", d.enabled());
            double share = g.share("share", d.share(), 0, 1);
            double serviceShare = g.share("serviceShare", d.serviceShare(), 0, 1);
            int min = g.integer("minEndpoints", d.minEndpoints(), 0, Integer.MAX_VALUE);
            int minService = g.integer("minServiceEndpoints", d.minServiceEndpoints(), 0, Integer.MAX_VALUE);
            Duration w = g.duration("window", d.window());
            if (w.isNegative() || w.isZero() || w.compareTo(Duration.ofHours(24)) > 0) {
                g.problem("window", "expected 1s..24h, got " + text(w));
                w = d.window();
            }
            Duration stable = g.duration("releaseWhenStableFor", d.releaseWhenStableFor());
            if (stable.isNegative() || stable.compareTo(Duration.ofDays(7)) > 0) {
                g.problem("releaseWhenStableFor", "expected 0s (only by hand)..7d, got " + text(stable));
                stable = d.releaseWhenStableFor();
            }
            guard = new Guard(enabled, share, serviceShare, min, minService, w, stable);
        }
        return new RemovalPolicy(window, warmUp, guard);
    }

    private static String text(Duration d) {
        return d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }
}
