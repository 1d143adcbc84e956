package dev.meshbridge.bench.load;

import java.util.List;

/** A deterministic catalog of {@code services() x instances()}, known to the bridge side and the load side alike. */
public interface Catalog {

    /**
     * How many services, and instances of each, a catalog has.
     *
     * @param services services in the catalog (at least 3: the load has three kinds)
     * @param instances instances per service, 1 to 250 (the last byte of their addresses)
     */
    record Size(int services, int instances) {
        public Size {
            if (services < 3 || instances < 1 || instances > 250) {
                throw new IllegalArgumentException("services >= 3 and instances in 1..250");
            }
        }
    }

    Size size();

    default int services() {
        return size().services();
    }

    default int instances() {
        return size().instances();
    }

    /** The service every client of the fleet subscribes to (a change to it goes to every stream). */
    int probe();

    /** The host of service {@code i}. */
    String host(int service);

    /** What a client calling service {@code i} subscribes to. */
    Subscription subscription(int service);

    /**
     * The xDS resource names a client of one service asks for: as a proxyless gRPC client does (listener and route
     * only where the service has an HTTP-family port; cluster and load assignment of the port it calls).
     */
    record Subscription(List<String> clusters, List<String> listeners, List<String> routes) {
        public Subscription {
            clusters = List.copyOf(clusters);
            listeners = List.copyOf(listeners);
            routes = List.copyOf(routes);
        }
    }
}
