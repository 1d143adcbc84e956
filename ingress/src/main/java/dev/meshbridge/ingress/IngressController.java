package dev.meshbridge.ingress;

import dev.meshbridge.core.admin.DebugSource;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ingress feature wired from its options: the sources (cluster, directory), the route table publisher, the
 * unknown-destination reporter and the McpBridge watch. The app creates one, subscribes to {@link #routes()}, adds
 * {@link #destinations()} as a snapshot listener of the aggregator, and closes it on shutdown.
 */
public final class IngressController implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(IngressController.class);

    private final IngressOptions options;
    private final IssueTracker issues;
    private final RouteTablePublisher publisher;
    private final UnknownDestinationReporter destinations;
    private final KubernetesClient client;
    private final boolean ownsClient;
    private final KubernetesEvents events;
    private final KubernetesIngressSource kubernetesSource;
    private final DirectoryIngressSource directorySource;
    private final McpBridgeWatcher mcpBridge;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param client the cluster client to use; null to connect as the options say (kubeconfig or in-cluster)
     * @param providers the registry types, for McpBridge conversion
     * @param onMcpBridgeRegistries receives the registries an McpBridge configures (unused when the watch is off)
     * @param catalogReady true once every registry had its first sync (unknown destinations are judged after that)
     */
    public IngressController(
            IngressOptions options,
            KubernetesClient client,
            MeterRegistry meters,
            Map<String, RegistryWatcherProvider> providers,
            Consumer<List<RegistryConfig>> onMcpBridgeRegistries,
            BooleanSupplier catalogReady) {
        this.options = options;
        this.issues = new IssueTracker(meters);
        this.publisher = new RouteTablePublisher(issues, meters);
        this.destinations = new UnknownDestinationReporter(issues, catalogReady, meters);
        publisher.addListener(destinations);
        boolean cluster = options.kubernetes().enabled();
        this.ownsClient = cluster && client == null;
        this.client = !cluster ? null : client != null ? client : connect(options.kubernetes());
        this.events =
                cluster && options.kubernetes().events() ? new KubernetesEvents(this.client, Clock.systemUTC()) : null;
        this.kubernetesSource = cluster && options.kubernetes().watchIngresses()
                ? new KubernetesIngressSource(this.client, options, publisher, issues, events)
                : null;
        this.directorySource = options.directory().enabled()
                ? new DirectoryIngressSource(
                        options.directory().path().orElseThrow(),
                        options.directory().reloadInterval(),
                        options,
                        publisher,
                        issues,
                        meters)
                : null;
        this.mcpBridge = cluster && options.mcpBridge().enabled()
                ? new McpBridgeWatcher(
                        this.client, options.mcpBridge(), providers, onMcpBridgeRegistries, events, meters)
                : null;
    }

    /** A client from the kubeconfig named in the options, else as kubectl finds one, else the in-cluster account. */
    public static KubernetesClient connect(IngressOptions.Kubernetes k) {
        String context = k.context().isEmpty() ? null : k.context();
        Config config = k.kubeconfig().isPresent()
                ? Config.fromKubeconfig(context, k.kubeconfig().get().toFile())
                : Config.autoConfigure(context);
        log.info(
                "kubernetes api={} namespace scope={}",
                config.getMasterUrl(),
                k.allNamespaces() ? "all" : k.namespaces());
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    public void start() {
        if (!started.compareAndSet(false, true)) throw new IllegalStateException("already started");
        if (kubernetesSource != null) kubernetesSource.start();
        if (directorySource != null) directorySource.start();
        publisher.start(options.syncTimeout());
        if (mcpBridge != null) mcpBridge.start();
        List<String> on = new ArrayList<>();
        if (kubernetesSource != null) on.add("kubernetes");
        if (directorySource != null)
            on.add("directory " + options.directory().path().orElseThrow());
        if (mcpBridge != null)
            on.add("McpBridge " + options.mcpBridge().namespace() + "/"
                    + options.mcpBridge().name());
        log.info("ingress started: sources={} ingressClass={}", on, options.ingressClass());
    }

    /** The merged route table and its listeners. */
    public RouteTablePublisher routes() {
        return publisher;
    }

    /** Add it to the aggregator's snapshot listeners. */
    public UnknownDestinationReporter destinations() {
        return destinations;
    }

    public IssueTracker issues() {
        return issues;
    }

    /** The registries the McpBridge last configured, when the watch is on and has read it. */
    public Optional<List<RegistryConfig>> mcpBridgeRegistries() {
        return mcpBridge == null ? Optional.empty() : mcpBridge.current();
    }

    /** The files of the directory source that are refused now, with their problems; empty without that source. */
    public Map<java.nio.file.Path, List<String>> refusedFiles() {
        return directorySource == null ? Map.of() : directorySource.refusedFiles();
    }

    /** The {@code /debug/ingress} page. */
    public DebugSource debug() {
        return new IngressDebug(publisher, issues, this::mcpBridgeRegistries, this::refusedFiles);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        if (mcpBridge != null) mcpBridge.close();
        if (directorySource != null) directorySource.close();
        if (kubernetesSource != null) kubernetesSource.close();
        destinations.close();
        publisher.close();
        if (events != null) events.close();
        if (ownsClient) client.close();
    }
}
