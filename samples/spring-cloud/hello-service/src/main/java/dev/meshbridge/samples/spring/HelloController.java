package dev.meshbridge.samples.spring;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootVersion;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /hello?name=...}: a greeting naming the instance that answered, as registered. */
@RestController
class HelloController {

    /**
     * The answer; the same fields as the Dubbo sample's.
     *
     * @param message the greeting
     * @param service the application name (the registered service)
     * @param instance the address and port this instance registered (the endpoint the bridge serves)
     * @param registry the registry it registered in
     * @param framework what serves it
     */
    @JsonPropertyOrder(alphabetic = true) // as the Dubbo sample's JSON reads
    record Hello(String message, String service, String instance, String registry, String framework) {}

    private final ObjectProvider<Registration> registration;
    private final String application;
    private final String registry;

    HelloController(
            ObjectProvider<Registration> registration,
            @Value("${spring.application.name}") String application,
            @Value("${hello.registry}") String registry) {
        this.registration = registration;
        this.application = application;
        this.registry = registry;
    }

    @GetMapping("/hello")
    Hello hello(@RequestParam(name = "name", defaultValue = "world") String name) {
        Registration r = registration.getIfAvailable();
        return new Hello(
                "hello, " + name,
                application,
                r == null ? "not registered" : r.getHost() + ":" + r.getPort(),
                registry,
                "spring-boot " + SpringBootVersion.getVersion() + " + spring-cloud");
    }
}
