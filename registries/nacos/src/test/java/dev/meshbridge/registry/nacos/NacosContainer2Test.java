package dev.meshbridge.registry.nacos;

/** The scenarios against the real Nacos 2.5.1 image. */
class NacosContainer2Test extends NacosContainerScenarios {

    @Override
    String image() {
        return "nacos/nacos-server:v2.5.1";
    }

    @Override
    boolean isNacos3() {
        return false;
    }
}
