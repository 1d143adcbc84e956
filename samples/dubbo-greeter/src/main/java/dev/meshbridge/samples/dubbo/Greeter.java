package dev.meshbridge.samples.dubbo;

import org.apache.dubbo.remoting.http12.HttpMethods;
import org.apache.dubbo.remoting.http12.rest.Mapping;
import org.apache.dubbo.remoting.http12.rest.Param;

/**
 * The sample's Dubbo service, exported over Triple: Dubbo and gRPC clients call it as usual, and plain HTTP clients
 * (HTTP/1.1, or HTTP/2 without TLS as Envoy speaks to a Triple port) call {@code GET /hello?name=...} through Triple's
 * REST mapping below (without the type-level mapping it would sit under the interface name).
 */
@Mapping("/")
public interface Greeter {

    @Mapping(path = "/hello", method = HttpMethods.GET)
    Greeting hello(@Param(value = "name", required = false) String name);
}
