package dev.meshbridge.core.route;

/** Where a route sends requests: a service of the registry catalog or a Kubernetes Service. */
public sealed interface Destination permits RegistryDestination, KubernetesServiceDestination {

    /** The host requests go to: a mesh host of the catalog, or {@code name.namespace.svc.<cluster domain>}. */
    String host();

    /** The service port, or 0 when the destination does not name one by number. */
    int port();
}
