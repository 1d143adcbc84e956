package dev.meshbridge.mcp;

import dev.meshbridge.core.model.Protocol;
import java.util.Locale;
import java.util.Set;

/**
 * How a catalog protocol becomes the {@code protocol} of an Istio ServicePort.
 *
 * <ul>
 *   <li>{@code http}, {@code https}, {@code http2}, {@code grpc}: the Istio protocol of the same name;
 *   <li>Dubbo 3 Triple: {@code GRPC}, because Triple is gRPC on HTTP/2 (Envoy then routes and balances per request);
 *   <li>Dubbo 2 ({@code dubbo://}): {@code TCP}. Istio has no Dubbo codec, so the mesh balances connections (Dubbo
 *       multiplexes calls on long-lived connections), and mTLS, authorization by identity and L4 telemetry apply;
 *   <li>anything else: {@code TCP}.
 * </ul>
 */
public final class IstioProtocols {

    /** The protocol names istiod accepts on a ServicePort (case does not matter). */
    public static final Set<String> ACCEPTED = Set.of(
            "HTTP", "HTTPS", "HTTP2", "GRPC", "GRPC-WEB", "HTTP_PROXY", "TCP", "UDP", "TLS", "MONGO", "REDIS", "MYSQL");

    private IstioProtocols() {}

    public static String of(Protocol protocol) {
        return switch (protocol) {
            case HTTP -> "HTTP";
            case HTTPS -> "HTTPS";
            case HTTP2 -> "HTTP2";
            case GRPC, TRIPLE -> "GRPC";
            case DUBBO, TCP -> "TCP";
        };
    }

    /** True when istiod knows the protocol name. */
    public static boolean accepted(String name) {
        return name != null && ACCEPTED.contains(name.toUpperCase(Locale.ROOT));
    }
}
