package dev.meshbridge.core.naming;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LabelsTest {

    @Test
    void sanitize_validLabels_areKeptAsTheyAre() {
        Labels.Result r = Labels.sanitize(
                Map.of("app", "demo-provider", "dubbo.metadata.revision", "ab12", "example.com/tier", "Gold"));
        assertThat(r.labels())
                .containsExactlyEntriesOf(new java.util.TreeMap<>(
                        Map.of("app", "demo-provider", "dubbo.metadata.revision", "ab12", "example.com/tier", "Gold")));
        assertThat(r.dropped()).isEmpty();
    }

    @Test
    void sanitize_invalidCharacters_becomeUnderscoresAndEndsAreTrimmed() {
        Map<String, String> raw = new LinkedHashMap<>();
        raw.put("methods", "sayHello,sayBye");
        raw.put("@class", "org.x.Y");
        raw.put("management.url", "http://10.0.0.1:8080/");
        raw.put("empty", "");
        Labels.Result r = Labels.sanitize(raw);
        assertThat(r.labels())
                .containsEntry("methods", "sayHello_sayBye")
                .containsEntry("class", "org.x.Y")
                .containsEntry("management.url", "http___10.0.0.1_8080")
                .containsEntry("empty", "");
        assertThat(r.dropped()).isEmpty();
        assertThat(r.labels()).allSatisfy((k, v) -> {
            assertThat(Labels.isValidKey(k)).isTrue();
            assertThat(Labels.isValidValue(v)).isTrue();
        });
    }

    @Test
    void sanitize_tooLongValueOrUnusableKey_isDroppedAndReported() {
        Map<String, String> raw = new LinkedHashMap<>();
        raw.put("long", "v".repeat(64));
        raw.put("!!!", "x");
        raw.put("ok", "1");
        Labels.Result r = Labels.sanitize(raw);
        assertThat(r.labels()).containsOnlyKeys("ok");
        assertThat(r.dropped()).extracting(Labels.Dropped::key).containsExactly("long", "!!!");
        assertThat(r.dropped().get(0).reason()).contains("longer than 63");
    }

    @Test
    void validity_followsKubernetesRules() {
        assertThat(Labels.isValidKey("a/b")).isTrue();
        assertThat(Labels.isValidKey("A.b_c-d")).isTrue();
        assertThat(Labels.isValidKey("UPPER.example/x")).isFalse();
        assertThat(Labels.isValidKey("-a")).isFalse();
        assertThat(Labels.isValidValue("")).isTrue();
        assertThat(Labels.isValidValue("a b")).isFalse();
        assertThat(Dns1123.isLabel("a-b")).isTrue();
        assertThat(Dns1123.isLabel("a_b")).isFalse();
        assertThat(Dns1123.isSubdomain("a.b-c.d")).isTrue();
        assertThat(Dns1123.isSubdomain("a..b")).isFalse();
    }
}
