package dev.meshbridge.app.config;

import dev.meshbridge.core.config.ConfigNode;
import java.time.Duration;
import java.util.List;

/**
 * The {@code reload:} section: whether the bridge watches its configuration file and applies registry changes at run
 * time.
 *
 * @param enabled default true
 * @param interval how often the file is checked for a change, default 2s
 * @param confirmRemoval the registries a run-time edit may remove ({@code "*"}: any, and all of them). An edit that
 *     removes a registry not listed here is refused and the running registries stay: an empty, cut or half-written
 *     file looks exactly like an edit that removes registries, and would otherwise empty what the bridge serves
 */
public record ReloadOptions(boolean enabled, Duration interval, List<String> confirmRemoval) {

    public static final ReloadOptions DEFAULTS = new ReloadOptions(true, Duration.ofSeconds(2), List.of());

    public ReloadOptions {
        confirmRemoval = List.copyOf(confirmRemoval);
    }

    public static ReloadOptions parse(ConfigNode section) {
        boolean enabled = section.bool("enabled", true);
        Duration interval = section.duration("interval", DEFAULTS.interval());
        if (interval.toMillis() < 100) {
            section.problem("interval", "must be at least 100ms");
            interval = DEFAULTS.interval();
        }
        List<String> confirm = section.has("confirmRemoval") ? section.strings("confirmRemoval") : List.of();
        return new ReloadOptions(enabled, interval, confirm);
    }

    /** Whether an edit may remove this registry. */
    public boolean removalConfirmed(String registry) {
        return confirmRemoval.contains("*") || confirmRemoval.contains(registry);
    }

    /** The options that need a restart to change (the removal confirmation is read on every edit). */
    public ReloadOptions withoutConfirmation() {
        return new ReloadOptions(enabled, interval, List.of());
    }
}
