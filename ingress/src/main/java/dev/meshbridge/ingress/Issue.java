package dev.meshbridge.ingress;

import java.util.Objects;

/**
 * Something wrong with an Ingress that a user should see: reported once when it appears and once when it goes away.
 *
 * @param reason a CamelCase reason, as in Kubernetes Events ({@code RouteConflict}, {@code UnknownDestination}...)
 * @param message one sentence saying what is wrong and what the bridge does about it
 */
public record Issue(String reason, String message) implements Comparable<Issue> {

    /** The Ingress was refused: its last valid version (or nothing) is served. */
    public static final String INVALID = "InvalidIngress";
    /** A claim lost against an older Ingress. */
    public static final String CONFLICT = "RouteConflict";
    /** A registry destination is not in the catalog: its route answers 503. */
    public static final String UNKNOWN_DESTINATION = "UnknownDestination";
    /** A TLS Secret is missing or holds no usable certificate. */
    public static final String TLS_SECRET = "InvalidTLSSecret";
    /** Accepted, but something in it has no effect. */
    public static final String WARNING = "IngressWarning";

    public Issue {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(message, "message");
    }

    @Override
    public int compareTo(Issue o) {
        int c = reason.compareTo(o.reason);
        return c != 0 ? c : message.compareTo(o.message);
    }
}
