package dev.meshbridge.bench.load;

/**
 * How a change travels to the clients: the instance a change replaces comes back on port {@code BASE + id}, so any
 * client that receives the service's endpoints can tell which change it is looking at (the largest such port is the
 * latest change applied to that service).
 */
public final class ChangeIds {

    /** Ports above this carry a change id (the load's own ports, 8080, 20880 and 50051, are all below it). */
    public static final int BASE = 51_000;

    /** Change ids stay below this (ports up to 64,999). */
    public static final int LIMIT = 14_000;

    private ChangeIds() {}

    public static int port(int id) {
        if (id < 1 || id >= LIMIT) throw new IllegalArgumentException("change id " + id + " is out of 1.." + LIMIT);
        return BASE + id;
    }

    /** The change id a port carries, or 0 for an ordinary port. */
    public static int id(int port) {
        return port > BASE && port < BASE + LIMIT ? port - BASE : 0;
    }
}
