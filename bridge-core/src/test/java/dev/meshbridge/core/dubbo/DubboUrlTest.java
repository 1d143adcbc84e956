package dev.meshbridge.core.dubbo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DubboUrlTest {

    @Test
    void parseEncoded_providerZnodeName_decodesEverything() {
        String url =
                "dubbo://192.168.1.5:20880/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider"
                        + "&group=g1&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&side=provider"
                        + "&version=1.0.0&weight=50";
        DubboUrl u = DubboUrl.parseEncoded(URLEncoder.encode(url, StandardCharsets.UTF_8));
        assertThat(u.protocol()).isEqualTo("dubbo");
        assertThat(u.host()).isEqualTo("192.168.1.5");
        assertThat(u.port()).isEqualTo(20880);
        assertThat(u.interfaceName()).isEqualTo("org.apache.dubbo.demo.DemoService");
        assertThat(u.version()).isEqualTo("1.0.0");
        assertThat(u.group()).isEqualTo("g1");
        assertThat(u.application()).isEqualTo("demo-provider");
        assertThat(u.side()).isEqualTo("provider");
        assertThat(u.category()).isEqualTo("providers");
        assertThat(u.parameters()).containsEntry("methods", "sayHello,sayHelloAsync");
        assertThat(DubboNaming.weight(u.parameters())).isEqualTo(50);
        assertThat(DubboNaming.enabled(u.parameters())).isTrue();
    }

    /**
     * {@link DubboUrl#decode} decodes common escapes itself; what it gives, and whether it refuses, must stay what
     * Dubbo's {@code URL.decode} ({@link URLDecoder}) gives for any text: 20,000 seeded strings of escapes (upper and
     * lower case, ASCII and UTF-8 runs, bytes that are not UTF-8, odd escapes such as {@code %+1}, {@code %-1} and
     * {@code %g0}, truncated ones at the end), {@code +}, non-ASCII characters and plain text.
     */
    @Test
    void decode_givesWhatUrlDecoderGives_forAnyText() {
        String[] pieces = {
            "a",
            "Z",
            "9",
            ".",
            "=",
            "&",
            ";",
            "/",
            ":",
            "+",
            "%",
            "%2",
            "%3A",
            "%3a",
            "%2F%2F",
            "%26",
            "%3D",
            "%25",
            "%C3%A9",
            "%c3%a9",
            "%E4%B8%AD",
            "%F0%9F%98%80",
            "%C3",
            "%A9",
            "%FF",
            "%80%80",
            "%+1",
            "%-1",
            "%g0",
            "%0g",
            "é",
            "中",
            " ",
            "%20",
            "%7E",
            "%00"
        };
        SplittableRandom random = new SplittableRandom(22);
        int refused = 0;
        for (int round = 0; round < 20_000; round++) {
            StringBuilder b = new StringBuilder();
            for (int k = random.nextInt(12); k >= 0; k--) b.append(pieces[random.nextInt(pieces.length)]);
            String text = b.toString();
            String expected;
            try {
                expected = URLDecoder.decode(text, StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                refused++;
                assertThatThrownBy(() -> DubboUrl.decode(text))
                        .as(text)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("bad URL encoding");
                continue;
            }
            assertThat(DubboUrl.decode(text)).as(text).isEqualTo(expected);
        }
        assertThat(refused).as("some texts are refused").isBetween(1_000, 19_000);
    }

    @Test
    void parse_separatorsAndEmptyPairs_asDubboReadsThem() {
        DubboUrl u = DubboUrl.parse("dubbo://h:1/p?&a=1;;b= 2 &c&=x&d=e=f;a=3&");
        assertThat(u.parameters())
                .containsExactly(Map.entry("a", "3"), Map.entry("b", " 2"), Map.entry("c", ""), Map.entry("d", "e=f"));
        assertThat(DubboUrl.parse("dubbo://h:1/p?").parameters()).isEmpty();
        assertThat(DubboUrl.parse("dubbo://h:1/p?default.version=2&default.group=g&group=own")
                        .parameters())
                .containsEntry("version", "2")
                .containsEntry("group", "own");
    }

    @Test
    void parse_ipv6AndCredentials_hostIsBareAndCredentialsDropped() {
        DubboUrl u = DubboUrl.parse("tri://user:secret@[fe80::1]:50051/org.demo.Svc?interface=org.demo.Svc");
        assertThat(u.host()).isEqualTo("fe80::1");
        assertThat(u.port()).isEqualTo(50051);
        assertThat(u.toString()).doesNotContain("secret");
    }

    @Test
    void parse_malformed_namesTheProblem() {
        assertThatThrownBy(() -> DubboUrl.parse("no-scheme-here")).hasMessageContaining("no protocol");
        assertThatThrownBy(() -> DubboUrl.parse("dubbo://10.0.0.1:abc/x"))
                .hasMessageContaining("'abc' is not a number");
        assertThatThrownBy(() -> DubboUrl.parse("dubbo://10.0.0.1:70000/x")).hasMessageContaining("out of range");
        assertThatThrownBy(() -> DubboUrl.parseEncoded("dubbo%3A%2F%2F%ZZ")).hasMessageContaining("bad URL encoding");
    }

    @Test
    void enabledAndWeight_followDubboParameters() {
        assertThat(DubboNaming.enabled(Map.of("disabled", "true"))).isFalse();
        assertThat(DubboNaming.enabled(Map.of("enabled", "false"))).isFalse();
        assertThat(DubboNaming.weight(Map.of())).isEqualTo(100);
        assertThat(DubboNaming.weight(Map.of("weight", "0"))).isZero();
        assertThatThrownBy(() -> DubboNaming.weight(Map.of("weight", "heavy"))).hasMessageContaining("not a number");
    }

    @Test
    void dubboEndpoints_parsesProtocolPorts() {
        assertThat(DubboEndpoints.parse(
                        "[{\"port\":20880,\"protocol\":\"dubbo\"},{\"port\":50051,\"protocol\":\"tri\"}]"))
                .containsExactly(
                        new DubboEndpoints.ProtocolPort("dubbo", 20880), new DubboEndpoints.ProtocolPort("tri", 50051));
        assertThatThrownBy(() -> DubboEndpoints.parse("{garbage")).hasMessageContaining("not JSON");
        assertThatThrownBy(() -> DubboEndpoints.parse("[{\"port\":\"x\",\"protocol\":\"dubbo\"}]"))
                .hasMessageContaining("numeric port");
    }

    private static DubboUrl encodedZnode(String url) {
        return DubboUrl.parseEncoded(URLEncoder.encode(url, StandardCharsets.UTF_8));
    }

    @Test
    void defaultPrefixedParameters_asDubbo26AndEarly27Write_setVersionGroupAndWeight() {
        DubboUrl legacy = encodedZnode("dubbo://10.0.0.1:20880/org.demo.Greeter?application=old&default.group=blue"
                + "&default.version=1.0.0&default.weight=30&interface=org.demo.Greeter&side=provider");
        assertThat(legacy.version()).isEqualTo("1.0.0");
        assertThat(legacy.group()).isEqualTo("blue");
        assertThat(DubboNaming.weight(legacy.parameters())).isEqualTo(30);
        // the key itself wins over its default, wherever it stands
        assertThat(DubboUrl.parse("dubbo://h:1/x?default.version=1&version=2").version())
                .isEqualTo("2");
        assertThat(DubboUrl.parse("dubbo://h:1/x?version=2&default.version=1").version())
                .isEqualTo("2");
        assertThat(DubboNaming.labels(legacy.parameters()).labels()).doesNotContainKey("default.version");
    }

    @Test
    void valuesAreDecodedOnce_aPlusStays_andALiteralPercentDoesNotRejectTheProvider() {
        DubboUrl u = encodedZnode("dubbo://10.0.0.1:20880/org.demo.Greeter?version=1.0.0+b7&note=50%&side=provider");
        assertThat(u.version()).isEqualTo("1.0.0+b7");
        assertThat(u.parameters()).containsEntry("note", "50%");
        DubboUrl semicolons = DubboUrl.parse("dubbo://h:1/x?a=1;b=2&c=x=y&flag");
        assertThat(semicolons.parameters())
                .containsEntry("a", "1")
                .containsEntry("b", "2")
                .containsEntry("c", "x=y")
                .containsEntry("flag", "");
    }

    @Test
    void enabledFalseNeverCalled_thenDisabled_asDubbosRegistryAndConsumerReadThem() {
        // Dubbo's registry drops enabled=false before the consumer's RegistryDirectory looks at disabled
        assertThat(DubboNaming.enabled(Map.of("disabled", "false", "enabled", "false")))
                .isFalse();
        assertThat(DubboNaming.enabled(Map.of("disabled", "false", "enabled", "true")))
                .isTrue();
        assertThat(DubboNaming.enabled(Map.of("disabled", "true", "enabled", "true")))
                .isFalse();
        assertThat(DubboNaming.enabled(Map.of("disabled", "", "enabled", "false")))
                .isFalse();
        assertThat(DubboNaming.enabled(Map.of("enabled", "yes"))).isFalse(); // Boolean.parseBoolean
        assertThat(DubboNaming.enabled(Map.of("enabled", "TRUE"))).isTrue();
        assertThat(DubboNaming.enabled(Map.of("disabled", "no"))).isTrue();
        assertThat(DubboNaming.enabled(Map.of("enabled", ""))).isTrue();
    }

    @Test
    void errorMessages_neverShowCredentials() {
        assertThatThrownBy(() -> DubboUrl.parse("dubbo://admin:hunter2@10.0.0.1:abc/x"))
                .hasMessageNotContaining("hunter2")
                .hasMessageNotContaining("admin");
        assertThatThrownBy(() -> DubboUrl.parseEncoded("dubbo%3A%2F%2Fadmin%3Ahunter2%4010.0.0.1%3A1%2Fx%3Fa%3D%ZZ"))
                .hasMessageContaining("bad URL encoding")
                .hasMessageNotContaining("hunter2");
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {
                "dubbo://admin:S3cretPass@10.0.0.1:notaport/org.demo.Greeter",
                "dubbo://admin:S3cretPass@:20880/org.demo.Greeter",
                "dubbo://admin:S3cretPass@10.0.0.1:20880/org.demo.Greeter?x=%zz",
                "dubbo://admin:S3cretPass@[::1:20880/org.demo.Greeter",
                "dubbo://admin:S3cretPass@10.0.0.1:99999/org.demo.Greeter",
                "admin:S3cretPass@10.0.0.1:20880/org.demo.Greeter",
            })
    void malformedUrlsWithCredentials_neverShowThePassword_plainOrEncoded(String url) {
        for (String text : new String[] {url, URLEncoder.encode(url, StandardCharsets.UTF_8)}) {
            try {
                if (text.equals(url)) DubboUrl.parse(text);
                else DubboUrl.parseEncoded(text);
            } catch (IllegalArgumentException e) {
                assertThat(e.getMessage()).doesNotContain("S3cretPass");
                assertThat(String.valueOf(e.getCause())).doesNotContain("S3cretPass");
            }
        }
    }
}
