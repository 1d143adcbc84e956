package dev.meshbridge.registry.nacos;

/** The scenarios against the test server following the Nacos 2.5.1 protocol (no fuzzy watch, v1 HTTP APIs). */
class NacosWatcherNacos2Test extends NacosTestServerScenarios {

    @Override
    NacosTestServer.Version version() {
        return NacosTestServer.Version.V2_5_1;
    }
}
