package dev.meshbridge.registry.nacos;

/** The scenarios against the test server following the Nacos 3.1.1 protocol (fuzzy watch, v3 HTTP APIs). */
class NacosWatcherNacos3Test extends NacosTestServerScenarios {

    @Override
    NacosTestServer.Version version() {
        return NacosTestServer.Version.V3_1_1;
    }
}
