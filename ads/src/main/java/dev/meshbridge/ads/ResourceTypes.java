package dev.meshbridge.ads;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The resource types one server serves, with the two orders the protocol needs (Envoy's "make before break"):
 *
 * <ol>
 *   <li>{@link #pushOrder()}: additions and changes go out in this order when several types change at once (clusters
 *       before their endpoints, listeners before their routes);
 *   <li>{@link #removalOrder()}: removals go out after every addition and change of the same push, in this order, so a
 *       resource is removed only once nothing the client holds still names it (listeners before the routes they
 *       name, routes before the clusters they name, clusters before their endpoints).
 * </ol>
 */
public final class ResourceTypes {

    private final List<ResourceType> pushOrder;
    private final List<ResourceType> removalOrder;
    private final Map<ResourceType, Integer> ordinals = new HashMap<>();
    private final Map<String, Integer> urlOrdinals = new HashMap<>();
    private final List<String> urls = new ArrayList<>();
    private final List<ResourceType> urlTypes = new ArrayList<>();
    private final int[][] urlsOfType;

    private ResourceTypes(List<ResourceType> pushOrder, List<ResourceType> removalOrder) {
        this.pushOrder = List.copyOf(pushOrder);
        this.removalOrder = List.copyOf(removalOrder);
        if (removalOrder.size() != pushOrder.size() || !pushOrder.containsAll(removalOrder)) {
            throw new IllegalArgumentException("the removal order must list the same types as the push order");
        }
        for (ResourceType t : pushOrder) {
            if (ordinals.put(t, ordinals.size()) != null) throw new IllegalArgumentException(t + " twice");
            for (String url : t.typeUrls()) {
                if (urlOrdinals.put(url, urls.size()) != null) {
                    throw new IllegalArgumentException("type URL " + url + " names two types");
                }
                urls.add(url);
                urlTypes.add(t);
            }
        }
        urlsOfType = new int[pushOrder.size()][];
        for (ResourceType t : pushOrder) {
            urlsOfType[ordinals.get(t)] =
                    t.typeUrls().stream().mapToInt(urlOrdinals::get).toArray();
        }
    }

    /** Types whose removals go out in the reverse of their push order. */
    public static ResourceTypes of(List<ResourceType> pushOrder) {
        return new ResourceTypes(pushOrder, pushOrder.reversed());
    }

    public static ResourceTypes of(List<ResourceType> pushOrder, List<ResourceType> removalOrder) {
        return new ResourceTypes(pushOrder, removalOrder);
    }

    public List<ResourceType> pushOrder() {
        return pushOrder;
    }

    public List<ResourceType> removalOrder() {
        return removalOrder;
    }

    /** The type with this short name, or null. */
    public ResourceType named(String name) {
        for (ResourceType t : pushOrder) {
            if (t.name().equalsIgnoreCase(name)) return t;
        }
        return null;
    }

    int size() {
        return pushOrder.size();
    }

    int ordinal(ResourceType type) {
        // the serving thread asks this for every push and ACK (metrics, indexes): the server's own type objects are
        // found by identity, without hashing a record (its name and every type URL) into a map
        for (int i = 0; i < pushOrder.size(); i++) {
            if (pushOrder.get(i) == type) return i;
        }
        Integer o = ordinals.get(type);
        if (o == null) throw new IllegalArgumentException(type.name() + " is not one of this server's types");
        return o;
    }

    /** How many type URLs the types have together. */
    int urlCount() {
        return urls.size();
    }

    /** The index of a type URL among all of them, or -1 when no type has it. */
    int urlOrdinal(String typeUrl) {
        Integer o = urlOrdinals.get(typeUrl);
        return o == null ? -1 : o;
    }

    /** The ordinals of the type URLs of a type. */
    int[] urlOrdinalsOf(ResourceType type) {
        return urlsOfType[ordinal(type)];
    }

    String url(int urlOrdinal) {
        return urls.get(urlOrdinal);
    }

    ResourceType typeOfUrl(int urlOrdinal) {
        return urlTypes.get(urlOrdinal);
    }
}
