package dev.meshbridge.registry.nacos;

/** The scenarios against the real Nacos 3.1.1 image. */
class NacosContainer3Test extends NacosContainerScenarios {

    @Override
    String image() {
        return "nacos/nacos-server:v3.1.1";
    }

    @Override
    boolean isNacos3() {
        return true;
    }
}
