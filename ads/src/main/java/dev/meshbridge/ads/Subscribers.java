package dev.meshbridge.ads;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Which subscriptions of one type include which resources: the wildcard ones, and per resource id the ones that name
 * it. A changed resource then visits only the streams subscribed to it, not every connected stream (with 5,000
 * streams each naming ten resources, that is what keeps one change from costing 5,000 checks on the server's
 * thread). Kept by {@link TypeState} as its subscription changes; owned by the server's thread.
 */
final class Subscribers {

    private final List<Set<TypeState>> wildcard = new ArrayList<>();
    private final List<Set<TypeState>> named = new ArrayList<>();
    /** (subscription, name) pairs held now. */
    private int pairs;

    Subscribers() {
        for (int i = 0; i < AdsEngine.MAX_ROLES; i++) wildcard.add(new LinkedHashSet<>());
    }

    void wildcard(TypeState ts, boolean on) {
        if (on) {
            wildcard.get(ts.stream.role).add(ts);
        } else {
            wildcard.get(ts.stream.role).remove(ts);
        }
    }

    void named(TypeState ts, int id, boolean on) {
        while (named.size() <= id) named.add(null);
        Set<TypeState> s = named.get(id);
        if (on) {
            if (s == null) named.set(id, s = new LinkedHashSet<>(4));
            if (s.add(ts)) {
                pairs++;
                ts.stream.named++;
            }
        } else if (s != null && s.remove(ts)) {
            pairs--;
            ts.stream.named--;
            if (s.isEmpty()) {
                named.set(id, null);
                ts.index.candidate(id);
            }
        }
    }

    /** The wildcard subscriptions of streams of one node role. */
    Set<TypeState> wildcard(int role) {
        return wildcard.get(role);
    }

    /** The subscriptions that name the resource of this id (some may be wildcard too). */
    Set<TypeState> naming(int id) {
        Set<TypeState> s = id < named.size() ? named.get(id) : null;
        return s == null ? Set.of() : s;
    }

    /** How many (subscription, name) pairs are held: for tests and the debug view. */
    int namedCount() {
        return pairs;
    }
}
