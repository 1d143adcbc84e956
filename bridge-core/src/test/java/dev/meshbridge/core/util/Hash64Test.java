package dev.meshbridge.core.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class Hash64Test {

    @Test
    void copy_goesOnFromThePrefix_andLeavesThePrefixAsItWas() {
        Hash64 prefix = new Hash64().putString("type.googleapis.com/x");
        long whole =
                new Hash64().putString("type.googleapis.com/x").putString("a").finish();

        assertThat(prefix.copy().putString("a").finish()).isEqualTo(whole);
        assertThat(prefix.copy().putString("a").finish()).isEqualTo(whole);
        assertThat(prefix.finish()).isEqualTo(Hash64.of("type.googleapis.com/x"));
    }
}
