package dev.meshbridge.ingress;

import dev.meshbridge.core.route.RouteTable;

/**
 * Receives every route table whose version differs from the previous one, in order, on the publisher's thread: keep
 * the work short and never block on I/O.
 */
@FunctionalInterface
public interface RouteTableListener {

    void onRouteTable(RouteTable table);
}
