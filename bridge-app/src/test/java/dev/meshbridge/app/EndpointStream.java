package dev.meshbridge.app;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * What a client of the bridge's xDS server sees of endpoints: a grpc-java ADS stream (SotW) that subscribes to every
 * cluster and to the endpoints of each, ACKs everything, and records, after {@link #mark()}, every response that took
 * away an endpoint or a cluster served at the mark. A registry restart the bridge rides out shows none.
 */
final class EndpointStream implements AutoCloseable {

    static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

    private final ManagedChannel channel;
    private final Node node;
    private final StreamObserver<DiscoveryRequest> requests;
    private final Map<String, Set<String>> endpoints = new HashMap<>();
    private final Set<String> clusters = new TreeSet<>();
    private final List<String> removals = new ArrayList<>();
    private Map<String, Set<String>> baseline;
    private Set<String> baselineClusters;
    private Set<String> edsNames = Set.of();
    private String edsVersion = "";
    private String edsNonce = "";
    private Throwable failed;

    EndpointStream(int xdsPort) {
        channel = NettyChannelBuilder.forAddress("127.0.0.1", xdsPort)
                .usePlaintext()
                .maxInboundMessageSize(64 * 1024 * 1024)
                .build();
        node = Node.newBuilder()
                .setId("endpoint-stream")
                .setCluster("restart-tests")
                .build();
        requests = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(new StreamObserver<>() {
            @Override
            public void onNext(DiscoveryResponse r) {
                received(r);
            }

            @Override
            public void onError(Throwable t) {
                synchronized (EndpointStream.this) {
                    failed = t;
                }
            }

            @Override
            public void onCompleted() {}
        });
        send(CDS, List.of(), "", "");
    }

    private synchronized void send(String type, List<String> names, String version, String nonce) {
        requests.onNext(DiscoveryRequest.newBuilder()
                .setNode(node)
                .setTypeUrl(type)
                .addAllResourceNames(names)
                .setVersionInfo(version)
                .setResponseNonce(nonce)
                .build());
    }

    private synchronized void received(DiscoveryResponse r) {
        try {
            if (r.getTypeUrl().equals(CDS)) {
                Set<String> names = new TreeSet<>();
                Set<String> now = new TreeSet<>();
                for (var any : r.getResourcesList()) {
                    Cluster c = any.unpack(Cluster.class);
                    now.add(c.getName());
                    if (c.hasEdsClusterConfig()) {
                        String service = c.getEdsClusterConfig().getServiceName();
                        names.add(service.isEmpty() ? c.getName() : service);
                    }
                }
                if (baselineClusters != null) {
                    for (String gone : baselineClusters) {
                        if (!now.contains(gone)) removals.add("cluster " + gone + " removed");
                    }
                }
                clusters.clear();
                clusters.addAll(now);
                // a client forgets the endpoints of a cluster it no longer has
                endpoints.keySet().retainAll(names);
                send(CDS, List.of(), r.getVersionInfo(), r.getNonce());
                if (!names.equals(edsNames)) {
                    edsNames = names;
                    send(EDS, List.copyOf(names), edsVersion, edsNonce);
                }
            } else if (r.getTypeUrl().equals(EDS)) {
                for (var any : r.getResourcesList()) {
                    ClusterLoadAssignment cla = any.unpack(ClusterLoadAssignment.class);
                    Set<String> addresses = new TreeSet<>();
                    for (LocalityLbEndpoints l : cla.getEndpointsList()) {
                        for (LbEndpoint e : l.getLbEndpointsList()) {
                            var a = e.getEndpoint().getAddress().getSocketAddress();
                            addresses.add(a.getAddress() + ":" + a.getPortValue());
                        }
                    }
                    endpoints.put(cla.getClusterName(), addresses);
                    if (baseline != null && baseline.containsKey(cla.getClusterName())) {
                        Set<String> lost = new TreeSet<>(baseline.get(cla.getClusterName()));
                        lost.removeAll(addresses);
                        if (!lost.isEmpty()) removals.add(cla.getClusterName() + " lost " + lost);
                    }
                }
                edsVersion = r.getVersionInfo();
                edsNonce = r.getNonce();
                send(EDS, List.copyOf(edsNames), edsVersion, edsNonce);
            }
        } catch (InvalidProtocolBufferException e) {
            failed = e;
        }
    }

    /** The endpoints ({@code ip:port}) of each cluster the stream has received. */
    synchronized Map<String, Set<String>> endpoints() {
        Map<String, Set<String>> copy = new HashMap<>();
        endpoints.forEach((k, v) -> copy.put(k, Set.copyOf(v)));
        return copy;
    }

    /** The endpoints of the clusters whose name contains {@code host}. */
    synchronized Set<String> endpointsOf(String host) {
        Set<String> out = new HashSet<>();
        endpoints.forEach((k, v) -> {
            if (k.contains(host)) out.addAll(v);
        });
        return out;
    }

    synchronized Set<String> clusters() {
        return Set.copyOf(clusters);
    }

    /** From now on, anything that takes away an endpoint or a cluster served now is recorded. */
    synchronized void mark() {
        baseline = endpoints();
        baselineClusters = Set.copyOf(clusters);
        removals.clear();
    }

    /** What was taken away since {@link #mark()}, one line each. */
    synchronized List<String> removals() {
        if (failed != null) throw new AssertionError("the xDS stream failed: " + failed, failed);
        return List.copyOf(removals);
    }

    @Override
    public void close() {
        synchronized (this) {
            requests.onCompleted();
        }
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
