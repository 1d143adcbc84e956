package dev.meshbridge.xds;

import dev.meshbridge.ads.AdsConformanceSuite;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceRemoval;
import dev.meshbridge.core.spi.ServiceUpsert;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.List;

/** The ADS protocol conformance suite against the xDS server's ADS service, with clusters (CDS). */
class XdsConformanceTest extends AdsConformanceSuite {

    @Override
    protected Subject start(boolean hold) {
        XdsTestBed bed = new XdsTestBed(XdsOptions.loopbackEphemeral(), !hold);
        return new Subject() {
            @Override
            public int port() {
                return bed.server.port();
            }

            @Override
            public List<String> typeUrls() {
                return List.of(XdsType.CLUSTER.typeUrl());
            }

            private ServiceKey key(String service) {
                return ServiceKey.of("zookeeper", Upserts.REGISTRY, service);
            }

            /** Variants differ in the port's protocol, which the cluster carries (HTTP/2 options for gRPC). */
            @Override
            public String put(String service, int variant) {
                String host = service + ".conformance";
                Protocol protocol = variant % 2 == 0 ? Protocol.HTTP : Protocol.GRPC;
                String port = protocol == Protocol.HTTP ? "http" : "grpc";
                bed.send(new ServiceUpsert(
                        key(service),
                        host,
                        List.of(new ServicePort(port, 8080, protocol)),
                        List.of(Endpoint.builder("10.0.0." + (variant + 1))
                                .port(port, 8080)
                                .build())));
                return XdsNames.cluster(host, 8080);
            }

            @Override
            public void remove(String service) {
                bed.send(new ServiceRemoval(key(service)));
            }

            @Override
            public String nameOf(com.google.protobuf.Any resource) {
                try {
                    return resource.unpack(Cluster.class).getName();
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    throw new AssertionError(e);
                }
            }

            @Override
            public void markReady() {
                bed.server.markCatalogReady();
            }

            @Override
            public void idle() {
                bed.server.idle().join();
            }

            @Override
            public double nacks() {
                return bed.counter("meshbridge.xds.nacks", "type", "cds");
            }

            @Override
            public Node node() {
                return Node.newBuilder()
                        .setId("conformance-envoy")
                        .setCluster("conformance")
                        .build();
            }

            @Override
            public void close() {
                bed.close();
            }
        };
    }
}
