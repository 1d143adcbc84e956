package dev.meshbridge.core.config;

import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Parses the {@code registries:} list of {@code bridge.yaml}. The fields every entry has, modelled on Higress's
 * McpBridge {@code registries[]}:
 *
 * <ul>
 *   <li>{@code type} (required): a registry type some provider on the class path serves;
 *   <li>{@code name} (required): unique, a DNS-1123 label (it appears in hosts, labels and metrics);
 *   <li>{@code addresses}: a list of {@code host[:port]} (URLs for Eureka); or Higress's {@code domain} (comma
 *       separated allowed) with {@code port};
 *   <li>{@code emptyServicePolicy} ({@code delete}, the default, or {@code keep}) and {@code emptyServiceGrace}
 *       (default 60s) for {@code keep};
 *   <li>{@code syncTimeout} (default 30s): how long {@code /ready} waits for the first sync;
 *   <li>{@code servicePorts}: virtual port per port name, e.g. {@code {http: 8080}};
 *   <li>{@code nonIpAddress} ({@code resolve}, the default, or {@code skip}) and {@code hostNameRefresh} (default
 *       30s): instances registered under a host name (see {@link HostNamePolicy});
 *   <li>{@code reregistrationWindow}, {@code warmUp} and {@code deletionGuard}: when what left the registry leaves
 *       the catalog (see {@link RemovalPolicy});
 *   <li>everything else is the type's own options, parsed by its provider.
 * </ul>
 */
public final class RegistriesConfig {

    public static final Duration DEFAULT_SYNC_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_GRACE = Duration.ofSeconds(60);

    private RegistriesConfig() {}

    /** The providers found through {@link ServiceLoader}, by type. */
    public static Map<String, RegistryWatcherProvider> loadProviders() {
        Map<String, RegistryWatcherProvider> providers = new TreeMap<>();
        for (RegistryWatcherProvider p : ServiceLoader.load(RegistryWatcherProvider.class)) {
            RegistryWatcherProvider previous = providers.putIfAbsent(p.type(), p);
            if (previous != null && previous.getClass() != p.getClass()) {
                throw new IllegalStateException("two providers for registry type " + p.type() + ": "
                        + previous.getClass().getName() + " and " + p.getClass().getName());
            }
        }
        return providers;
    }

    /** Parses {@code registries:} from the root; problems are recorded on the nodes (call {@code root.finish()}). */
    public static List<RegistryConfig> parse(ConfigNode root, Map<String, RegistryWatcherProvider> providers) {
        List<RegistryConfig> out = new ArrayList<>();
        Map<String, Integer> names = new HashMap<>();
        for (ConfigNode entry : root.list("registries")) {
            if (!entry.isMapping()) {
                entry.problemHere("each registry must be a mapping with at least type and name");
                continue;
            }
            RegistryConfig c = parseEntry(entry, providers);
            if (c == null) continue;
            Integer firstLine = names.putIfAbsent(c.name(), entry.line());
            if (firstLine != null) {
                entry.problem("name", "registry name '" + c.name() + "' is already used at line " + firstLine);
                continue;
            }
            out.add(c);
        }
        return List.copyOf(out);
    }

    private static RegistryConfig parseEntry(ConfigNode entry, Map<String, RegistryWatcherProvider> providers) {
        String type = entry.requiredString("type");
        String name = entry.requiredString("name");
        if (name != null && !Dns1123.isLabel(name)) {
            entry.problem(
                    "name", "'" + name + "' must be a DNS-1123 label: lower-case letters, digits and '-', at most 63");
        }
        RegistryWatcherProvider provider = type == null ? null : providers.get(type);
        if (type != null && provider == null) {
            entry.problem(
                    "type", "unknown registry type '" + type + "'; available: " + new TreeSet<>(providers.keySet()));
        }
        List<String> raw = new ArrayList<>(entry.strings("addresses"));
        if (entry.has("domain")) {
            if (!raw.isEmpty()) entry.problem("domain", "give either addresses or domain (with port), not both");
            int port = entry.integer("port", provider == null ? 0 : provider.defaultPort(), 1, 65535);
            for (String d : entry.strings("domain")) raw.add(d.contains(":") ? d : d + ":" + port);
        } else if (entry.has("port")) {
            entry.problem("port", "port goes with domain; with addresses, write host:port");
        }
        EmptyServicePolicy.Mode mode =
                entry.enumValue("emptyServicePolicy", EmptyServicePolicy.Mode.class, EmptyServicePolicy.Mode.DELETE);
        Duration grace = entry.duration("emptyServiceGrace", DEFAULT_GRACE);
        if (mode == EmptyServicePolicy.Mode.DELETE && entry.has("emptyServiceGrace")) {
            entry.problem("emptyServiceGrace", "only applies with emptyServicePolicy: keep");
        }
        Duration syncTimeout = entry.duration("syncTimeout", DEFAULT_SYNC_TIMEOUT);
        TreeMap<String, Integer> servicePorts = new TreeMap<>();
        entry.child("servicePorts").ifPresent(sp -> {
            if (!sp.isMapping()) {
                sp.problemHere("expected a mapping of port name to port number, e.g. {http: 8080}");
                return;
            }
            for (String portName : sp.keys()) {
                if (!Dns1123.isLabel(portName)) sp.problem(portName, "port name must be a DNS-1123 label");
                servicePorts.put(portName, sp.integer(portName, 0, 1, 65535));
            }
        });
        HostNamePolicy hostNames = HostNamePolicy.parse(entry);
        RemovalPolicy removals = RemovalPolicy.parse(entry);
        RegistryLimits limits = RegistryLimits.parse(entry.section("limits"));
        if (provider == null || name == null) {
            entry.accept(entry.keys().toArray(String[]::new)); // unknown type: its options cannot be checked
            return null;
        }
        if (raw.isEmpty()) entry.problem("addresses", "required: give addresses (or domain and port)");
        List<String> addresses = provider.normalizeAddresses(raw, entry);
        Object options = provider.parseOptions(entry);
        if (options == null)
            throw new IllegalStateException(provider.getClass().getName() + ".parseOptions returned null");
        return new RegistryConfig(
                type,
                name,
                addresses,
                new EmptyServicePolicy(mode, grace),
                syncTimeout,
                servicePorts,
                options,
                hostNames,
                removals,
                limits);
    }
}
