package dev.meshbridge.core.route;

import java.util.Objects;

/**
 * Two Ingresses (or one, twice) claiming the same thing; the winner is served, the loser's claim is not.
 *
 * @param kind what was claimed
 * @param claim the claim in words: the route match ({@code host Prefix /path}), the TLS host, or {@code *} for the
 *     default backend
 * @param winner the older Ingress, which is served
 * @param loser the Ingress whose claim is left out
 */
public record RouteConflict(Kind kind, String claim, IngressRef winner, IngressRef loser) {

    /** What two Ingresses claimed. */
    public enum Kind {
        /** the same host, path type and path. */
        ROUTE,
        /** a default backend ({@code spec.defaultBackend}): only one in the whole table. */
        DEFAULT_BACKEND,
        /** the same TLS host with different Secrets. */
        TLS
    }

    public RouteConflict {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(claim, "claim");
        Objects.requireNonNull(winner, "winner");
        Objects.requireNonNull(loser, "loser");
    }

    /** One sentence for logs and Kubernetes Events, naming both Ingresses. */
    public String message() {
        String what = switch (kind) {
            case ROUTE -> "route " + claim;
            case DEFAULT_BACKEND -> "the default backend";
            case TLS -> "TLS for host " + claim;
        };
        if (winner.equals(loser)) return what + " is declared twice in " + winner + "; the first one is served";
        return what + " of " + loser + " is not served: " + winner + " claims it and is older (created "
                + winner.created() + ")";
    }
}
