package dev.meshbridge.core.dubbo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DubboOverridesTest {

    private static final DubboOverrides.Provider PROVIDER = new DubboOverrides.Provider(
            "10.0.0.1", 20880, DubboOverrides.serviceKey("org.demo.Greeter", "", "1.0.0"), Map.of("weight", "100"));

    private static Map<String, String> apply(String consumerApp, List<DubboOverrides.Rule> service) {
        return DubboOverrides.apply(PROVIDER, consumerApp, List.of(List.of(), List.of(), service));
    }

    @Test
    void keys_areDubbosServiceAndRuleKeys() {
        assertThat(DubboOverrides.serviceKey("org.demo.Greeter", "blue", "1.0.0"))
                .isEqualTo("blue/org.demo.Greeter:1.0.0");
        assertThat(DubboOverrides.serviceKey("org.demo.Greeter", "", "")).isEqualTo("org.demo.Greeter");
        assertThat(DubboOverrides.ruleKey("org.demo.Greeter", "1.0.0", ""))
                .isEqualTo("org.demo.Greeter:1.0.0:.configurators");
        assertThat(DubboOverrides.ruleKey("org.demo.Greeter", "", "blue"))
                .isEqualTo("org.demo.Greeter::blue.configurators");
    }

    @Test
    void jsonListOfOverrideUrls_isReadToo() {
        List<DubboOverrides.Rule> rules = DubboOverrides.parse(
                "[\"override://0.0.0.0/org.demo.Greeter?version=1.0.0&category=configurators&weight=7\"]");
        assertThat(apply(null, rules)).containsEntry("weight", "7");
    }

    @Test
    void applicationScopedRules_applyOnlyForThatConsumerApplication() {
        List<DubboOverrides.Rule> rules = DubboOverrides.parse("""
                configVersion: v2.7
                scope: application
                key: shop
                configs:
                - side: consumer
                  parameters: {weight: 9}
                """);
        assertThat(apply("shop", rules)).containsEntry("weight", "9");
        assertThat(apply("web", rules)).containsEntry("weight", "100");
        assertThat(apply(null, rules)).containsEntry("weight", "100");
    }

    @Test
    void aV30RuleWithAMatchCondition_isNotApplied_andSaysWhy() {
        List<DubboOverrides.Rule> rules = DubboOverrides.parse("""
                configVersion: v3.0
                scope: service
                key: org.demo.Greeter:1.0.0
                configs:
                - side: consumer
                  match: {address: {wildcard: "10.0.0.*"}}
                  parameters: {disabled: true}
                """);
        assertThat(rules)
                .singleElement()
                .satisfies(r -> assertThat(r.unsupported()).contains("match"));
        assertThat(apply(null, rules)).doesNotContainKey("disabled");
    }

    @Test
    void malformedRules_areRefusedWithTheReason() {
        assertThatThrownBy(() -> DubboOverrides.parse("configs: [oops"))
                .hasMessageContaining("neither a JSON list nor YAML");
        assertThatThrownBy(() -> DubboOverrides.parse("key: x\nconfigs: 3")).hasMessageContaining("no 'configs' list");
        assertThatThrownBy(() -> DubboOverrides.parse("key: x\nconfigs:\n- side: consumer\n"))
                .hasMessageContaining("sets no parameter");
        assertThatThrownBy(() -> DubboOverrides.fromUrl(DubboUrl.parse("dubbo://10.0.0.1:1/x?a=b")))
                .hasMessageContaining("not a configurator");
        assertThat(DubboOverrides.parse("  ")).isEmpty();
    }
}
