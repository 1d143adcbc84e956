package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.testing.TestPki;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code tls:} section of a server: what is accepted, and refusals that name the line and field, never a value. */
class TlsOptionsTest {

    @TempDir
    Path dir;

    private TlsOptions parse(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        TlsOptions o = TlsOptions.parse(root.section("xds").section("tls"));
        root.section("xds").accept("tls");
        root.finish();
        return o;
    }

    private String files(TestPki.Issued leaf, TestPki ca) {
        leaf.write(dir.resolve("tls.crt"), dir.resolve("tls.key"));
        ca.writeCa(dir.resolve("ca.crt"));
        return "certFile: " + dir.resolve("tls.crt") + ", keyFile: " + dir.resolve("tls.key") + ", caFile: "
                + dir.resolve("ca.crt");
    }

    @Test
    void absent_isPlaintext_andAFullSection_isMutualTlsWithItsAllowLists() throws Exception {
        assertThat(parse("xds: {}\n").mode()).isEqualTo("plaintext");
        TestPki ca = TestPki.ca("ca");
        TlsOptions o = parse("xds:\n  tls: {" + files(ca.leaf("s").rsa().issue(), ca)
                + ", allowedUriSans: [\"spiffe://cluster.local/ns/*/sa/istiod\"], allowedDnsSans: [\"*.svc\"],"
                + " reloadInterval: 2s}\n");
        assertThat(o.mode()).isEqualTo("mtls");
        assertThat(o.clientAuth()).isEqualTo(TlsOptions.ClientAuth.REQUIRE);
        assertThat(o.allowedUriSans()).containsExactly("spiffe://cluster.local/ns/*/sa/istiod");
        assertThat(o.reloadInterval()).hasSeconds(2);
    }

    @Test
    void aWrongKeyPassword_isRefusedNamingTheFile_andNotThePassword() {
        TestPki ca = TestPki.ca("ca");
        TestPki.Issued leaf = ca.leaf("s").issue();
        String f = files(leaf, ca);
        leaf.writeEncryptedKey(dir.resolve("tls.key"), "right-password".toCharArray());
        assertThatThrownBy(() -> parse("xds:\n  tls: {" + f + ", keyPassword: Wrong-Pass-123}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.yaml:2:")
                .hasMessageContaining("tls.key")
                .hasMessageContaining("wrong key password")
                .hasMessageNotContaining("Wrong-Pass-123")
                .hasMessageNotContaining("right-password");
    }

    @Test
    void inconsistentSections_areRefusedWithTheirFields() {
        TestPki ca = TestPki.ca("ca");
        String f = files(ca.leaf("s").issue(), ca);
        assertThatThrownBy(() -> parse("xds:\n  tls: {certFile: " + dir.resolve("tls.crt") + "}\n"))
                .hasMessageContaining("xds.tls.keyFile: certFile and keyFile go together")
                .hasMessageNotContaining("tls needs certFile");
        assertThatThrownBy(() ->
                        parse("xds:\n  tls: {" + f.replaceAll(", caFile: [^,]*$", "") + ", clientAuth: require}\n"))
                .hasMessageContaining("xds.tls.clientAuth: clientAuth require needs caFile");
        assertThatThrownBy(() -> parse("xds:\n  tls: {" + f + ", clientAuth: request, allowedDnsSans: [a.svc]}\n"))
                .hasMessageContaining("allowedDnsSans: SAN allow lists need clientAuth: require");
        assertThatThrownBy(() -> parse("xds:\n  tls: {" + f + ", clientAuth: sometimes}\n"))
                .hasMessageContaining("expected one of [none, request, require]");
    }

    @Test
    void sanGlobs_doNotCrossSeparators() throws Exception {
        TestPki ca = TestPki.ca("ca");
        TlsOptions o = TlsOptions.mutual(
                new dev.meshbridge.core.tls.TlsFiles(
                        dir.resolve("tls.crt"), dir.resolve("tls.key"), null, dir.resolve("ca.crt")),
                List.of("spiffe://cluster.local/ns/*/sa/istiod"),
                List.of("*.istio-system.svc"));
        files(ca.leaf("s").issue(), ca);
        ServerTls tls = new ServerTls(
                "xds", o, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Clock.systemUTC());
        assertThat(tls.allowed(ca.leaf("a")
                        .uri("spiffe://cluster.local/ns/istio-system/sa/istiod")
                        .issue()
                        .certificate()))
                .isTrue();
        assertThat(tls.allowed(ca.leaf("b")
                        .uri("spiffe://cluster.local/ns/a/b/sa/istiod")
                        .issue()
                        .certificate()))
                .isFalse();
        assertThat(tls.allowed(
                        ca.leaf("c").dns("IstioD.istio-system.svc").issue().certificate()))
                .isTrue();
        assertThat(tls.allowed(
                        ca.leaf("d").dns("x.istiod.istio-system.svc").issue().certificate()))
                .isFalse();
        assertThat(tls.allowed(ca.leaf("e")
                        .uri("spiffe://cluster.local/ns/x/sa/istiod-other")
                        .issue()
                        .certificate()))
                .isFalse();
    }
}
