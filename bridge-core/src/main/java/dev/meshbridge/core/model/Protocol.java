package dev.meshbridge.core.model;

import java.util.Locale;
import java.util.Optional;

/** Application protocol of a service port, as the mesh needs to know it. */
public enum Protocol {
    HTTP("http", 80),
    HTTPS("https", 443),
    HTTP2("http2", 80),
    GRPC("grpc", 50051),
    /** Dubbo 2 protocol ({@code dubbo://}). */
    DUBBO("dubbo", 20880),
    /** Dubbo 3 Triple ({@code tri://}), gRPC-compatible HTTP/2. */
    TRIPLE("tri", 50051),
    TCP("tcp", 0);

    private final String portName;
    private final int defaultServicePort;

    Protocol(String portName, int defaultServicePort) {
        this.portName = portName;
        this.defaultServicePort = defaultServicePort;
    }

    /** The port name used for this protocol when a registry gives none: {@code http}, {@code dubbo}, {@code tri}... */
    public String portName() {
        return portName;
    }

    /**
     * The virtual (service) port a service gets for this protocol unless its registry configures another; 0 for
     * {@link #TCP}, which keeps the endpoints' own port.
     */
    public int defaultServicePort() {
        return defaultServicePort;
    }

    /** True for protocols Envoy routes with an HTTP connection manager. */
    public boolean isHttp() {
        return this == HTTP || this == HTTPS || this == HTTP2 || this == GRPC || this == TRIPLE;
    }

    /** Parses a registry's protocol name ({@code dubbo}, {@code tri}, {@code grpc}, {@code rest}, {@code h2}...). */
    public static Optional<Protocol> parse(String name) {
        if (name == null) return Optional.empty();
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "http", "rest", "http1", "http/1.1", "webservice" -> Optional.of(HTTP);
            case "https" -> Optional.of(HTTPS);
            case "http2", "h2", "h2c" -> Optional.of(HTTP2);
            case "grpc" -> Optional.of(GRPC);
            case "dubbo" -> Optional.of(DUBBO);
            case "tri", "triple" -> Optional.of(TRIPLE);
            case "tcp" -> Optional.of(TCP);
            default -> Optional.empty();
        };
    }
}
