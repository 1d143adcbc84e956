package dev.meshbridge.core.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PKCS8Generator;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8EncryptorBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates made in the test, never committed: a CA and the leaves it issues (RSA or EC, with URI, DNS and IP
 * SANs, a chosen serial number and validity), written as the PEM files a Kubernetes Secret volume holds. Needs
 * {@code org.bouncycastle:bcpkix-jdk18on} on the test class path.
 */
public final class TestPki {

    private static final AtomicLong SERIALS = new AtomicLong(System.nanoTime() & 0xffffffL);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String name;
    private final KeyPair key;
    private final X509Certificate cert;

    private TestPki(String name, KeyPair key, X509Certificate cert) {
        this.name = name;
        this.key = key;
        this.cert = cert;
    }

    /** A new self-signed CA (EC P-256), valid from an hour ago for a day. */
    public static TestPki ca(String name) {
        KeyPair k = keyPair(false);
        Instant now = Instant.now();
        X509Certificate c = sign(
                new X500Name("CN=" + name),
                k,
                new X500Name("CN=" + name),
                k,
                BigInteger.valueOf(SERIALS.incrementAndGet()),
                now.minus(Duration.ofHours(1)),
                now.plus(Duration.ofDays(1)),
                true,
                List.of());
        return new TestPki(name, k, c);
    }

    public X509Certificate certificate() {
        return cert;
    }

    /** The CA certificate as PEM, written to {@code file}. */
    public Path writeCa(Path file) {
        return write(file, pem(cert));
    }

    /** A leaf to issue. */
    public Leaf leaf(String commonName) {
        return new Leaf(commonName);
    }

    /** An issued certificate and its key. */
    public record Issued(X509Certificate certificate, KeyPair keyPair, X509Certificate issuer) {

        public BigInteger serial() {
            return certificate.getSerialNumber();
        }

        /** Writes the chain (leaf, then issuer) to {@code cert} and the unencrypted PKCS#8 key to {@code key}. */
        public void write(Path certFile, Path keyFile) {
            TestPki.write(certFile, pem(certificate) + pem(issuer));
            TestPki.write(keyFile, pem(keyPair.getPrivate()));
        }

        /** Writes the key as an encrypted PKCS#8 ({@code ENCRYPTED PRIVATE KEY}, PBES2 with AES-256). */
        public void writeEncryptedKey(Path keyFile, char[] password) {
            try {
                var encryptor = new JceOpenSSLPKCS8EncryptorBuilder(PKCS8Generator.AES_256_CBC)
                        .setPRF(PKCS8Generator.PRF_HMACSHA256)
                        .setIterationCount(2048)
                        .setRandom(RANDOM)
                        .setPassword(password)
                        .setProvider(new org.bouncycastle.jce.provider.BouncyCastleProvider())
                        .build();
                StringWriter out = new StringWriter();
                try (JcaPEMWriter w = new JcaPEMWriter(out)) {
                    w.writeObject(new JcaPKCS8Generator(keyPair.getPrivate(), encryptor));
                }
                TestPki.write(keyFile, out.toString());
            } catch (IOException | org.bouncycastle.operator.OperatorCreationException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** A leaf certificate under construction. */
    public final class Leaf {
        private final String commonName;
        private final List<GeneralName> sans = new ArrayList<>();
        private BigInteger serial = BigInteger.valueOf(SERIALS.incrementAndGet());
        private Instant notBefore = Instant.now().minus(Duration.ofHours(1));
        private Instant notAfter = Instant.now().plus(Duration.ofDays(1));
        private boolean rsa;

        private Leaf(String commonName) {
            this.commonName = commonName;
        }

        public Leaf uri(String uri) {
            sans.add(new GeneralName(GeneralName.uniformResourceIdentifier, uri));
            return this;
        }

        public Leaf dns(String dns) {
            sans.add(new GeneralName(GeneralName.dNSName, dns));
            return this;
        }

        public Leaf ip(String ip) {
            sans.add(new GeneralName(GeneralName.iPAddress, ip));
            return this;
        }

        public Leaf serial(long serial) {
            this.serial = BigInteger.valueOf(serial);
            return this;
        }

        public Leaf validity(Instant from, Instant to) {
            this.notBefore = from;
            this.notAfter = to;
            return this;
        }

        /** An RSA 2048 key instead of EC P-256. */
        public Leaf rsa() {
            this.rsa = true;
            return this;
        }

        public Issued issue() {
            KeyPair k = keyPair(rsa);
            X509Certificate c = sign(
                    new X500Name("CN=" + commonName),
                    k,
                    new X500Name("CN=" + name),
                    key,
                    serial,
                    notBefore,
                    notAfter,
                    false,
                    sans);
            return new Issued(c, k, cert);
        }
    }

    private static KeyPair keyPair(boolean rsa) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance(rsa ? "RSA" : "EC");
            if (rsa) g.initialize(2048, RANDOM);
            else g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static X509Certificate sign(
            X500Name subject,
            KeyPair subjectKey,
            X500Name issuer,
            KeyPair issuerKey,
            BigInteger serial,
            Instant from,
            Instant to,
            boolean ca,
            List<GeneralName> sans) {
        try {
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                    issuer, serial, Date.from(from), Date.from(to), subject, subjectKey.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
            b.addExtension(
                    Extension.keyUsage,
                    true,
                    new KeyUsage(
                            ca
                                    ? KeyUsage.keyCertSign | KeyUsage.cRLSign
                                    : KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            if (!sans.isEmpty())
                b.addExtension(
                        Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)));
            String alg = issuerKey.getPrivate().getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
            return new JcaX509CertificateConverter()
                    .getCertificate(b.build(new JcaContentSignerBuilder(alg).build(issuerKey.getPrivate())));
        } catch (Exception e) {
            throw new IllegalStateException("cannot make a test certificate", e);
        }
    }

    static String pem(Object o) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            if (o instanceof java.security.PrivateKey k) w.writeObject(new JcaPKCS8Generator(k, null));
            else w.writeObject(o);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** Writes through a temporary file and a move, as an atomic writer does. */
    static Path write(Path file, String content) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, content, StandardCharsets.US_ASCII);
            return Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
