package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class NameFilterTest {

    @Test
    void globs_matchTheWholeName_starAnyRun_questionOneCharacter_restLiteral() {
        NameFilter f = NameFilter.of(List.of("shop-*", "providers:org.demo.*", "api-v?"), List.of());
        assertThat(f.accepts("shop-orders")).isTrue();
        assertThat(f.accepts("shop-")).isTrue();
        assertThat(f.accepts("my-shop-orders")).isFalse();
        assertThat(f.accepts("providers:org.demo.Greeter:1.0.0:")).isTrue();
        assertThat(f.accepts("providers:orgXdemo.Greeter")).isFalse(); // '.' is literal
        assertThat(f.accepts("api-v2")).isTrue();
        assertThat(f.accepts("api-v22")).isFalse();
    }

    @Test
    void matching_ignoresCase_asEurekaUpperCasesApplicationNames() {
        NameFilter f = NameFilter.of(List.of("orders-*"), List.of("*-CANARY"));
        assertThat(f.accepts("ORDERS-SERVICE")).isTrue();
        assertThat(f.accepts("Orders-Service")).isTrue();
        assertThat(f.accepts("orders-canary")).isFalse();
    }

    @Test
    void deny_winsOverAllow_andNoAllowMeansEverythingNotDenied() {
        assertThat(NameFilter.of(List.of("a*"), List.of("ab*")).accepts("abc")).isFalse();
        NameFilter denyOnly = NameFilter.of(List.of(), List.of("consul"));
        assertThat(denyOnly.accepts("consul")).isFalse();
        assertThat(denyOnly.accepts("consul-ui")).isTrue();
        assertThat(NameFilter.ALL.accepts("anything")).isTrue();
        assertThat(NameFilter.ALL.accepts("")).isFalse();
    }

    @Test
    void patterns_areTrimmed_emptyOnesRefused_andFiltersCompareByValue() {
        assertThat(NameFilter.of(List.of(" web "), List.of()).accepts("web")).isTrue();
        assertThatThrownBy(() -> NameFilter.of(List.of(" "), List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThat(NameFilter.of(List.of("a"), List.of("b"))).isEqualTo(NameFilter.of(List.of("a"), List.of("b")));
        assertThat(NameFilter.of(List.of(), List.of())).isSameAs(NameFilter.ALL);
    }
}
