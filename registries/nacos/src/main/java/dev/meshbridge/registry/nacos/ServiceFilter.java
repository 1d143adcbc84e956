package dev.meshbridge.registry.nacos;

import dev.meshbridge.core.watch.NameFilter;
import java.util.List;

/**
 * Decides which Nacos services are watched.
 *
 * <ol>
 *   <li>Dubbo's non-provider entries ({@code consumers:}, {@code configurators:}, {@code routers:}) never are;
 *   <li>the others pass the {@code serviceAllowlist} and {@code serviceDenylist} globs every registry shares
 *       ({@link NameFilter}), matched on the Nacos service name (so {@code providers:org.demo.*} selects Dubbo
 *       interfaces of a package).
 * </ol>
 */
final class ServiceFilter {

    private static final List<String> IGNORED_PREFIXES = List.of("consumers:", "configurators:", "routers:");

    private final NameFilter names;

    ServiceFilter(List<String> allow, List<String> deny) {
        this.names = NameFilter.of(allow, deny);
    }

    boolean accepts(String serviceName) {
        if (serviceName == null || serviceName.isEmpty()) return false;
        for (String prefix : IGNORED_PREFIXES) {
            if (serviceName.startsWith(prefix)) return false;
        }
        return names.accepts(serviceName);
    }
}
