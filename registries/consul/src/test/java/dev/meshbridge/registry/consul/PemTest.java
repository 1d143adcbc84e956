package dev.meshbridge.registry.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.tls.Pem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The key and certificate files Consul deployments hand out are read as they are. */
class PemTest {

    @TempDir
    Path tmp;

    private static Path resource(String name) throws Exception {
        return Path.of(PemTest.class.getResource("/pem/" + name).toURI());
    }

    @Test
    void ecPrivateKeyInSec1_asConsulTlsCertCreateWritesIt_signsForItsPublicKey() throws Exception {
        PrivateKey key = Pem.privateKey(resource("ec-sec1-key.pem"));
        String publicPem = Files.readString(resource("ec-public.pem"), StandardCharsets.US_ASCII)
                .replaceAll("-----[A-Z ]+-----", "")
                .replaceAll("\\s", "");
        PublicKey pub = KeyFactory.getInstance("EC")
                .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(publicPem)));

        Signature signer = Signature.getInstance("SHA256withECDSA");
        signer.initSign(key);
        signer.update("consul".getBytes(StandardCharsets.UTF_8));
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance("SHA256withECDSA");
        verifier.initVerify(pub);
        verifier.update("consul".getBytes(StandardCharsets.UTF_8));

        assertThat(key.getAlgorithm()).isEqualTo("EC");
        assertThat(verifier.verify(signature)).isTrue();
    }

    @Test
    void rsaKeyInPkcs1_isTheSameKey() throws Exception {
        HeldCertificate held = new HeldCertificate.Builder().rsa2048().build();
        Path file = Files.writeString(tmp.resolve("key.pem"), held.privateKeyPkcs1Pem());

        assertThat(Pem.privateKey(file).getEncoded())
                .isEqualTo(held.keyPair().getPrivate().getEncoded());
    }

    @Test
    void ecAndRsaKeysInPkcs8_areTheSameKeys() throws Exception {
        for (HeldCertificate held : new HeldCertificate[] {
            new HeldCertificate.Builder().ecdsa256().build(),
            new HeldCertificate.Builder().rsa2048().build()
        }) {
            Path file = Files.writeString(tmp.resolve("key.pem"), held.certificatePem() + held.privateKeyPkcs8Pem());

            assertThat(Pem.privateKey(file).getEncoded())
                    .isEqualTo(held.keyPair().getPrivate().getEncoded());
        }
    }

    @Test
    void certificateChain_isReadInOrder() throws Exception {
        HeldCertificate ca = new HeldCertificate.Builder()
                .certificateAuthority(0)
                .commonName("ca")
                .build();
        HeldCertificate leaf =
                new HeldCertificate.Builder().signedBy(ca).commonName("leaf").build();
        Path file = Files.writeString(tmp.resolve("chain.pem"), leaf.certificatePem() + ca.certificatePem());

        assertThat(Pem.certificates(file))
                .extracting(c -> c.getSubjectX500Principal().getName())
                .containsExactly("CN=leaf", "CN=ca");
    }

    @Test
    void encryptedKey_isRefusedWithAReason() throws Exception {
        Path file = Files.writeString(
                tmp.resolve("enc.pem"),
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n");

        assertThatThrownBy(() -> Pem.privateKey(file))
                .isInstanceOf(GeneralSecurityException.class)
                .hasMessageContaining("encrypted");
    }

    @Test
    void serverName_matchesExactAndWildcardSubjectAlternativeNames() throws Exception {
        HeldCertificate cert = new HeldCertificate.Builder()
                .addSubjectAlternativeName("server.dc1.consul")
                .addSubjectAlternativeName("*.web.consul")
                .build();

        assertThat(ConsulTls.matches(cert.certificate(), "server.dc1.consul")).isTrue();
        assertThat(ConsulTls.matches(cert.certificate(), "a.web.consul")).isTrue();
        assertThat(ConsulTls.matches(cert.certificate(), "a.b.web.consul")).isFalse();
        assertThat(ConsulTls.matches(cert.certificate(), "server.dc2.consul")).isFalse();
    }
}
