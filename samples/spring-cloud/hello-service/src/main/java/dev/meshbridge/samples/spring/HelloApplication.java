package dev.meshbridge.samples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Boot web service that Spring Cloud registers in Eureka (profile {@code eureka}) or in Consul (profile
 * {@code consul}), exactly as any Spring Cloud application of the estate would be.
 */
@SpringBootApplication
public class HelloApplication {

    public static void main(String[] args) {
        SpringApplication.run(HelloApplication.class, args);
    }
}
