package dev.meshbridge.ingress;

import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.SecretRef;
import dev.meshbridge.core.route.TlsEntry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads Ingresses from a Kubernetes cluster with fabric8 informers and hands the routes of ours to the {@link
 * RouteTablePublisher}.
 *
 * <ol>
 *   <li>informers: Ingresses (all namespaces or each configured one), IngressClasses, and one per TLS Secret an
 *       accepted Ingress names (opened and closed as Ingresses come and go), so only those Secrets are read;
 *   <li>informer callbacks only enqueue; one thread owns the state and recomputes the contributions after each burst
 *       of changes;
 *   <li>an Ingress that does not translate is refused: its last valid version stays served (none if it never had
 *       one), and the problem is reported on it (Event {@code InvalidIngress}) until it is fixed;
 *   <li>a missing or unusable TLS Secret leaves the entry without certificate and is reported ({@code
 *       InvalidTLSSecret}); a rotated Secret changes the material and the table's version;
 *   <li>the first delivery waits for the Ingress, IngressClass and first Secret reads (bounded by the sync timeout);
 *       a lost connection keeps the last state while fabric8 reconnects.
 * </ol>
 */
public final class KubernetesIngressSource implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KubernetesIngressSource.class);

    public static final String SOURCE = "kubernetes";
    static final String INVALID_CATEGORY = "kubernetes-invalid";
    static final String WARNING_CATEGORY = "kubernetes-warnings";

    private final KubernetesClient client;
    private final IngressOptions options;
    private final RouteTablePublisher publisher;
    private final IssueTracker issues;
    private final KubernetesEvents events;
    private final IngressTranslator translator;
    private final IngressClassFilter filter;
    private final ScheduledExecutorService executor;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private final Map<String, ObjectReference> references = new ConcurrentHashMap<>();

    // --- owned by the executor thread ---
    private final Map<String, Ingress> ingresses = new TreeMap<>();
    private final Map<String, IngressClass> classes = new TreeMap<>();
    private final Map<String, IngressTranslator.Translation> lastGood = new HashMap<>();
    private final Map<String, Translated> translated = new HashMap<>();
    private final Map<SecretRef, SecretWatch> secrets = new HashMap<>();
    private boolean listed;
    private boolean delivered;
    private boolean waitOver;
    private boolean rebuildPending;

    /** The translation of one Ingress object, reused while the informer holds the same object. */
    private record Translated(Ingress ingress, IngressTranslator.Translation translation) {}

    private static final class SecretWatch {
        final SharedIndexInformer<Secret> informer;
        Secret secret;
        boolean synced;

        SecretWatch(SharedIndexInformer<Secret> informer) {
            this.informer = informer;
        }
    }

    /**
     * @param events where Ingress problems are posted as Kubernetes Events; null to only log them
     */
    public KubernetesIngressSource(
            KubernetesClient client,
            IngressOptions options,
            RouteTablePublisher publisher,
            IssueTracker issues,
            KubernetesEvents events) {
        this.client = client;
        this.options = options;
        this.publisher = publisher;
        this.issues = issues;
        this.events = events;
        this.translator = new IngressTranslator(SOURCE, options.clusterDomain());
        this.filter = new IngressClassFilter(options.ingressClass(), options.controllerName());
        this.executor = Executors.newSingleThreadScheduledExecutor(Threads.daemon("meshbridge-ingress-kubernetes"));
    }

    /** Starts the informers; returns at once (the first read completes in the background). */
    public void start() {
        if (!started.compareAndSet(false, true)) throw new IllegalStateException("already started");
        publisher.expectSource(SOURCE);
        if (events != null) issues.addSink(SOURCE, this::postEvent);
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        SharedIndexInformer<IngressClass> classInformer =
                client.network().v1().ingressClasses().runnableInformer(0);
        reads.add(run(
                classInformer,
                c -> classes.put(c.getMetadata().getName(), c),
                c -> classes.remove(c.getMetadata().getName())));
        List<String> namespaces = options.kubernetes().namespaces();
        if (namespaces.isEmpty()) {
            reads.add(run(
                    client.network().v1().ingresses().inAnyNamespace().runnableInformer(0),
                    this::putIngress,
                    this::removeIngress));
        } else {
            for (String ns : namespaces) {
                reads.add(run(
                        client.network().v1().ingresses().inNamespace(ns).runnableInformer(0),
                        this::putIngress,
                        this::removeIngress));
            }
        }
        CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> enqueue(() -> {
                    listed = true;
                    log.info(
                            "kubernetes ingresses={} ingressClasses={} namespaces={} first read done",
                            ingresses.size(),
                            classes.size(),
                            namespaces.isEmpty() ? "all" : namespaces);
                    scheduleRebuild();
                }));
        executor.schedule(
                () -> {
                    waitOver = true;
                    scheduleRebuild();
                },
                options.syncTimeout().toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private <T extends HasMetadata> CompletableFuture<Void> run(
            SharedIndexInformer<T> informer, Consumer<T> put, Consumer<T> remove) {
        String type = informer.getApiTypeClass().getSimpleName();
        informer.addEventHandler(new ResourceEventHandler<T>() {
            @Override
            public void onAdd(T obj) {
                enqueue(() -> {
                    put.accept(obj);
                    scheduleRebuild();
                });
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                enqueue(() -> {
                    put.accept(newObj);
                    scheduleRebuild();
                });
            }

            @Override
            public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                enqueue(() -> {
                    remove.accept(obj);
                    scheduleRebuild();
                });
            }
        });
        AtomicBoolean warned = new AtomicBoolean();
        informer.exceptionHandler((isStarted, t) -> {
            if (warned.compareAndSet(false, true)) {
                log.warn("kubernetes {} watch failed, keeping the last state and retrying: {}", type, t.toString());
            }
            return true;
        });
        synchronized (informers) {
            informers.add(informer);
        }
        // handlers are notified asynchronously: take the first read from the store, so it is complete when the
        // returned future completes (later notifications of the same objects change nothing)
        return informer.start()
                .toCompletableFuture()
                .thenRun(() -> enqueue(() -> informer.getStore().list().forEach(put)));
    }

    private void putIngress(Ingress ingress) {
        String key = key(ingress);
        ingresses.put(key, ingress);
        references.put(
                key,
                new ObjectReferenceBuilder()
                        .withApiVersion("networking.k8s.io/v1")
                        .withKind("Ingress")
                        .withNamespace(ingress.getMetadata().getNamespace())
                        .withName(ingress.getMetadata().getName())
                        .withUid(ingress.getMetadata().getUid())
                        .withResourceVersion(ingress.getMetadata().getResourceVersion())
                        .build());
    }

    private void removeIngress(Ingress ingress) {
        String key = key(ingress);
        ingresses.remove(key);
        lastGood.remove(key);
        translated.remove(key);
        references.remove(key);
    }

    private static String key(HasMetadata o) {
        return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
    }

    private void enqueue(Runnable task) {
        if (closed.get()) return;
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void scheduleRebuild() {
        if (rebuildPending) return;
        rebuildPending = true;
        enqueue(() -> {
            rebuildPending = false;
            rebuild();
        });
    }

    private void rebuild() {
        if (!listed) return;
        List<IngressClass> classList = List.copyOf(classes.values());
        Map<IngressRef, List<Issue>> invalid = new HashMap<>();
        Map<IngressRef, List<Issue>> warnings = new HashMap<>();
        Set<IngressRef> live = new HashSet<>();
        Set<SecretRef> wanted = new HashSet<>();
        List<IngressRoutes> contributions = new ArrayList<>();
        for (Map.Entry<String, Ingress> e : ingresses.entrySet()) {
            if (!filter.accepts(e.getValue(), classList, false)) {
                lastGood.remove(e.getKey());
                continue;
            }
            Translated cached = translated.get(e.getKey());
            if (cached == null || cached.ingress() != e.getValue()) {
                cached = new Translated(e.getValue(), translator.translate(e.getValue()));
                translated.put(e.getKey(), cached);
            }
            IngressTranslator.Translation t = cached.translation();
            live.add(t.ref());
            IngressTranslator.Translation previous = lastGood.get(e.getKey());
            if (t.accepted()) {
                lastGood.put(e.getKey(), t);
            } else {
                invalid.put(t.ref(), List.of(refusal(t, previous != null)));
            }
            t.addWarnings(warnings);
            IngressTranslator.Translation use = lastGood.get(e.getKey());
            if (use == null) continue;
            IngressRoutes routes = use.routes().orElseThrow();
            for (TlsEntry entry : routes.tls()) wanted.add(entry.secret());
            contributions.add(TlsSecrets.withTls(routes, this::secretState, t.ref(), warnings));
        }
        boolean secretsPending = reconcileSecrets(wanted);
        issues.update(INVALID_CATEGORY, invalid, live);
        issues.update(WARNING_CATEGORY, warnings, live);
        if (!delivered && secretsPending && !waitOver) return;
        delivered = true;
        publisher.update(SOURCE, contributions);
    }

    static Issue refusal(IngressTranslator.Translation t, boolean hasPrevious) {
        StringBuilder sb = new StringBuilder("refused: ");
        for (int i = 0; i < t.problems().size(); i++) {
            if (i > 0) sb.append("; ");
            sb.append(t.problems().get(i));
        }
        sb.append(hasPrevious ? ". Its last valid version stays served." : ". It is not served.");
        return new Issue(Issue.INVALID, sb.toString());
    }

    /** The Secret as read: empty before its first read, else the Secret or null when it does not exist. */
    private Optional<Optional<Secret>> secretState(SecretRef ref) {
        SecretWatch w = secrets.get(ref);
        if (w == null || !w.synced) return Optional.empty();
        return Optional.of(Optional.ofNullable(w.secret));
    }

    /** Opens a watch per wanted Secret and closes the others; true while some wanted Secret is not read yet. */
    private boolean reconcileSecrets(Set<SecretRef> wanted) {
        for (SecretRef ref : List.copyOf(secrets.keySet())) {
            if (!wanted.contains(ref)) {
                SecretWatch w = secrets.remove(ref);
                w.informer.close();
                synchronized (informers) {
                    informers.remove(w.informer);
                }
            }
        }
        boolean pending = false;
        for (SecretRef ref : wanted) {
            SecretWatch w = secrets.get(ref);
            if (w == null) {
                w = watchSecret(ref);
                secrets.put(ref, w);
            }
            pending |= !w.synced;
        }
        return pending;
    }

    private SecretWatch watchSecret(SecretRef ref) {
        SharedIndexInformer<Secret> informer = client.secrets()
                .inNamespace(ref.namespace())
                .withName(ref.name())
                .runnableInformer(0);
        SecretWatch w = new SecretWatch(informer);
        run(informer, s -> w.secret = s, s -> w.secret = null)
                .whenComplete((v, e) -> enqueue(() -> {
                    w.synced = true;
                    scheduleRebuild();
                }));
        return w;
    }

    private void postEvent(IngressRef ingress, Issue issue, boolean resolved) {
        ObjectReference ref = references.get(ingress.key());
        if (ref == null) return;
        events.post(
                ref,
                !resolved,
                resolved ? issue.reason() + "Resolved" : issue.reason(),
                resolved ? "resolved: " + issue.message() : issue.message());
    }

    /** How long the first delivery may wait; for the debug page. */
    Duration syncTimeout() {
        return options.syncTimeout();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<SharedIndexInformer<?>> all;
        synchronized (informers) {
            all = List.copyOf(informers);
            informers.clear();
        }
        for (SharedIndexInformer<?> i : all) {
            try {
                i.close();
            } catch (RuntimeException e) {
                log.debug("closing informer failed: {}", e.toString());
            }
        }
    }
}
