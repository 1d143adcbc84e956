package dev.meshbridge.ingress;

import dev.meshbridge.core.route.IngressRef;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports the issues of Ingresses once per change of state, not on every recomputation: each producer hands over
 * the complete current issues of its category, and only what appeared or went away is logged and sent to the
 * source's {@link Sink} (Kubernetes Events for the cluster source).
 *
 * <p>Rules:
 *
 * <ol>
 *   <li>a category ({@code invalid}, {@code tls}, {@code conflict}, {@code destination}) belongs to one producer,
 *       which always passes its full state, so producers never undo each other's reports;
 *   <li>a new issue is logged at WARN and sent as a Warning; an issue that went away from an Ingress that still exists
 *       is logged at INFO and sent as a Normal {@code <reason>Resolved}; an Ingress that is gone is forgotten silently;
 *   <li>thread-safe: producers call it from their own threads; sinks must not block (they enqueue).
 * </ol>
 */
public final class IssueTracker {

    private static final Logger log = LoggerFactory.getLogger(IssueTracker.class);

    /** Where the issues of one source's Ingresses are sent besides the log. */
    @FunctionalInterface
    public interface Sink {
        /**
         * @param resolved false: the issue appeared; true: it went away
         */
        void report(IngressRef ingress, Issue issue, boolean resolved);
    }

    private final Map<String, Sink> sinks = new ConcurrentHashMap<>();
    private final Map<String, Map<IngressRef, SortedSet<Issue>>> byCategory = new HashMap<>();
    private final MeterRegistry meters;

    public IssueTracker(MeterRegistry meters) {
        this.meters = meters;
        Gauge.builder("meshbridge.ingress.issues", this, IssueTracker::ingressesWithIssues)
                .description("Ingresses with at least one open issue")
                .register(meters);
    }

    /** Sends the issues of Ingresses from {@code source} to {@code sink} too. */
    public void addSink(String source, Sink sink) {
        sinks.put(source, sink);
    }

    /**
     * Replaces the state of one category.
     *
     * @param category the producer's category
     * @param current every Ingress that has issues in this category now, with all of them
     * @param live the Ingresses that still exist (a resolved issue of one that is gone is not reported)
     */
    public synchronized void update(
            String category, Map<IngressRef, ? extends Collection<Issue>> current, Set<IngressRef> live) {
        Map<IngressRef, SortedSet<Issue>> before = byCategory.getOrDefault(category, Map.of());
        Map<IngressRef, SortedSet<Issue>> after = new HashMap<>();
        for (Map.Entry<IngressRef, ? extends Collection<Issue>> e : current.entrySet()) {
            if (!e.getValue().isEmpty()) after.put(e.getKey(), new TreeSet<>(e.getValue()));
        }
        for (Map.Entry<IngressRef, SortedSet<Issue>> e : after.entrySet()) {
            SortedSet<Issue> old = before.getOrDefault(e.getKey(), new TreeSet<>());
            for (Issue i : e.getValue()) {
                if (!old.contains(i)) emit(e.getKey(), i, false);
            }
        }
        for (Map.Entry<IngressRef, SortedSet<Issue>> e : before.entrySet()) {
            if (!live.contains(e.getKey())) continue;
            SortedSet<Issue> now = after.getOrDefault(e.getKey(), new TreeSet<>());
            for (Issue i : e.getValue()) {
                if (!now.contains(i)) emit(e.getKey(), i, true);
            }
        }
        byCategory.put(category, after);
    }

    private void emit(IngressRef ingress, Issue issue, boolean resolved) {
        if (!resolved) {
            Counter.builder("meshbridge.ingress.issues.reported")
                    .tag("reason", issue.reason())
                    .description("Ingress issues reported, by reason")
                    .register(meters)
                    .increment();
        }
        if (resolved) {
            log.info(
                    "ingress={} source={} resolved reason={} message={}",
                    ingress,
                    ingress.source(),
                    issue.reason(),
                    issue.message());
        } else {
            log.warn(
                    "ingress={} source={} reason={} message={}",
                    ingress,
                    ingress.source(),
                    issue.reason(),
                    issue.message());
        }
        Sink sink = sinks.get(ingress.source());
        if (sink == null) return;
        try {
            sink.report(ingress, issue, resolved);
        } catch (RuntimeException e) {
            log.warn("ingress={} reporting reason={} failed: {}", ingress, issue.reason(), e.toString());
        }
    }

    /** Every current issue, by Ingress (sorted), for the debug page and tests. */
    public synchronized Map<IngressRef, List<Issue>> issues() {
        Map<IngressRef, SortedSet<Issue>> all = new TreeMap<>();
        for (Map<IngressRef, SortedSet<Issue>> m : byCategory.values()) {
            m.forEach((ref, issues) ->
                    all.computeIfAbsent(ref, r -> new TreeSet<>()).addAll(issues));
        }
        Map<IngressRef, List<Issue>> out = new TreeMap<>();
        all.forEach((ref, issues) -> out.put(ref, List.copyOf(issues)));
        return out;
    }

    /** The current issues of one Ingress (any source with that namespace and name). */
    public List<Issue> issues(String namespace, String name) {
        List<Issue> out = new java.util.ArrayList<>();
        issues().forEach((ref, list) -> {
            if (ref.namespace().equals(namespace) && ref.name().equals(name)) out.addAll(list);
        });
        return out;
    }

    /** Number of Ingresses with at least one issue. */
    public synchronized int ingressesWithIssues() {
        Set<IngressRef> refs = new java.util.HashSet<>();
        byCategory.values().forEach(m -> refs.addAll(m.keySet()));
        return refs.size();
    }
}
