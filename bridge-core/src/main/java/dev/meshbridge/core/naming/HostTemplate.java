package dev.meshbridge.core.naming;

import dev.meshbridge.core.util.Hash64;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A host naming scheme: a template such as {@code {service}.{group}.{namespace}.nacos} or {@code
 * {interface}[.v-{version}][.g-{group}].dubbo}, rendered into a DNS-1123 host for each service.
 *
 * <p>Template syntax: {@code {name}} is replaced by the value of that variable; a part in {@code [...]} is left out
 * when any variable inside it is empty. Every other character is literal.
 *
 * <p>Rendering, in this order:
 *
 * <ol>
 *   <li>each value is lower-cased and every character outside {@code [a-z0-9.-]} becomes {@code -} (so Nacos's
 *       {@code DEFAULT_GROUP} gives {@code default-group}, as in Higress);
 *   <li>the result is split at dots; empty labels are dropped and each label loses leading and trailing dashes;
 *   <li>a label longer than 63 characters is cut to 56 and given a dash and 6 hex digits of its hash, so distinct
 *       long names stay distinct;
 *   <li>a host that is still not a DNS-1123 subdomain (longer than 253, or empty) is an error the watcher reports.
 * </ol>
 */
public final class HostTemplate {

    private sealed interface Part permits Literal, Variable, Optional {}

    private record Literal(String text) implements Part {}

    private record Variable(String name) implements Part {}

    private record Optional(List<Part> parts) implements Part {}

    private final String source;
    private final List<Part> parts;
    private final Set<String> variables;

    private HostTemplate(String source, List<Part> parts, Set<String> variables) {
        this.source = source;
        this.parts = parts;
        this.variables = variables;
    }

    /**
     * Parses a template.
     *
     * @param template the template text
     * @param allowed the variables this registry provides
     * @throws IllegalArgumentException naming the problem, when the template is malformed or names an unknown
     *     variable
     */
    public static HostTemplate parse(String template, Set<String> allowed) {
        if (template == null || template.isBlank()) throw new IllegalArgumentException("host template is empty");
        Set<String> vars = new TreeSet<>();
        int[] pos = {0};
        List<Part> parts = parseParts(template, pos, false, allowed, vars);
        if (vars.isEmpty()) {
            throw new IllegalArgumentException("host template '" + template
                    + "' uses no variable, so every service would get the same host; use one of "
                    + new TreeSet<>(allowed));
        }
        return new HostTemplate(template, List.copyOf(parts), Set.copyOf(vars));
    }

    private static List<Part> parseParts(
            String t, int[] pos, boolean inOptional, Set<String> allowed, Set<String> vars) {
        List<Part> parts = new ArrayList<>();
        StringBuilder literal = new StringBuilder();
        while (pos[0] < t.length()) {
            char c = t.charAt(pos[0]);
            if (c == '{') {
                int end = t.indexOf('}', pos[0]);
                if (end < 0)
                    throw new IllegalArgumentException(
                            "host template '" + t + "': '{' at " + pos[0] + " is not closed");
                String name = t.substring(pos[0] + 1, end).trim();
                if (!allowed.contains(name)) {
                    throw new IllegalArgumentException("host template '" + t + "': unknown variable {" + name
                            + "}; this registry provides " + new TreeSet<>(allowed));
                }
                flush(literal, parts);
                parts.add(new Variable(name));
                vars.add(name);
                pos[0] = end + 1;
            } else if (c == '[') {
                if (inOptional)
                    throw new IllegalArgumentException("host template '" + t + "': optional parts cannot nest");
                flush(literal, parts);
                pos[0]++;
                List<Part> inner = parseParts(t, pos, true, allowed, vars);
                parts.add(new Optional(List.copyOf(inner)));
            } else if (c == ']') {
                if (!inOptional)
                    throw new IllegalArgumentException("host template '" + t + "': ']' at " + pos[0] + " has no '['");
                flush(literal, parts);
                pos[0]++;
                return parts;
            } else if (c == '}') {
                throw new IllegalArgumentException("host template '" + t + "': '}' at " + pos[0] + " has no '{'");
            } else {
                literal.append(c);
                pos[0]++;
            }
        }
        if (inOptional) throw new IllegalArgumentException("host template '" + t + "': '[' is not closed");
        flush(literal, parts);
        return parts;
    }

    private static void flush(StringBuilder literal, List<Part> parts) {
        if (!literal.isEmpty()) {
            parts.add(new Literal(literal.toString()));
            literal.setLength(0);
        }
    }

    /** The variables the template uses. */
    public Set<String> variables() {
        return variables;
    }

    /**
     * Renders the host for one service.
     *
     * @param values variable values; a missing variable counts as empty
     * @return a valid DNS-1123 host
     * @throws IllegalArgumentException when no valid host results (the message says why)
     */
    public String render(Map<String, String> values) {
        StringBuilder sb = new StringBuilder();
        append(parts, values, sb);
        String host = normalize(sb.toString());
        String problem = Dns1123.subdomainProblem(host);
        if (problem != null) {
            throw new IllegalArgumentException("host '" + host + "' from template '" + source + "' " + problem);
        }
        return host;
    }

    private static void append(List<Part> parts, Map<String, String> values, StringBuilder sb) {
        for (Part part : parts) {
            switch (part) {
                case Literal l -> sb.append(l.text());
                case Variable v -> sb.append(clean(values.getOrDefault(v.name(), "")));
                case Optional o -> {
                    boolean present = o.parts().stream()
                            .allMatch(p -> !(p instanceof Variable v)
                                    || !clean(values.getOrDefault(v.name(), "")).isEmpty());
                    if (present) append(o.parts(), values, sb);
                }
            }
        }
    }

    private static String clean(String value) {
        if (value == null) return "";
        String lower = value.toLowerCase(Locale.ROOT);
        StringBuilder sb = new StringBuilder(lower.length());
        for (int i = 0; i < lower.length(); i++) {
            char c = lower.charAt(i);
            sb.append((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ? c : '-');
        }
        return sb.toString();
    }

    private static String normalize(String raw) {
        StringBuilder out = new StringBuilder(raw.length());
        for (String label : raw.toLowerCase(Locale.ROOT).split("\\.")) {
            int b = 0;
            int e = label.length();
            while (b < e && label.charAt(b) == '-') b++;
            while (e > b && label.charAt(e - 1) == '-') e--;
            if (b == e) continue;
            String l = label.substring(b, e);
            if (l.length() > Dns1123.MAX_LABEL) {
                l = l.substring(0, 56) + "-" + Hash64.toHex(Hash64.of(label)).substring(0, 6);
            }
            if (!out.isEmpty()) out.append('.');
            out.append(l);
        }
        return out.toString();
    }

    @Override
    public String toString() {
        return source;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostTemplate t && t.source.equals(source);
    }

    @Override
    public int hashCode() {
        return source.hashCode();
    }
}
