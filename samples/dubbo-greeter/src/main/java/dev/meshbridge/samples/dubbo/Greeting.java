package dev.meshbridge.samples.dubbo;

import java.io.Serializable;

/**
 * What the greeter answers, with what tells instances apart: the same fields as the Spring Cloud sample's answer.
 *
 * @param message the greeting
 * @param service the Dubbo application name
 * @param instance the address and Triple port this provider registered (the endpoint the bridge serves)
 * @param registry the registry it registered in
 * @param framework what serves it
 */
public record Greeting(String message, String service, String instance, String registry, String framework)
        implements Serializable {}
