package dev.meshbridge.app.config;

import dev.meshbridge.core.config.ConfigNode;
import java.time.Duration;

/**
 * The {@code reload:} section: whether the bridge watches its configuration file and applies registry changes at run
 * time.
 *
 * @param enabled default true
 * @param interval how often the file is checked for a change, default 2s
 */
public record ReloadOptions(boolean enabled, Duration interval) {

    public static final ReloadOptions DEFAULTS = new ReloadOptions(true, Duration.ofSeconds(2));

    public static ReloadOptions parse(ConfigNode section) {
        boolean enabled = section.bool("enabled", true);
        Duration interval = section.duration("interval", DEFAULTS.interval());
        if (interval.toMillis() < 100) {
            section.problem("interval", "must be at least 100ms");
            interval = DEFAULTS.interval();
        }
        return new ReloadOptions(enabled, interval);
    }
}
