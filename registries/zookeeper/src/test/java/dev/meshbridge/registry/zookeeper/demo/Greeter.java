package dev.meshbridge.registry.zookeeper.demo;

/** A Dubbo service interface exported by the test providers. */
public interface Greeter {

    String greet(String name);
}
