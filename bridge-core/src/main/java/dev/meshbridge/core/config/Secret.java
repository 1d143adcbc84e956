package dev.meshbridge.core.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A credential from the configuration, never printed. In {@code bridge.yaml} it is written as a plain string, as
 * {@code {env: NAME}} (an environment variable) or as {@code {file: /path}} (a file, trailing newline removed), read
 * each time it is resolved so a rotated file is picked up on the next (re)connect.
 */
public final class Secret {

    /** Where the value comes from. */
    public enum Source {
        LITERAL,
        ENV,
        FILE
    }

    private final Source source;
    private final String ref;

    private Secret(Source source, String ref) {
        this.source = Objects.requireNonNull(source);
        this.ref = Objects.requireNonNull(ref);
    }

    public static Secret literal(String value) {
        return new Secret(Source.LITERAL, value);
    }

    public static Secret env(String name) {
        return new Secret(Source.ENV, name);
    }

    public static Secret file(Path path) {
        return new Secret(Source.FILE, path.toString());
    }

    public Source source() {
        return source;
    }

    /** The value now. */
    public String resolve() {
        return switch (source) {
            case LITERAL -> ref;
            case ENV -> {
                String v = System.getenv(ref);
                if (v == null) throw new IllegalStateException("environment variable " + ref + " is not set");
                yield v;
            }
            case FILE -> {
                try {
                    yield Files.readString(Path.of(ref), StandardCharsets.UTF_8).stripTrailing();
                } catch (IOException e) {
                    throw new IllegalStateException("cannot read secret file " + ref + ": " + e.getMessage(), e);
                }
            }
        };
    }

    /** Where the value is, safe to log: {@code env:NAME}, {@code file:/path} or {@code <inline>}. */
    public String describe() {
        return switch (source) {
            case LITERAL -> "<inline>";
            case ENV -> "env:" + ref;
            case FILE -> "file:" + ref;
        };
    }

    @Override
    public String toString() {
        return describe();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Secret s && s.source == source && s.ref.equals(ref);
    }

    @Override
    public int hashCode() {
        return Objects.hash(source, ref);
    }
}
