package dev.meshbridge.core.route;

import dev.meshbridge.core.util.Hash64;
import java.util.Objects;

/**
 * A certificate chain and its private key (PEM), as read from a TLS Secret. Never printed: {@link #toString()} shows
 * a fingerprint of the content only, so the value can sit in records that are logged.
 */
public final class TlsMaterial {

    private final String certificateChain;
    private final String privateKey;
    private final long fingerprint;

    /**
     * @param certificateChain PEM certificates, leaf first
     * @param privateKey the PEM private key
     */
    public TlsMaterial(String certificateChain, String privateKey) {
        this.certificateChain = Objects.requireNonNull(certificateChain, "certificateChain");
        this.privateKey = Objects.requireNonNull(privateKey, "privateKey");
        if (certificateChain.isBlank()) throw new IllegalArgumentException("certificate chain is empty");
        if (privateKey.isBlank()) throw new IllegalArgumentException("private key is empty");
        this.fingerprint =
                new Hash64().putString(certificateChain).putString(privateKey).finish();
    }

    public String certificateChain() {
        return certificateChain;
    }

    public String privateKey() {
        return privateKey;
    }

    /** A content hash of certificate and key (not cryptographic): changes when the secret is rotated. */
    public long fingerprint() {
        return fingerprint;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TlsMaterial t
                && t.fingerprint == fingerprint
                && t.certificateChain.equals(certificateChain)
                && t.privateKey.equals(privateKey);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(fingerprint);
    }

    @Override
    public String toString() {
        return "TlsMaterial{fingerprint=" + Hash64.toHex(fingerprint) + "}";
    }
}
