package dev.meshbridge.core.dubbo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code dubbo.endpoints} metadata of a Dubbo 3 application-level instance: the ports it serves per protocol,
 * e.g. {@code [{"port":20880,"protocol":"dubbo"},{"port":50051,"protocol":"tri"}]}.
 */
public final class DubboEndpoints {

    /** The metadata key Dubbo 3 writes. */
    public static final String METADATA_KEY = "dubbo.endpoints";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One protocol port of an instance. */
    public record ProtocolPort(String protocol, int port) {}

    private DubboEndpoints() {}

    /**
     * Parses the metadata value.
     *
     * @throws IllegalArgumentException when it is not the JSON list Dubbo writes, or a port is out of range
     */
    public static List<ProtocolPort> parse(String json) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (Exception e) {
            throw new IllegalArgumentException("dubbo.endpoints is not JSON: " + e.getMessage());
        }
        if (root == null || !root.isArray()) throw new IllegalArgumentException("dubbo.endpoints is not a JSON list");
        List<ProtocolPort> out = new ArrayList<>();
        for (JsonNode item : root) {
            String protocol = item.path("protocol").asText("");
            JsonNode portNode = item.path("port");
            if (protocol.isEmpty() || !portNode.canConvertToInt()) {
                throw new IllegalArgumentException(
                        "dubbo.endpoints entry " + item + " needs a protocol and a numeric port");
            }
            int port = portNode.asInt();
            if (port < 1 || port > 65535)
                throw new IllegalArgumentException("dubbo.endpoints port " + port + " is out of range");
            out.add(new ProtocolPort(protocol, port));
        }
        return List.copyOf(out);
    }
}
