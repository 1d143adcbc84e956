package dev.meshbridge.ingress;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;

/** Options as a user writes them in bridge.yaml, parsed and validated by {@link IngressOptions#parse}. */
final class TestOptions {

    private TestOptions() {}

    /** Parses {@code bridge.yaml} text holding an {@code ingress:} section; fails on any problem. */
    static IngressOptions parse(String yaml) {
        try {
            ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
            IngressOptions options = IngressOptions.parse(root.section("ingress"));
            root.finish();
            return options;
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }
}
