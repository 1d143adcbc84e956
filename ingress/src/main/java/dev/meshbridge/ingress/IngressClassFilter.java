package dev.meshbridge.ingress;

import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressClass;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;

/**
 * Decides which Ingresses the bridge serves, as Kubernetes defines IngressClass selection.
 *
 * <ol>
 *   <li>our classes: the configured class name, plus every IngressClass whose {@code spec.controller} is the
 *       configured controller name;
 *   <li>an Ingress with {@code spec.ingressClassName} is ours when that class is ours;
 *   <li>otherwise one with the legacy annotation {@code kubernetes.io/ingress.class} is ours when its value is ours;
 *   <li>otherwise (no class at all) it is ours when one of our IngressClasses carries {@code
 *       ingressclass.kubernetes.io/is-default-class: "true"}, or when the source accepts unclassed Ingresses (the
 *       directory source does: its files are meant for the bridge).
 * </ol>
 */
final class IngressClassFilter {

    static final String LEGACY_ANNOTATION = "kubernetes.io/ingress.class";
    static final String DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class";

    private final String className;
    private final String controllerName;

    IngressClassFilter(String className, String controllerName) {
        this.className = Objects.requireNonNull(className);
        this.controllerName = Objects.requireNonNull(controllerName);
    }

    boolean accepts(Ingress ingress, Collection<IngressClass> classes, boolean acceptUnclassed) {
        String cls = ingress.getSpec() == null ? null : ingress.getSpec().getIngressClassName();
        if (cls == null || cls.isEmpty()) {
            Map<String, String> annotations = ingress.getMetadata().getAnnotations();
            cls = annotations == null ? null : annotations.get(LEGACY_ANNOTATION);
        }
        if (cls != null && !cls.isEmpty()) return isOurs(cls, classes);
        if (acceptUnclassed) return true;
        for (IngressClass c : classes) {
            if (isOurs(c) && isDefault(c)) return true;
        }
        return false;
    }

    private boolean isOurs(String name, Collection<IngressClass> classes) {
        if (name.equals(className)) return true;
        for (IngressClass c : classes) {
            if (name.equals(c.getMetadata().getName()) && isOurs(c)) return true;
        }
        return false;
    }

    private boolean isOurs(IngressClass c) {
        return className.equals(c.getMetadata().getName())
                || (c.getSpec() != null && controllerName.equals(c.getSpec().getController()));
    }

    private static boolean isDefault(IngressClass c) {
        Map<String, String> a = c.getMetadata().getAnnotations();
        return a != null && "true".equals(a.get(DEFAULT_CLASS_ANNOTATION));
    }
}
