package dev.meshbridge.core.config;

/**
 * One thing wrong with a configuration file, located so a user can go straight to it.
 *
 * @param source the file (or resource) name
 * @param line 1-based line, 0 when unknown
 * @param column 1-based column, 0 when unknown
 * @param path the field, e.g. {@code registries[1].zkServicesPath}
 * @param message what is wrong and, where it helps, what would be right
 */
public record ConfigProblem(String source, int line, int column, String path, String message) {

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(source);
        if (line > 0) {
            sb.append(':').append(line);
            if (column > 0) sb.append(':').append(column);
        }
        sb.append(": ");
        if (!path.isEmpty()) sb.append(path).append(": ");
        return sb.append(message).toString();
    }
}
