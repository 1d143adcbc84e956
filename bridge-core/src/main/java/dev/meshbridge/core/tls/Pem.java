package dev.meshbridge.core.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PEM files TLS deployments hand out (cert-manager, Istio, {@code consul tls cert create}, openssl):
 * certificates, and private keys in PKCS#8 ({@code PRIVATE KEY}), encrypted PKCS#8 ({@code ENCRYPTED PRIVATE KEY},
 * with a password), PKCS#1 ({@code RSA PRIVATE KEY}) or SEC1 ({@code EC PRIVATE KEY}). Error messages name the file,
 * never a password or key bytes.
 */
public final class Pem {

    private static final Pattern BLOCK =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");
    private static final byte[] RSA_ALGORITHM = {
        0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00
    };
    private static final byte[] EC_PUBLIC_KEY_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01
    };

    private Pem() {}

    /** Every certificate in the file, in order. */
    public static List<X509Certificate> certificates(Path file) throws IOException, GeneralSecurityException {
        byte[] bytes = Files.readAllBytes(file);
        List<X509Certificate> out = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (var c : factory.generateCertificates(new ByteArrayInputStream(bytes))) {
                out.add((X509Certificate) c);
            }
        } catch (CertificateException e) {
            throw new GeneralSecurityException(file + " does not hold PEM certificates: " + e.getMessage(), e);
        }
        if (out.isEmpty()) throw new GeneralSecurityException(file + " holds no certificate");
        return out;
    }

    /** The first private key in the file, which must not be encrypted. */
    public static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
        return privateKey(file, null);
    }

    /**
     * The first private key in the file; an {@code ENCRYPTED PRIVATE KEY} (PKCS#8, PBES2 as openssl writes it) is
     * decrypted with {@code password}.
     */
    public static PrivateKey privateKey(Path file, char[] password) throws IOException, GeneralSecurityException {
        Matcher m = BLOCK.matcher(Files.readString(file, StandardCharsets.US_ASCII));
        while (m.find()) {
            String type = m.group(1);
            byte[] der = Base64.getMimeDecoder().decode(m.group(2));
            switch (type) {
                case "PRIVATE KEY" -> {
                    return pkcs8(der, file);
                }
                case "RSA PRIVATE KEY" -> {
                    return KeyFactory.getInstance("RSA")
                            .generatePrivate(new PKCS8EncodedKeySpec(pkcs8Info(RSA_ALGORITHM, der)));
                }
                case "EC PRIVATE KEY" -> {
                    byte[] algorithm = tlv(0x30, concat(EC_PUBLIC_KEY_OID, curveOf(der, file)));
                    return KeyFactory.getInstance("EC")
                            .generatePrivate(new PKCS8EncodedKeySpec(pkcs8Info(algorithm, der)));
                }
                case "ENCRYPTED PRIVATE KEY" -> {
                    if (password == null || password.length == 0)
                        throw new GeneralSecurityException(
                                file + " holds an encrypted private key and no key password is configured");
                    return pkcs8(decrypt(der, password, file), file);
                }
                default -> {
                    // another block (a certificate next to the key): keep looking
                }
            }
        }
        throw new GeneralSecurityException(file + " holds no PEM private key");
    }

    private static byte[] decrypt(byte[] der, char[] password, Path file) throws GeneralSecurityException {
        try {
            javax.crypto.EncryptedPrivateKeyInfo info = new javax.crypto.EncryptedPrivateKeyInfo(der);
            // PBES2 parameters name the real algorithm (e.g. PBEWithHmacSHA256AndAES_256) in their toString
            String algorithm =
                    info.getAlgParameters() != null ? info.getAlgParameters().toString() : info.getAlgName();
            javax.crypto.SecretKeyFactory factory = javax.crypto.SecretKeyFactory.getInstance(algorithm);
            javax.crypto.SecretKey key = factory.generateSecret(new javax.crypto.spec.PBEKeySpec(password));
            javax.crypto.Cipher cipher = javax.crypto.Cipher.getInstance(algorithm);
            cipher.init(javax.crypto.Cipher.DECRYPT_MODE, key, info.getAlgParameters());
            return info.getKeySpec(cipher).getEncoded();
        } catch (IOException | GeneralSecurityException e) {
            // the message of a failed decryption says nothing about the password; keep only its kind
            throw new GeneralSecurityException(
                    file + ": cannot decrypt the private key (wrong key password or unsupported encryption: "
                            + e.getClass().getSimpleName() + ")");
        }
    }

    private static PrivateKey pkcs8(byte[] der, Path file) throws GeneralSecurityException {
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "EdDSA")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // not this algorithm
            }
        }
        throw new GeneralSecurityException(file + ": the PKCS#8 key is neither RSA, EC nor Ed25519");
    }

    /** The curve OID (as a full TLV) from the parameters [0] of a SEC1 ECPrivateKey. */
    private static byte[] curveOf(byte[] sec1, Path file) throws GeneralSecurityException {
        int[] outer = header(sec1, 0);
        if (sec1[0] != 0x30) throw new GeneralSecurityException(file + ": EC PRIVATE KEY is not a DER sequence");
        int pos = outer[0];
        int end = outer[0] + outer[1];
        while (pos < end) {
            int tag = sec1[pos] & 0xff;
            int[] h = header(sec1, pos);
            if (tag == 0xa0) {
                int inner = h[0];
                int[] oid = header(sec1, inner);
                if ((sec1[inner] & 0xff) != 0x06) break;
                byte[] out = new byte[oid[0] + oid[1] - inner];
                System.arraycopy(sec1, inner, out, 0, out.length);
                return out;
            }
            pos = h[0] + h[1];
        }
        throw new GeneralSecurityException(file + ": EC PRIVATE KEY does not name its curve");
    }

    /** {contentStart, contentLength} of the DER element at {@code pos}. */
    private static int[] header(byte[] der, int pos) throws GeneralSecurityException {
        if (pos + 1 >= der.length) throw new GeneralSecurityException("truncated DER");
        int len = der[pos + 1] & 0xff;
        int start = pos + 2;
        if (len >= 0x80) {
            int n = len & 0x7f;
            if (n == 0 || n > 3 || start + n > der.length) throw new GeneralSecurityException("bad DER length");
            len = 0;
            for (int i = 0; i < n; i++) len = (len << 8) | (der[start + i] & 0xff);
            start += n;
        }
        if (start + len > der.length) throw new GeneralSecurityException("truncated DER");
        return new int[] {start, len};
    }

    private static byte[] pkcs8Info(byte[] algorithm, byte[] key) {
        byte[] version = {0x02, 0x01, 0x00};
        return tlv(0x30, concat(concat(version, algorithm), tlv(0x04, key)));
    }

    private static byte[] tlv(int tag, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 6);
        out.write(tag);
        int len = content.length;
        if (len < 0x80) {
            out.write(len);
        } else if (len < 0x100) {
            out.write(0x81);
            out.write(len);
        } else if (len < 0x10000) {
            out.write(0x82);
            out.write(len >> 8);
            out.write(len & 0xff);
        } else {
            out.write(0x83);
            out.write(len >> 16);
            out.write((len >> 8) & 0xff);
            out.write(len & 0xff);
        }
        out.writeBytes(content);
        return out.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
