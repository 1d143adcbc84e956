package dev.meshbridge.app.config;

import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import dev.meshbridge.ingress.IngressOptions;
import dev.meshbridge.mcp.McpOptions;
import dev.meshbridge.xds.XdsOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The whole validated {@code bridge.yaml}. Sections: {@code registries} (see {@link RegistriesConfig} and each
 * registry type's options), {@code aggregator}, {@code xds}, {@code mcp}, {@code ingress}, {@code admin}, {@code reload}, {@code data}, {@code shutdown}.
 *
 * @param registries the registries to watch, in file order
 * @param aggregator coalescing of changes ({@code quietPeriod} default 10ms, {@code maxDelay} default 50ms)
 * @param xds the xDS server for Envoy and proxyless gRPC
 * @param mcp the MCP server for istiod
 * @param ingress Kubernetes Ingress (from a cluster or a directory) and Higress McpBridge sources
 * @param admin the admin HTTP server
 * @param reload watching this file for changes
 * @param data where the last good catalog is kept across restarts
 * @param shutdown how a replica leaves: {@code /ready} 503, a drain period, then GOAWAY to every stream
 */
public record BridgeConfig(
        List<RegistryConfig> registries,
        ServiceAggregator.Options aggregator,
        XdsOptions xds,
        McpOptions mcp,
        IngressOptions ingress,
        AdminOptions admin,
        ReloadOptions reload,
        DataOptions data,
        ShutdownOptions shutdown) {

    public BridgeConfig {
        registries = List.copyOf(registries);
    }

    /** Parses and validates; every problem in the file is reported at once, each with its line and field. */
    public static BridgeConfig parse(ConfigNode root, Map<String, RegistryWatcherProvider> providers)
            throws ConfigException {
        List<RegistryConfig> registries = RegistriesConfig.parse(root, providers);
        ConfigNode agg = root.section("aggregator");
        Duration quiet = agg.duration("quietPeriod", ServiceAggregator.Options.DEFAULTS.quietPeriod());
        Duration max = agg.duration("maxDelay", ServiceAggregator.Options.DEFAULTS.maxDelay());
        if (max.compareTo(quiet) < 0)
            agg.problem("maxDelay", "must not be shorter than quietPeriod (" + quiet.toMillis() + "ms)");
        if (max.compareTo(Duration.ofSeconds(10)) > 0)
            agg.problem("maxDelay", "at most 10s; changes would reach proxies too late");
        XdsOptions xds = XdsOptions.parse(root.section("xds"));
        McpOptions mcp = McpOptions.parse(root.section("mcp"));
        IngressOptions ingress = IngressOptions.parse(root.section("ingress"));
        if (!ingress.kubernetes().enabled()) {
            root.refuseKubernetesSecrets("a credential from a Kubernetes Secret needs the Kubernetes source: set"
                    + " ingress.kubernetes.enabled: true, or give it as {env: NAME} or {file: PATH}");
        }
        AdminOptions admin = AdminOptions.parse(root.section("admin"));
        ReloadOptions reload = ReloadOptions.parse(root.section("reload"));
        DataOptions data = DataOptions.parse(root.section("data"));
        ShutdownOptions shutdown = ShutdownOptions.parse(root.section("shutdown"));
        root.finish();
        return new BridgeConfig(
                registries,
                new ServiceAggregator.Options(quiet, max),
                xds,
                mcp,
                ingress,
                admin,
                reload,
                data,
                shutdown);
    }

    /** This configuration with another admin port (the command line's {@code --admin-port}). */
    public BridgeConfig withAdminPort(int port) {
        return new BridgeConfig(
                registries, aggregator, xds, mcp, ingress, admin.withPort(port), reload, data, shutdown);
    }

    /** This configuration with another xDS port (the command line's {@code --xds-port}). */
    public BridgeConfig withXdsPort(int port) {
        return new BridgeConfig(
                registries,
                aggregator,
                xds.withAddress(xds.bindAddress(), port),
                mcp,
                ingress,
                admin,
                reload,
                data,
                shutdown);
    }

    /** This configuration with another MCP port (the command line's {@code --mcp-port}). */
    public BridgeConfig withMcpPort(int port) {
        return new BridgeConfig(
                registries,
                aggregator,
                xds,
                mcp.toBuilder().port(port).build(),
                ingress,
                admin,
                reload,
                data,
                shutdown);
    }

    /** This configuration with another data directory (the command line's {@code --data-dir}; null: none). */
    public BridgeConfig withDataDirectory(Path directory) {
        return new BridgeConfig(
                registries,
                aggregator,
                xds,
                mcp,
                ingress,
                admin,
                reload,
                new DataOptions(directory, data.writeInterval()),
                shutdown);
    }

    /** Loads a file; a relative {@code data.directory} is taken relative to the file's directory. */
    public static BridgeConfig load(Path file, Map<String, RegistryWatcherProvider> providers) throws ConfigException {
        BridgeConfig c = parse(ConfigNode.parse(file), providers);
        Path dir = c.data().directory();
        if (dir != null && !dir.isAbsolute()) {
            Path parent = file.toAbsolutePath().getParent();
            c = c.withDataDirectory(parent == null ? dir : parent.resolve(dir));
        }
        return c;
    }

    public static BridgeConfig parse(String source, String yaml, Map<String, RegistryWatcherProvider> providers)
            throws ConfigException {
        return parse(ConfigNode.parse(source, yaml), providers);
    }
}
