package dev.meshbridge.core.watch;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one rule for two instances of one service at the same address and ports (a provider restarted before its old
 * registration expired, two agents registering one process, a stale Eureka lease): one endpoint is kept.
 *
 * <ol>
 *   <li>an instance that may get traffic (enabled, weight above 0, healthy) beats one that may not;
 *   <li>then the newest registration or update wins;
 *   <li>then the instance whose id sorts first, so the result does not depend on the order the registry lists them.
 * </ol>
 */
public final class Duplicates {

    /**
     * One instance as a candidate endpoint.
     *
     * @param endpoint the endpoint it becomes
     * @param updatedAt when the registry last registered or updated it (any monotonic unit; 0 when unknown)
     * @param id the instance's identity in its registry, for the tie-break and reports
     */
    public record Candidate(Endpoint endpoint, long updatedAt, String id) {}

    /** A candidate left out, and the one kept in its place. */
    public record Dropped(Candidate dropped, Candidate kept) {
        /** Why it was left out, for the report on the dropped instance. */
        public String reason() {
            return "same address and ports as instance " + kept.id() + ", which is kept";
        }
    }

    /** The result: the endpoints kept, sorted, and what was left out. */
    public record Result(List<Endpoint> endpoints, List<Dropped> dropped) {}

    /** Orders candidates best first. */
    public static final Comparator<Candidate> PREFERENCE = Comparator.<Candidate>comparingInt(
                    c -> serving(c.endpoint()) ? 0 : 1)
            .thenComparing(Comparator.comparingLong(Candidate::updatedAt).reversed())
            .thenComparing(Candidate::id);

    private Duplicates() {}

    /** True when the endpoint may get traffic: enabled, a weight above 0 and healthy. */
    public static boolean serving(Endpoint e) {
        return e.routable() && e.health() == Health.HEALTHY;
    }

    /** Keeps one candidate per address and ports, by the rule above. */
    public static Result pick(List<Candidate> candidates) {
        Map<String, Candidate> best = new LinkedHashMap<>();
        List<Dropped> dropped = new ArrayList<>();
        for (Candidate c : candidates) {
            String where = identity(c.endpoint());
            Candidate other = best.get(where);
            if (other == null) {
                best.put(where, c);
                continue;
            }
            boolean better = PREFERENCE.compare(c, other) < 0;
            best.put(where, better ? c : other);
            dropped.add(better ? new Dropped(other, c) : new Dropped(c, other));
        }
        List<Endpoint> endpoints = new ArrayList<>(best.size());
        for (Candidate c : best.values()) endpoints.add(c.endpoint());
        endpoints.sort(null);
        return new Result(endpoints, dropped);
    }

    /** What makes two endpoints the same: address and ports. */
    public static String identity(Endpoint e) {
        return e.address() + e.ports();
    }
}
