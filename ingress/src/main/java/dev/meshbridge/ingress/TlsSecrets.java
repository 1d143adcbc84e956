package dev.meshbridge.ingress;

import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.SecretRef;
import dev.meshbridge.core.route.TlsEntry;
import dev.meshbridge.core.route.TlsMaterial;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads the certificate chain and key of a TLS Secret ({@code tls.crt} and {@code tls.key}, base64 in {@code data}
 * as the API returns them, or plain in {@code stringData} as files may give them). Never logs their content.
 */
final class TlsSecrets {

    static final String CERT = "tls.crt";
    static final String KEY = "tls.key";

    /** The material, or why there is none (exactly one is non-null). */
    record Result(TlsMaterial material, String problem) {}

    private TlsSecrets() {}

    static Result read(Secret secret) {
        String name = secret.getMetadata().getName();
        String cert;
        String key;
        try {
            cert = value(secret, CERT);
            key = value(secret, KEY);
        } catch (IllegalArgumentException e) {
            return new Result(null, "Secret " + name + ": " + e.getMessage());
        }
        if (cert == null || key == null)
            return new Result(null, "Secret " + name + " has no " + (cert == null ? CERT : KEY));
        if (!cert.contains("-----BEGIN ") || !key.contains("-----BEGIN "))
            return new Result(null, "Secret " + name + " does not hold PEM in " + CERT + " and " + KEY);
        return new Result(new TlsMaterial(cert, key), null);
    }

    /**
     * Resolves the material of a TLS entry, adding an issue to {@code issues} when the Secret is missing or unusable.
     *
     * @param state empty while the Secret has not been read yet (no issue then); else the Secret, or empty when it
     *     does not exist
     */
    static TlsEntry resolve(
            TlsEntry entry, Optional<Optional<Secret>> state, IngressRef current, Map<IngressRef, List<Issue>> issues) {
        if (state.isEmpty()) return entry.withMaterial(Optional.empty());
        String problem;
        if (state.get().isEmpty()) {
            problem = "TLS Secret " + entry.secret() + " does not exist";
        } else {
            Result r = read(state.get().get());
            if (r.material() != null) return entry.withMaterial(Optional.of(r.material()));
            problem = r.problem();
        }
        String hosts = entry.hosts().isEmpty() ? "every host" : String.join(", ", entry.hosts());
        issues.computeIfAbsent(current, k -> new ArrayList<>())
                .add(new Issue(Issue.TLS_SECRET, problem + "; " + hosts + " get no certificate"));
        return entry.withMaterial(Optional.empty());
    }

    /** The contribution with every TLS entry resolved through {@code lookup} (see {@link #resolve}). */
    static IngressRoutes withTls(
            IngressRoutes routes,
            Function<SecretRef, Optional<Optional<Secret>>> lookup,
            IngressRef current,
            Map<IngressRef, List<Issue>> issues) {
        List<TlsEntry> tls = new ArrayList<>();
        for (TlsEntry entry : routes.tls()) tls.add(resolve(entry, lookup.apply(entry.secret()), current, issues));
        return new IngressRoutes(routes.owner(), routes.routes(), routes.defaultBackend(), tls);
    }

    /** The value of a key: from stringData, else base64-decoded from data; null when absent. */
    static String value(Secret secret, String name) {
        Map<String, String> plain = secret.getStringData();
        if (plain != null && plain.get(name) != null && !plain.get(name).isBlank()) return plain.get(name);
        Map<String, String> data = secret.getData();
        if (data == null || data.get(name) == null || data.get(name).isBlank()) return null;
        try {
            return new String(Base64.getMimeDecoder().decode(data.get(name)), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + " is not valid base64");
        }
    }
}
