package dev.meshbridge.xds;

import com.google.protobuf.Value;
import dev.meshbridge.core.config.ConfigNode;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * What an xDS client is, decided once from the node of its first request: the {@code xds.nodeRoles:} section.
 *
 * <ol>
 *   <li>node metadata {@code meshbridge.role} set to {@code gateway}, {@code sidecar} or {@code proxyless} decides;
 *   <li>otherwise a node whose id matches {@code gatewayNodeId}, or whose cluster matches {@code gatewayCluster}
 *       (regular expressions matched against the whole value; empty matches nothing), is a gateway;
 *   <li>otherwise a client whose user agent starts with {@code grpc-} (grpc-java, grpc-go, grpc-node-js, C-core) is
 *       proxyless, and any other node an Envoy sidecar.
 * </ol>
 *
 * <p>A gateway's wildcard listener subscription includes the Ingress listeners; a sidecar's and a proxyless client's do
 * not. Everything else is the same for every role.
 *
 * @param gatewayNodeId the node ids of gateways (a regular expression), or empty
 * @param gatewayCluster the node clusters of gateways (a regular expression), or empty
 */
public record NodeRoles(String gatewayNodeId, String gatewayCluster) {

    /** The metadata field a node names its role in. */
    public static final String METADATA_KEY = "meshbridge.role";

    public static final int SIDECAR = 0;
    public static final int GATEWAY = 1;
    public static final int PROXYLESS = 2;

    /** Role names by role number, as the debug page shows them. */
    public static final List<String> NAMES = List.of("sidecar", "gateway", "proxyless");

    public static final NodeRoles DEFAULTS = new NodeRoles("", "");

    public NodeRoles {
        Objects.requireNonNull(gatewayNodeId, "gatewayNodeId");
        Objects.requireNonNull(gatewayCluster, "gatewayCluster");
        Pattern.compile(gatewayNodeId);
        Pattern.compile(gatewayCluster);
    }

    /** The role of a node. */
    public int role(Node node) {
        if (node.hasMetadata()) {
            Value v = node.getMetadata().getFieldsMap().get(METADATA_KEY);
            if (v != null && v.hasStringValue()) {
                int i = NAMES.indexOf(v.getStringValue().trim().toLowerCase(Locale.ROOT));
                if (i >= 0) return i;
            }
        }
        if (!gatewayNodeId.isEmpty() && Pattern.matches(gatewayNodeId, node.getId())) return GATEWAY;
        if (!gatewayCluster.isEmpty() && Pattern.matches(gatewayCluster, node.getCluster())) return GATEWAY;
        if (node.getUserAgentName().startsWith("grpc-")) return PROXYLESS;
        return SIDECAR;
    }

    static NodeRoles parse(ConfigNode section) {
        return new NodeRoles(regex(section, "gatewayNodeId"), regex(section, "gatewayCluster"));
    }

    private static String regex(ConfigNode section, String key) {
        String value = section.string(key, "");
        try {
            Pattern.compile(value);
            return value;
        } catch (PatternSyntaxException e) {
            section.problem(key, "is not a regular expression: " + e.getDescription());
            return "";
        }
    }
}
