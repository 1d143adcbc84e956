package dev.meshbridge.ingress;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** YAML manifests as users write them, shared by the cluster and directory tests. */
final class Manifests {

    private Manifests() {}

    /** A PEM-looking certificate whose second line names it, so tests can tell rotations apart. */
    static String cert(String id) {
        return "-----BEGIN CERTIFICATE-----\n" + id + "\n-----END CERTIFICATE-----\n";
    }

    static String key(String id) {
        return "-----BEGIN PRIVATE KEY-----\nkey-" + id + "\n-----END PRIVATE KEY-----\n";
    }

    static String tlsSecret(String namespace, String name, String id) {
        Base64.Encoder b64 = Base64.getEncoder();
        return """
                apiVersion: v1
                kind: Secret
                metadata:
                  name: %s
                  namespace: %s
                type: kubernetes.io/tls
                data:
                  tls.crt: %s
                  tls.key: %s
                """.formatted(
                        name,
                        namespace,
                        b64.encodeToString(cert(id).getBytes(StandardCharsets.UTF_8)),
                        b64.encodeToString(key(id).getBytes(StandardCharsets.UTF_8)));
    }

    /** Higress's samples/nacos-discovery/multi-destination.yaml as published, plus {@code ingressClassName}. */
    static final String HIGRESS_MULTI_DESTINATION = """
            apiVersion: networking.k8s.io/v1
            kind: Ingress
            metadata:
              annotations:
                higress.io/destination: |
                  33% service-provider.DEFAULT-GROUP.public.nacos
                  33% service-provider-gray.DEFAULT-GROUP.public.nacos
                  34% bar-service.default.svc.cluster.local:5678
              name: echo
              namespace: default
            spec:
              ingressClassName: meshbridge
              rules:
              - http:
                  paths:
                  - backend:
                      resource:
                        apiGroup: networking.higress.io
                        kind: McpBridge
                        name: default
                    path: /echo
                    pathType: Prefix
            """;

    /** An Ingress of class meshbridge with one path to a registry service through backend.resource. */
    static String registryIngress(String namespace, String name, String host, String path, String meshHost) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: %s
                  namespace: %s
                spec:
                  ingressClassName: meshbridge
                  rules:
                  - host: %s
                    http:
                      paths:
                      - path: %s
                        pathType: Prefix
                        backend:
                          resource:
                            apiGroup: meshbridge.dev
                            kind: RegistryService
                            name: %s
                """.formatted(name, namespace, host, path, meshHost);
    }

    /** An Ingress of class meshbridge terminating TLS for {@code host} with {@code secret}, routing / to a Service. */
    static String tlsIngress(String namespace, String name, String host, String secret) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: %s, namespace: %s}
                spec:
                  ingressClassName: meshbridge
                  tls: [{hosts: [%s], secretName: %s}]
                  rules:
                  - host: %s
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                """.formatted(name, namespace, host, secret, host);
    }

    /**
     * An Ingress in namespace {@code apps} routing {@code /<name>} to {@code <name>.dubbo}, with the given class line
     * ({@code ingressClassName: x} or empty) and annotation ({@code kubernetes.io/ingress.class: x} or empty).
     */
    static String classIngress(String name, String classLine, String annotation) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: %s
                  namespace: apps
                  annotations: {%s}
                spec:
                  %s
                  rules:
                  - http:
                      paths:
                      - path: /%s
                        pathType: Prefix
                        backend: {resource: {apiGroup: meshbridge.dev, kind: RegistryService, name: %s.dubbo}}
                """.formatted(name, annotation, classLine, name, name);
    }

    /** Creates or updates the object in the YAML, as {@code kubectl apply} would. */
    static <T extends HasMetadata> T apply(KubernetesClient client, String yaml) {
        T object = client.getKubernetesSerialization().unmarshal(yaml);
        return client.resource(object).createOr(NonDeletingOperation::update);
    }

    /** Registers Higress's McpBridge CRD ({@code networking.higress.io/v1}, plural mcpbridges, namespaced). */
    static void registerMcpBridgeCrd(KubernetesMockServer server) {
        server.expectCustomResource(new CustomResourceDefinitionContext.Builder()
                .withGroup("networking.higress.io")
                .withVersion("v1")
                .withKind("McpBridge")
                .withPlural("mcpbridges")
                .withScope("Namespaced")
                .build());
    }
}
