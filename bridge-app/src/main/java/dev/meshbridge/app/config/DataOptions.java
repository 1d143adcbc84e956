package dev.meshbridge.app.config;

import dev.meshbridge.core.config.ConfigNode;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The {@code data:} section: where the bridge keeps the last good catalog, so that a restart serves what was served
 * before even while a registry is unreachable.
 *
 * @param directory the data directory (created when missing); null keeps nothing on disk. Default {@code data},
 *     relative to the directory of {@code bridge.yaml}; in a container, a volume
 * @param writeInterval the least time between two writes of the catalog file (default 10s): a burst of changes is
 *     written once, after it
 */
public record DataOptions(Path directory, Duration writeInterval) {

    public static final Duration DEFAULT_WRITE_INTERVAL = Duration.ofSeconds(10);
    public static final DataOptions DEFAULTS = new DataOptions(Path.of("data"), DEFAULT_WRITE_INTERVAL);
    /** Nothing kept on disk. */
    public static final DataOptions OFF = new DataOptions(null, DEFAULT_WRITE_INTERVAL);

    public DataOptions {
        Objects.requireNonNull(writeInterval, "writeInterval");
    }

    public boolean enabled() {
        return directory != null;
    }

    public static DataOptions parse(ConfigNode section) {
        String dir = section.string("directory", "data");
        Path path = null;
        if (dir != null && !dir.isBlank()) {
            try {
                path = Path.of(dir.trim());
            } catch (InvalidPathException e) {
                section.problem("directory", "'" + dir + "' is not a path: " + e.getReason());
            }
        }
        Duration interval = section.duration("writeInterval", DEFAULT_WRITE_INTERVAL);
        if (interval.toMillis() < 100) {
            section.problem("writeInterval", "must be at least 100ms");
            interval = DEFAULT_WRITE_INTERVAL;
        }
        return new DataOptions(path, interval);
    }
}
