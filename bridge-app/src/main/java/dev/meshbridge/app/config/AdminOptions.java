package dev.meshbridge.app.config;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.Secret;
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
 * @param token protects the admin actions ({@code POST /admin/...}): when set, an action needs {@code Authorization:
 *     Bearer <token>} and may come from any address; when not, actions are taken from loopback addresses only (null)
 */
public record AdminOptions(
        boolean enabled,
        String address,
        int port,
        int maxConcurrentDebugRequests,
        int heapBudgetPercent,
        Secret token) {

    public static final AdminOptions DEFAULTS = new AdminOptions(true, "127.0.0.1", 15080, 2, 80, null);

    public AdminOptions(boolean enabled, String address, int port) {
        this(enabled, address, port, DEFAULTS.maxConcurrentDebugRequests(), DEFAULTS.heapBudgetPercent(), null);
    }

    public AdminOptions(boolean enabled, String address, int port, Secret token) {
        this(enabled, address, port, DEFAULTS.maxConcurrentDebugRequests(), DEFAULTS.heapBudgetPercent(), token);
    }

    public AdminOptions(
            boolean enabled, String address, int port, int maxConcurrentDebugRequests, int heapBudgetPercent) {
        this(enabled, address, port, maxConcurrentDebugRequests, heapBudgetPercent, null);
    }

    /** The same options on another port. */
    public AdminOptions withPort(int p) {
        return new AdminOptions(enabled, address, p, maxConcurrentDebugRequests, heapBudgetPercent, token);
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
        Secret token = section.secret("token").orElse(null);
        return new AdminOptions(enabled, address, port, debug, heap, token);
    }
}
