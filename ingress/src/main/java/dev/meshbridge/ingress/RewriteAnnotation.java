package dev.meshbridge.ingress;

import dev.meshbridge.core.route.PathRewrite;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the path rewrite of an Ingress from its annotations. It applies to every path of the Ingress's rules (not to
 * its {@code spec.defaultBackend}).
 *
 * <ol>
 *   <li>{@code meshbridge.dev/rewrite-target} (ours) and Higress's {@code higress.io/rewrite-path} replace the matched
 *       prefix: {@link PathRewrite.Kind#PREFIX};
 *   <li>{@code nginx.ingress.kubernetes.io/rewrite-target} (and Higress's {@code higress.io/rewrite-target}, its alias)
 *       is accepted in its capture-free form only and, as ingress-nginx does since 0.22, replaces the whole path:
 *       {@link PathRewrite.Kind#WHOLE_PATH}; a target using {@code $1} or any variable, or a path of the Ingress that
 *       is a regular expression (ingress-nginx reads every path of such an Ingress as one), refuses the Ingress; a
 *       route whose path equals the target is not rewritten (as ingress-nginx);
 *   <li>when several are set, the first in this order counts, with a warning: ours, {@code higress.io/rewrite-path},
 *       {@code higress.io/rewrite-target}, {@code nginx.ingress.kubernetes.io/rewrite-target}.
 * </ol>
 */
final class RewriteAnnotation {

    static final String OURS = "meshbridge.dev/rewrite-target";
    static final String HIGRESS_PATH = "higress.io/rewrite-path";
    static final String HIGRESS_TARGET = "higress.io/rewrite-target";
    static final String NGINX_TARGET = "nginx.ingress.kubernetes.io/rewrite-target";

    private static final List<String> ORDER = List.of(OURS, HIGRESS_PATH, HIGRESS_TARGET, NGINX_TARGET);

    /** Characters that make an ingress-nginx path a regular expression ({@code .} is left alone: it matches itself). */
    private static final String REGEX_CHARACTERS = "()[]{}*+?|^$\\";

    /**
     * The rewrite of an Ingress.
     *
     * @param rewrite the rewrite; empty when no annotation is set or it is refused
     * @param key the annotation it comes from, or null
     * @param problems what refuses the Ingress, as {@code (field, message)} pairs
     * @param warnings what has no effect
     */
    record Result(
            Optional<PathRewrite> rewrite,
            String key,
            List<IngressTranslator.Problem> problems,
            List<String> warnings) {

        /** The rewrite of one route of the Ingress: none when an ingress-nginx target equals the route's path. */
        Optional<PathRewrite> forPath(String path) {
            if (rewrite.isPresent()
                    && rewrite.get().kind() == PathRewrite.Kind.WHOLE_PATH
                    && rewrite.get().target().equals(path)) return Optional.empty();
            return rewrite;
        }

        /** The problem of a path under this rewrite, or null: ingress-nginx reads the paths as regular expressions. */
        String pathProblem(String path) {
            if (!NGINX_TARGET.equals(key) && !HIGRESS_TARGET.equals(key)) return null;
            for (int i = 0; i < path.length(); i++) {
                if (REGEX_CHARACTERS.indexOf(path.charAt(i)) >= 0)
                    return "'" + path + "' is a regular expression under " + key
                            + "; only plain paths with a capture-free target are supported";
            }
            return null;
        }
    }

    private RewriteAnnotation() {}

    static Result parse(Map<String, String> annotations) {
        List<String> set = new ArrayList<>();
        for (String k : ORDER) {
            if (annotations.containsKey(k)) set.add(k);
        }
        if (set.isEmpty()) return new Result(Optional.empty(), null, List.of(), List.of());
        String key = set.get(0);
        List<String> warnings = new ArrayList<>();
        if (set.size() > 1)
            warnings.add("several rewrite annotations are set (" + String.join(", ", set) + "); " + key + " is used");
        String value = annotations.get(key) == null ? "" : annotations.get(key).trim();
        String field = "metadata.annotations[" + key + "]";
        String problem = value.isEmpty() ? "is empty" : PathRewrite.problem(value);
        if (problem != null) {
            if (value.contains("$") && !key.equals(OURS) && !key.equals(HIGRESS_PATH))
                problem = "uses capture groups or variables ('" + value
                        + "'); only the capture-free form (a plain path such as /api) is supported";
            else if (!value.isEmpty()) problem = "'" + value + "' " + problem;
            return new Result(
                    Optional.empty(),
                    key,
                    List.of(new IngressTranslator.Problem(field, problem)),
                    List.copyOf(warnings));
        }
        PathRewrite rewrite =
                key.equals(OURS) || key.equals(HIGRESS_PATH) ? PathRewrite.prefix(value) : PathRewrite.wholePath(value);
        return new Result(Optional.of(rewrite), key, List.of(), List.copyOf(warnings));
    }
}
