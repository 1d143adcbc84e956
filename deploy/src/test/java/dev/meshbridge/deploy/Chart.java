package dev.meshbridge.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The chart in {@code deploy/helm/meshbridge}, rendered by Helm itself (helm-java runs Helm's {@code lint} and
 * {@code template} in the JVM) and parsed by fabric8 into its typed Kubernetes model.
 */
final class Chart {

    /** The repository's root: the module runs in {@code deploy/}. */
    static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    static final Path CHART = ROOT.resolve("deploy/helm/meshbridge");
    static final Path EXAMPLES = CHART.resolve("examples");
    static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private Chart() {}

    /** {@code helm lint --strict} on the chart with its own values. */
    static LintResult lint() {
        return new Helm(CHART).lint().strict().call();
    }

    /** {@code helm template meshbridge deploy/helm/meshbridge -n meshbridge -f <each file>}: the YAML Helm prints. */
    static String template(Path... valuesFiles) {
        var command = new Helm(CHART).template().withName("meshbridge").withNamespace("meshbridge");
        for (Path f : valuesFiles) command = command.withValuesFile(f);
        return command.call();
    }

    /** Renders with values given as YAML text (written to a temporary file, as {@code -f} takes them). */
    static String templateWith(String valuesYaml) {
        try {
            Path f = Files.createTempFile("values-", ".yaml");
            try {
                Files.writeString(f, valuesYaml);
                return template(f);
            } finally {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every object in Helm's output, each parsed into fabric8's typed model (unknown kinds as generic resources). */
    static Rendered parse(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String doc : yaml.split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) continue;
            objects.add(SERIALIZATION.unmarshal(doc, HasMetadata.class));
        }
        return new Rendered(objects);
    }

    /** What one rendering produced. */
    record Rendered(List<HasMetadata> objects) {

        <T extends HasMetadata> List<T> all(Class<T> type) {
            return objects.stream().filter(type::isInstance).map(type::cast).toList();
        }

        <T extends HasMetadata> T one(Class<T> type) {
            List<T> found = all(type);
            if (found.size() != 1) throw new AssertionError("expected one " + type.getSimpleName() + ", got " + found);
            return found.get(0);
        }

        <T extends HasMetadata> Optional<T> maybe(Class<T> type) {
            List<T> found = all(type);
            return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
        }

        List<HasMetadata> ofKind(String kind) {
            return objects.stream().filter(o -> o.getKind().equals(kind)).toList();
        }

        /** The workload: a Deployment, or a StatefulSet when every replica keeps its own data volume. */
        HasMetadata workload() {
            List<HasMetadata> w = objects.stream()
                    .filter(o -> o instanceof Deployment || o instanceof StatefulSet)
                    .toList();
            if (w.size() != 1) throw new AssertionError("expected one workload, got " + w);
            return w.get(0);
        }

        PodTemplateSpec podTemplate() {
            HasMetadata w = workload();
            return w instanceof Deployment d
                    ? d.getSpec().getTemplate()
                    : ((StatefulSet) w).getSpec().getTemplate();
        }

        java.util.Map<String, String> workloadSelector() {
            HasMetadata w = workload();
            return w instanceof Deployment d
                    ? d.getSpec().getSelector().getMatchLabels()
                    : ((StatefulSet) w).getSpec().getSelector().getMatchLabels();
        }
    }
}
