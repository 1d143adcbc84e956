package dev.meshbridge.ingress;

import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.PathType;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteMatch;
import dev.meshbridge.core.route.SecretRef;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.WeightedDestination;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.api.model.networking.v1.HTTPIngressPath;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressBackend;
import io.fabric8.kubernetes.api.model.networking.v1.IngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.IngressServiceBackend;
import io.fabric8.kubernetes.api.model.networking.v1.IngressSpec;
import io.fabric8.kubernetes.api.model.networking.v1.IngressTLS;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Turns one {@code networking.k8s.io/v1} Ingress into what it contributes to the route table, or into the list of
 * its problems. Pure: the same Ingress gives the same result.
 *
 * <p>Rules:
 *
 * <ol>
 *   <li>a destination annotation ({@code meshbridge.dev/destination}, else {@code higress.io/destination}) gives the
 *       destinations of every path of the Ingress and of its default backend, whatever their {@code backend} says
 *       (Higress's samples put an McpBridge resource there as a placeholder);
 *   <li>without it, a {@code backend.service} is a Kubernetes Service destination, and a {@code backend.resource}
 *       with {@code apiGroup: meshbridge.dev}, {@code kind: RegistryService} is the registry service whose mesh host
 *       is the resource's {@code name};
 *   <li>paths: {@code Exact} and {@code Prefix} as such, {@code ImplementationSpecific} (or none) as a prefix; a
 *       missing path is {@code /}; a trailing slash of a prefix is dropped ({@code /api/} is {@code /api});
 *   <li>hosts are lower-cased; a wildcard host {@code *.example.com} is kept;
 *   <li>a rewrite annotation ({@link RewriteAnnotation}) gives every path of the rules a path rewrite;
 *   <li>TLS sections keep their Secret reference; the certificate is resolved by the source;
 *   <li>any problem refuses the whole Ingress: the caller keeps serving its last valid version.
 * </ol>
 */
final class IngressTranslator {

    /** The {@code apiGroup} of our backend resource kind. */
    static final String RESOURCE_GROUP = "meshbridge.dev";
    /** The {@code kind} of our backend resource: its {@code name} is a mesh host of the catalog. */
    static final String RESOURCE_KIND = "RegistryService";

    static final String HIGRESS_GROUP = "networking.higress.io";
    static final String HIGRESS_KIND = "McpBridge";

    /** Something that refuses the Ingress, at a field ({@code spec.rules[0].http.paths[1].backend}). */
    record Problem(String field, String message) {
        @Override
        public String toString() {
            return field.isEmpty() ? message : field + ": " + message;
        }
    }

    /**
     * One Ingress translated.
     *
     * @param ref which Ingress
     * @param routes what it contributes (TLS material not yet resolved); empty when refused
     * @param problems why it was refused; empty when accepted
     * @param warnings what does not refuse it but a user should know
     */
    record Translation(IngressRef ref, Optional<IngressRoutes> routes, List<Problem> problems, List<String> warnings) {

        boolean accepted() {
            return problems.isEmpty();
        }

        /** Adds the warnings, as {@link Issue#WARNING} issues of this Ingress, to {@code issues}. */
        void addWarnings(Map<IngressRef, List<Issue>> issues) {
            for (String w : warnings)
                issues.computeIfAbsent(ref, r -> new ArrayList<>()).add(new Issue(Issue.WARNING, w));
        }
    }

    private final String source;
    private final String clusterDomain;

    IngressTranslator(String source, String clusterDomain) {
        this.source = Objects.requireNonNull(source);
        this.clusterDomain = Objects.requireNonNull(clusterDomain);
    }

    /** The reference of an Ingress: namespace ({@code default} when absent), name and creation time. */
    IngressRef ref(Ingress ingress) {
        ObjectMeta m = ingress.getMetadata();
        String ns = m.getNamespace() == null || m.getNamespace().isEmpty() ? "default" : m.getNamespace();
        return new IngressRef(source, ns, m.getName(), created(m));
    }

    private static Instant created(ObjectMeta m) {
        if (m.getCreationTimestamp() == null) return Instant.EPOCH;
        try {
            return Instant.parse(m.getCreationTimestamp());
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }

    Translation translate(Ingress ingress) {
        IngressRef ref = ref(ingress);
        List<Problem> problems = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        ObjectMeta meta = ingress.getMetadata();
        if (meta.getCreationTimestamp() != null && created(meta).equals(Instant.EPOCH)) {
            problems.add(new Problem(
                    "metadata.creationTimestamp",
                    "'" + meta.getCreationTimestamp() + "' is not an RFC 3339 time such as 2024-05-01T10:00:00Z"));
        }
        Map<String, String> annotations = meta.getAnnotations() == null ? Map.of() : meta.getAnnotations();
        List<WeightedDestination> annotated = null;
        boolean annotationBroken = false;
        String annotationKey = annotations.containsKey(DestinationAnnotation.OURS)
                ? DestinationAnnotation.OURS
                : annotations.containsKey(DestinationAnnotation.HIGRESS) ? DestinationAnnotation.HIGRESS : null;
        if (annotationKey != null) {
            if (annotationKey.equals(DestinationAnnotation.OURS)
                    && annotations.containsKey(DestinationAnnotation.HIGRESS))
                warnings.add("both " + DestinationAnnotation.OURS + " and " + DestinationAnnotation.HIGRESS
                        + " are set; " + DestinationAnnotation.OURS + " is used");
            DestinationAnnotation.Result r = DestinationAnnotation.parse(
                    Objects.requireNonNullElse(annotations.get(annotationKey), ""), clusterDomain);
            String field = "metadata.annotations[" + annotationKey + "]";
            for (String p : r.problems()) problems.add(new Problem(field, p));
            if (r.problems().isEmpty()) annotated = r.destinations();
            else annotationBroken = true;
        }

        RewriteAnnotation.Result rewrite = RewriteAnnotation.parse(annotations);
        problems.addAll(rewrite.problems());
        warnings.addAll(rewrite.warnings());

        IngressSpec spec = ingress.getSpec();
        List<HttpRoute> routes = new ArrayList<>();
        Optional<HttpRoute> defaultBackend = Optional.empty();
        List<TlsEntry> tls = new ArrayList<>();
        if (spec == null) {
            problems.add(new Problem("spec", "an Ingress needs a spec with rules or a defaultBackend"));
        } else {
            if (spec.getDefaultBackend() != null) {
                List<WeightedDestination> d = annotationBroken
                        ? null
                        : destinations(spec.getDefaultBackend(), annotated, ref, "spec.defaultBackend", problems);
                if (d != null) defaultBackend = Optional.of(new HttpRoute(ref, IngressRoutes.DEFAULT_BACKEND_MATCH, d));
            }
            List<IngressRule> rules = spec.getRules() == null ? List.of() : spec.getRules();
            for (int i = 0; i < rules.size(); i++) {
                translateRule(
                        rules.get(i),
                        "spec.rules[" + i + "]",
                        annotated,
                        annotationBroken,
                        rewrite,
                        ref,
                        routes,
                        problems);
            }
            List<IngressTLS> tlsList = spec.getTls() == null ? List.of() : spec.getTls();
            for (int i = 0; i < tlsList.size(); i++) {
                IngressTLS t = tlsList.get(i);
                String field = "spec.tls[" + i + "]";
                List<String> hosts = new ArrayList<>();
                for (String h : t.getHosts() == null ? List.<String>of() : t.getHosts()) {
                    String host = host(h, field + ".hosts", problems);
                    if (host != null && !host.isEmpty()) hosts.add(host);
                }
                if (t.getSecretName() == null || t.getSecretName().isEmpty()) {
                    warnings.add(field + " names no secretName; its hosts get no certificate");
                    continue;
                }
                if (!Dns1123.isSubdomain(t.getSecretName())) {
                    problems.add(
                            new Problem(field + ".secretName", "'" + t.getSecretName() + "' is not a Secret name"));
                    continue;
                }
                tls.add(new TlsEntry(ref, hosts, new SecretRef(ref.namespace(), t.getSecretName()), Optional.empty()));
            }
            if (routes.isEmpty() && defaultBackend.isEmpty() && problems.isEmpty())
                warnings.add("the Ingress has no path and no defaultBackend: it routes nothing");
        }
        if (!problems.isEmpty())
            return new Translation(ref, Optional.empty(), List.copyOf(problems), List.copyOf(warnings));
        return new Translation(
                ref,
                Optional.of(new IngressRoutes(ref, routes, defaultBackend, tls)),
                List.of(),
                List.copyOf(warnings));
    }

    private void translateRule(
            IngressRule rule,
            String field,
            List<WeightedDestination> annotated,
            boolean annotationBroken,
            RewriteAnnotation.Result rewrite,
            IngressRef ref,
            List<HttpRoute> routes,
            List<Problem> problems) {
        String host = host(rule.getHost(), field + ".host", problems);
        if (host == null || rule.getHttp() == null || rule.getHttp().getPaths() == null) return;
        List<HTTPIngressPath> paths = rule.getHttp().getPaths();
        for (int j = 0; j < paths.size(); j++) {
            HTTPIngressPath p = paths.get(j);
            String pf = field + ".http.paths[" + j + "]";
            PathType type = pathType(p.getPathType(), pf + ".pathType", problems);
            String path = p.getPath() == null || p.getPath().isEmpty() ? "/" : p.getPath();
            if (!path.startsWith("/")) {
                problems.add(new Problem(pf + ".path", "'" + path + "' must start with /"));
                continue;
            }
            String rewriteProblem = rewrite.pathProblem(path);
            if (rewriteProblem != null) {
                problems.add(new Problem(pf + ".path", rewriteProblem));
                continue;
            }
            if (type == PathType.PREFIX && path.length() > 1 && path.endsWith("/"))
                path = path.substring(0, path.length() - 1);
            if (p.getBackend() == null) {
                problems.add(new Problem(pf + ".backend", "a path needs a backend"));
                continue;
            }
            if (annotationBroken) continue; // its problems are reported; the backends are placeholders
            List<WeightedDestination> d = destinations(p.getBackend(), annotated, ref, pf + ".backend", problems);
            if (type == null || d == null) continue;
            routes.add(new HttpRoute(ref, new RouteMatch(host, type, path), d, rewrite.forPath(path)));
        }
    }

    private static String host(String raw, String field, List<Problem> problems) {
        if (raw == null || raw.isEmpty()) return "";
        String host = raw.toLowerCase(Locale.ROOT);
        String checked = host.startsWith("*.") ? host.substring(2) : host;
        String problem = Dns1123.subdomainProblem(checked);
        if (problem != null) {
            problems.add(new Problem(field, "host '" + raw + "' " + problem));
            return null;
        }
        return host;
    }

    private static PathType pathType(String raw, String field, List<Problem> problems) {
        if (raw == null) return PathType.PREFIX;
        return switch (raw) {
            case "Exact" -> PathType.EXACT;
            case "Prefix", "ImplementationSpecific" -> PathType.PREFIX;
            default -> {
                problems.add(new Problem(field, "'" + raw + "' is not Exact, Prefix or ImplementationSpecific"));
                yield null;
            }
        };
    }

    private List<WeightedDestination> destinations(
            IngressBackend backend,
            List<WeightedDestination> annotated,
            IngressRef ref,
            String field,
            List<Problem> problems) {
        if (annotated != null) return annotated;
        IngressServiceBackend service = backend.getService();
        TypedLocalObjectReference resource = backend.getResource();
        if (service != null && resource != null) {
            problems.add(new Problem(field, "give either service or resource, not both"));
            return null;
        }
        if (service != null) {
            if (service.getName() == null || !Dns1123.isLabel(service.getName())) {
                problems.add(new Problem(field + ".service.name", "'" + service.getName() + "' is not a Service name"));
                return null;
            }
            Integer number =
                    service.getPort() == null ? null : service.getPort().getNumber();
            String portName =
                    service.getPort() == null ? null : service.getPort().getName();
            boolean hasNumber = number != null && number != 0;
            boolean hasName = portName != null && !portName.isEmpty();
            if (hasNumber == hasName) {
                problems.add(new Problem(field + ".service.port", "give the port's number or its name"));
                return null;
            }
            if (hasNumber && (number < 1 || number > 65535)) {
                problems.add(new Problem(field + ".service.port.number", number + " is not in 1..65535"));
                return null;
            }
            String host = KubernetesServiceDestination.hostOf(service.getName(), ref.namespace(), clusterDomain);
            return List.of(new WeightedDestination(
                    new KubernetesServiceDestination(
                            ref.namespace(), service.getName(), host, hasNumber ? number : 0, hasName ? portName : ""),
                    100));
        }
        if (resource != null) {
            String group = Objects.requireNonNullElse(resource.getApiGroup(), "");
            String kind = Objects.requireNonNullElse(resource.getKind(), "");
            if (group.equals(RESOURCE_GROUP) && kind.equals(RESOURCE_KIND)) {
                String host = Objects.requireNonNullElse(resource.getName(), "").toLowerCase(Locale.ROOT);
                String problem = Dns1123.subdomainProblem(host);
                if (problem != null) {
                    problems.add(
                            new Problem(field + ".resource.name", "mesh host '" + resource.getName() + "' " + problem));
                    return null;
                }
                return List.of(new WeightedDestination(RegistryDestination.of(host), 100));
            }
            if (group.equals(HIGRESS_GROUP) && kind.equals(HIGRESS_KIND)) {
                problems.add(new Problem(
                        field + ".resource",
                        "an McpBridge backend needs the " + DestinationAnnotation.HIGRESS + " (or "
                                + DestinationAnnotation.OURS + ") annotation naming the destinations"));
                return null;
            }
            problems.add(new Problem(
                    field + ".resource",
                    "unsupported backend resource " + group + "/" + kind + "; use apiGroup " + RESOURCE_GROUP
                            + ", kind " + RESOURCE_KIND + ", name <mesh host>"));
            return null;
        }
        problems.add(new Problem(field, "a backend needs a service or a resource"));
        return null;
    }
}
