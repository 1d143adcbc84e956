package dev.meshbridge.ingress;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one Higress McpBridge resource ({@code networking.higress.io/v1}, kind {@code McpBridge}; by default {@code
 * higress-system/default}, the one Higress reads) and hands the registries it configures to a callback, so Higress
 * users point the bridge at what they already have.
 *
 * <ol>
 *   <li>each new {@code spec} is converted by {@link McpBridgeConverter}; an accepted list that differs from the last
 *       one goes to the callback, logged and reported on the resource (Event {@code RegistriesApplied});
 *   <li>a refused spec is logged with every problem and reported (Event {@code InvalidRegistries}); the last good list
 *       stays in effect;
 *   <li>a deleted resource hands over an empty list (its registries are removed); a resource that does not exist at
 *       the first read does the same, once, so the caller knows the watch is synced;
 *   <li>the callback runs on this watcher's thread, one call at a time.
 * </ol>
 */
public final class McpBridgeWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(McpBridgeWatcher.class);

    static final ResourceDefinitionContext MCP_BRIDGE = new ResourceDefinitionContext.Builder()
            .withGroup("networking.higress.io")
            .withVersion("v1")
            .withKind("McpBridge")
            .withPlural("mcpbridges")
            .withNamespaced(true)
            .build();

    private final KubernetesClient client;
    private final IngressOptions.McpBridge options;
    private final Map<String, RegistryWatcherProvider> providers;
    private final Consumer<List<RegistryConfig>> onRegistries;
    private final KubernetesEvents events;
    private final ExecutorService executor;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicReference<List<RegistryConfig>> applied = new AtomicReference<>();
    private final Counter appliedCount;
    private final Counter refusedCount;
    private SharedIndexInformer<GenericKubernetesResource> informer;

    // --- owned by the executor thread ---
    private Object lastSpec;
    private boolean seen;

    /**
     * @param providers the registry types on the class path (normally {@code RegistriesConfig.loadProviders()})
     * @param onRegistries receives each new list of registries
     * @param events where problems are posted as Kubernetes Events; null to only log them
     */
    public McpBridgeWatcher(
            KubernetesClient client,
            IngressOptions.McpBridge options,
            Map<String, RegistryWatcherProvider> providers,
            Consumer<List<RegistryConfig>> onRegistries,
            KubernetesEvents events,
            MeterRegistry meters) {
        this.client = client;
        this.options = options;
        this.providers = Map.copyOf(providers);
        this.onRegistries = onRegistries;
        this.events = events;
        this.executor = Executors.newSingleThreadExecutor(Threads.daemon("meshbridge-mcpbridge"));
        this.appliedCount = Counter.builder("meshbridge.ingress.mcpbridge.updates")
                .tag("result", "applied")
                .description("McpBridge registry lists, by result")
                .register(meters);
        this.refusedCount = Counter.builder("meshbridge.ingress.mcpbridge.updates")
                .tag("result", "refused")
                .description("McpBridge registry lists, by result")
                .register(meters);
    }

    public void start() {
        if (!started.compareAndSet(false, true)) throw new IllegalStateException("already started");
        informer = client.genericKubernetesResources(MCP_BRIDGE)
                .inNamespace(options.namespace())
                .withName(options.name())
                .runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<GenericKubernetesResource>() {
            @Override
            public void onAdd(GenericKubernetesResource obj) {
                enqueue(() -> changed(obj));
            }

            @Override
            public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
                enqueue(() -> changed(newObj));
            }

            @Override
            public void onDelete(GenericKubernetesResource obj, boolean deletedFinalStateUnknown) {
                enqueue(McpBridgeWatcher.this::deleted);
            }
        });
        AtomicBoolean warned = new AtomicBoolean();
        informer.exceptionHandler((isStarted, t) -> {
            if (warned.compareAndSet(false, true)) {
                log.warn(
                        "McpBridge {}/{} watch failed, keeping the last registries and retrying: {}",
                        options.namespace(),
                        options.name(),
                        t.toString());
            }
            return true;
        });
        informer.start()
                .whenComplete((v, e) -> enqueue(() -> {
                    // handlers are notified asynchronously: the store already holds the first read
                    List<GenericKubernetesResource> stored = informer.getStore().list();
                    if (!stored.isEmpty()) {
                        changed(stored.get(0));
                    } else if (!seen) {
                        log.info(
                                "McpBridge {}/{} does not exist; no registries from it",
                                options.namespace(),
                                options.name());
                        deliver(List.of());
                    }
                }));
    }

    /** The registries last handed over, if any. */
    public Optional<List<RegistryConfig>> current() {
        return Optional.ofNullable(applied.get());
    }

    private void enqueue(Runnable task) {
        if (closed.get()) return;
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void changed(GenericKubernetesResource resource) {
        seen = true;
        Object spec = resource.getAdditionalProperties().get("spec");
        if (Objects.equals(spec, lastSpec)) return;
        lastSpec = spec;
        String ns = resource.getMetadata().getNamespace();
        String name = resource.getMetadata().getName();
        McpBridgeConverter.Result r = McpBridgeConverter.convert(ns, name, spec, providers);
        ObjectReference ref = new ObjectReferenceBuilder()
                .withApiVersion("networking.higress.io/v1")
                .withKind("McpBridge")
                .withNamespace(ns)
                .withName(name)
                .withUid(resource.getMetadata().getUid())
                .withResourceVersion(resource.getMetadata().getResourceVersion())
                .build();
        String notes = r.notes().isEmpty() ? "" : " Notes: " + String.join("; ", r.notes()) + ".";
        if (!r.accepted()) {
            refusedCount.increment();
            String kept = applied.get() == null
                    ? "no registries from it are used"
                    : "the last valid registries stay in effect (" + names(applied.get()) + ")";
            log.error(
                    "McpBridge {}/{} refused, {}; {} problem(s):\n  {}",
                    ns,
                    name,
                    kept,
                    r.problems().size(),
                    String.join("\n  ", r.problems()));
            post(ref, true, "InvalidRegistries", "refused, " + kept + ": " + String.join("; ", r.problems()) + notes);
            return;
        }
        for (String note : r.notes()) log.warn("McpBridge {}/{}: {}", ns, name, note);
        if (r.registries().equals(applied.get())) return;
        appliedCount.increment();
        log.info("McpBridge {}/{} applied: registries={}", ns, name, names(r.registries()));
        post(ref, false, "RegistriesApplied", r.registries().size() + " registries: " + names(r.registries()) + notes);
        deliver(r.registries());
    }

    private void deleted() {
        lastSpec = null;
        seen = false;
        log.warn(
                "McpBridge {}/{} deleted; its registries are removed: {}",
                options.namespace(),
                options.name(),
                applied.get() == null ? "[]" : names(applied.get()));
        deliver(List.of());
    }

    private void deliver(List<RegistryConfig> registries) {
        applied.set(List.copyOf(registries));
        try {
            onRegistries.accept(registries);
        } catch (RuntimeException e) {
            log.error("applying the registries of McpBridge {}/{} failed", options.namespace(), options.name(), e);
        }
    }

    private void post(ObjectReference ref, boolean warning, String reason, String message) {
        if (events != null) events.post(ref, warning, reason, message);
    }

    private static String names(List<RegistryConfig> registries) {
        return registries.stream().map(c -> c.type() + ":" + c.name()).toList().toString();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        if (informer != null) informer.close();
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
