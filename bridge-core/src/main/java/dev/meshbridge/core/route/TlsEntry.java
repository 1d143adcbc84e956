package dev.meshbridge.core.route;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One TLS section of an Ingress: the hosts it terminates and the Secret holding their certificate.
 *
 * @param owner the Ingress that declares it
 * @param hosts the hosts, lower case, sorted; empty means every host without a more specific certificate
 * @param secret the Secret named
 * @param material the certificate and key, when the Secret was found and valid; empty otherwise (the source reports
 *     why)
 */
public record TlsEntry(IngressRef owner, List<String> hosts, SecretRef secret, Optional<TlsMaterial> material) {

    public TlsEntry {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(secret, "secret");
        Objects.requireNonNull(material, "material");
        hosts = hosts.stream().sorted().distinct().toList();
    }

    /** The same entry with the material resolved (or cleared). */
    public TlsEntry withMaterial(Optional<TlsMaterial> resolved) {
        return new TlsEntry(owner, hosts, secret, resolved);
    }
}
