package dev.meshbridge.registry.zookeeper.demo;

/** A second Dubbo service interface exported by the test providers. */
public interface Ledger {

    long balance(String account);
}
