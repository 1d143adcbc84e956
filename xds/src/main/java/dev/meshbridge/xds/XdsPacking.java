package dev.meshbridge.xds;

import dev.meshbridge.ads.PackedBytes;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * How the server holds what it serves ({@link XdsResource#packed}): the dictionary every resource is packed with and
 * the size below which packing does not pay.
 */
final class XdsPacking {

    private XdsPacking() {}

    /**
     * Below this many bytes a resource is held as made: its packed form would save a few bytes at best (a resource
     * that packs to less than nine tenths of its bytes is held as made too).
     */
    static final int MIN_SIZE = 48;

    /**
     * What the translators write into every resource of a kind, seen before the first byte of each: the bytes of a
     * probe service's translation (a cluster, a proxyless cluster, load assignments with a locality, API listeners with
     * the HttpConnectionManager and router filters and their type URLs, a route configuration) under the default
     * options, and the type URLs and names the sidecar and Ingress resources carry. Made from the translator, not
     * written out by hand, so it follows what the translators write; it changes no byte served (a resource is always
     * unpacked with the dictionary it was packed with, in the same process), only how small resources are held.
     */
    static final PackedBytes.Dictionary DICTIONARY = dictionary();

    private static PackedBytes.Dictionary dictionary() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String s : List.of(
                XdsType.DUBBO_ROUTE.typeUrl(),
                XdsType.SECRET.typeUrl(),
                "type.googleapis.com/envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy",
                "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                "envoy.filters.network.dubbo_proxy envoy.filters.network.tcp_proxy",
                "envoy.filters.network.http_connection_manager",
                "outbound_15001 outbound_20880 outbound|")) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        }
        List<Endpoint> endpoints = List.of(endpoint("10.0.0.1"), endpoint("10.0.0.2"));
        MeshService probe = new MeshService(
                "probe.invalid",
                List.of(
                        new ServicePort("dubbo", 20880, Protocol.DUBBO),
                        new ServicePort("grpc", 50051, Protocol.GRPC),
                        new ServicePort("http", 80, Protocol.HTTP)),
                endpoints,
                new TreeMap<>(),
                new TreeSet<>(List.of(ServiceKey.of("none", "none", "probe"))),
                "0");
        for (XdsResource r : new EnvoyTranslator().translate(probe).resources()) {
            out.writeBytes(r.value().toByteArray());
        }
        return PackedBytes.Dictionary.ofBytes(out.toByteArray());
    }

    private static Endpoint endpoint(String address) {
        return Endpoint.builder(address)
                .port("dubbo", 20880)
                .port("grpc", 50051)
                .port("http", 8080)
                .locality(Locality.of("region", "zone"))
                .build();
    }
}
