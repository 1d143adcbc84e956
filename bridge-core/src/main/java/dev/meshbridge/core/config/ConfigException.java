package dev.meshbridge.core.config;

import java.util.List;
import java.util.stream.Collectors;

/** A configuration that was refused; carries every problem found, each with its file, line and field. */
public final class ConfigException extends Exception {

    private final List<ConfigProblem> problems;

    public ConfigException(List<ConfigProblem> problems) {
        super(format(problems));
        this.problems = List.copyOf(problems);
    }

    public ConfigException(ConfigProblem problem) {
        this(List.of(problem));
    }

    public List<ConfigProblem> problems() {
        return problems;
    }

    private static String format(List<ConfigProblem> problems) {
        if (problems.size() == 1) return "invalid configuration: " + problems.get(0);
        return "invalid configuration, " + problems.size() + " problems:\n"
                + problems.stream().map(p -> "  " + p).collect(Collectors.joining("\n"));
    }
}
