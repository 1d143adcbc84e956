package dev.meshbridge.app.config;

import dev.meshbridge.core.config.ConfigNode;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The {@code admin:} section: where the admin HTTP server ({@code /ready}, {@code /healthz}, {@code /metrics},
 * {@code /debug/...}) listens.
 *
 * @param enabled false turns the admin server off
 * @param address bind address, default 127.0.0.1 (the debug pages show the whole catalog: keep it local unless
 *     needed)
 * @param port default 15080; 0 picks a free port
 * @param maxConcurrentDebugRequests debug pages rendered at once, default 2; more are answered 503 with Retry-After
 * @param heapBudgetPercent the share of the maximum heap that the heap in use after a garbage collection may reach
 *     before the bridge reports it (WARN and {@code meshbridge.heap.budget.exceeded}), default 80
 */
public record AdminOptions(
        boolean enabled, String address, int port, int maxConcurrentDebugRequests, int heapBudgetPercent) {

    public static final AdminOptions DEFAULTS = new AdminOptions(true, "127.0.0.1", 15080, 2, 80);

    public AdminOptions(boolean enabled, String address, int port) {
        this(enabled, address, port, DEFAULTS.maxConcurrentDebugRequests(), DEFAULTS.heapBudgetPercent());
    }

    public AdminOptions withPort(int port) {
        return new AdminOptions(enabled, address, port, maxConcurrentDebugRequests, heapBudgetPercent);
    }

    public static AdminOptions parse(ConfigNode section) {
        boolean enabled = section.bool("enabled", true);
        String address = section.string("address", DEFAULTS.address());
        try {
            InetAddress.getByName(address);
        } catch (UnknownHostException e) {
            section.problem("address", "'" + address + "' is not an address of this machine");
        }
        int port = section.integer("port", DEFAULTS.port(), 0, 65535);
        int debug = section.integer("maxConcurrentDebugRequests", DEFAULTS.maxConcurrentDebugRequests(), 1, 64);
        int heap = section.integer("heapBudgetPercent", DEFAULTS.heapBudgetPercent(), 10, 99);
        return new AdminOptions(enabled, address, port, debug, heap);
    }
}
