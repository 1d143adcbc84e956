package dev.meshbridge.registry.eureka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ApplicationFilterTest {

    @Test
    void noPatterns_acceptsEverything() {
        assertThat(ApplicationFilter.of(List.of(), List.of())).isSameAs(ApplicationFilter.ALL);
        assertThat(ApplicationFilter.ALL.accepts("ANYTHING")).isTrue();
    }

    @Test
    void globs_matchWholeNamesWithoutRegardToCase() {
        ApplicationFilter f = ApplicationFilter.of(List.of("orders*", "pay?"), List.of());

        assertThat(f.accepts("ORDERS")).isTrue();
        assertThat(f.accepts("ORDERS-API")).isTrue();
        assertThat(f.accepts("PAYS")).isTrue();
        assertThat(f.accepts("PAYMENTS")).isFalse();
        assertThat(f.accepts("MY-ORDERS")).isFalse();
    }

    @Test
    void exclude_winsOverInclude() {
        ApplicationFilter f = ApplicationFilter.of(List.of("ORDERS*"), List.of("*-CANARY"));

        assertThat(f.accepts("ORDERS-CANARY")).isFalse();
        assertThat(f.accepts("ORDERS")).isTrue();
        assertThat(ApplicationFilter.of(List.of(), List.of("ADMIN")).accepts("BILLING"))
                .isTrue();
    }

    @Test
    void regexCharacters_areLiteral() {
        ApplicationFilter f = ApplicationFilter.of(List.of("A.B+(C)"), List.of());

        assertThat(f.accepts("A.B+(C)")).isTrue();
        assertThat(f.accepts("AXB+(C)")).isFalse();
    }

    @Test
    void emptyPattern_isRefused_andEqualFiltersAreEqual() {
        assertThatThrownBy(() -> ApplicationFilter.of(List.of(" "), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(ApplicationFilter.of(List.of("A*"), List.of("B")))
                .isEqualTo(ApplicationFilter.of(List.of("A*"), List.of("B")))
                .isNotEqualTo(ApplicationFilter.of(List.of("A*"), List.of()));
    }
}
