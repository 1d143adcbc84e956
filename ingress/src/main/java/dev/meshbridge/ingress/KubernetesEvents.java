package dev.meshbridge.ingress;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Posts core/v1 Events about Ingresses and McpBridges, so {@code kubectl describe} shows what the bridge thinks of
 * them. Posting happens on its own thread; a failure (no RBAC permission, API down) is logged once per kind of
 * failure and the Event dropped: the log already carries the same message.
 */
final class KubernetesEvents implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KubernetesEvents.class);
    static final String COMPONENT = "meshbridge";
    private static final int MAX_MESSAGE = 1024;

    private final KubernetesClient client;
    private final Clock clock;
    private final ExecutorService executor;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong sequence = new AtomicLong();
    private final java.util.Set<String> failuresLogged = java.util.concurrent.ConcurrentHashMap.newKeySet();

    KubernetesEvents(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
        this.executor = Executors.newSingleThreadExecutor(Threads.daemon("meshbridge-ingress-events"));
    }

    /**
     * Posts an Event (enqueued).
     *
     * @param involved the object it is about (with its uid, so {@code kubectl describe} finds it)
     * @param warning Warning when true, Normal otherwise
     */
    void post(ObjectReference involved, boolean warning, String reason, String message) {
        if (closed.get()) return;
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        String text = message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE - 3) + "..." : message;
        Event event = new EventBuilder()
                .withNewMetadata()
                .withNamespace(involved.getNamespace())
                .withName(involved.getName() + "."
                        + Long.toHexString(clock.millis() * 1000 + sequence.incrementAndGet() % 1000))
                .endMetadata()
                .withInvolvedObject(involved)
                .withType(warning ? "Warning" : "Normal")
                .withReason(reason)
                .withMessage(text)
                .withNewSource()
                .withComponent(COMPONENT)
                .endSource()
                .withReportingComponent(COMPONENT)
                .withReportingInstance(instance())
                .withFirstTimestamp(now.toString())
                .withLastTimestamp(now.toString())
                .withCount(1)
                .build();
        try {
            executor.execute(() -> create(event));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    private void create(Event event) {
        try {
            client.v1()
                    .events()
                    .inNamespace(event.getMetadata().getNamespace())
                    .resource(event)
                    .create();
        } catch (RuntimeException e) {
            String kind = e.getClass().getSimpleName()
                    + (e instanceof io.fabric8.kubernetes.client.KubernetesClientException k ? " " + k.getCode() : "");
            if (failuresLogged.add(kind)) {
                log.warn(
                        "posting Kubernetes Events failed ({}); problems stay in the log only. Does the bridge's"
                                + " role allow create on events? {}",
                        kind,
                        e.getMessage());
            }
        }
    }

    private static String instance() {
        String host = System.getenv("HOSTNAME");
        return host == null || host.isEmpty() ? "meshbridge" : host;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        executor.shutdown();
        try {
            if (!executor.awaitTermination(2, java.util.concurrent.TimeUnit.SECONDS)) executor.shutdownNow();
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
