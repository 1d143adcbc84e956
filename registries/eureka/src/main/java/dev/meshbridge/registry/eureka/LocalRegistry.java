package dev.meshbridge.registry.eureka;

import com.netflix.appinfo.AmazonInfo;
import com.netflix.appinfo.DataCenterInfo;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import com.netflix.discovery.shared.Application;
import com.netflix.discovery.shared.Applications;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The watcher's copy of the whole Eureka registry (every application, filtered or not, because Eureka's delta hash
 * covers all of them), kept by full fetches and deltas as Eureka's own client keeps it. Owned by one thread.
 *
 * <p>Rules, as Eureka's client applies them:
 *
 * <ol>
 *   <li>a full fetch replaces everything;
 *   <li>a delta carries each changed instance with an action: {@code ADDED} and {@code MODIFIED} put it (by instance
 *       id), {@code DELETED} removes it; an application without instances is gone;
 *   <li>a server repeats a change in every delta for minutes, so an instance that arrives as it already is (same
 *       status, addresses, ports, metadata and update times) touches nothing;
 *   <li>after a delta, {@link #reconcileHash()} must equal the delta's {@code apps_hashcode} (instance counts per
 *       status over the whole registry, e.g. {@code DOWN_1_UP_3_}); otherwise the copy has drifted and the next
 *       step is a full fetch.
 * </ol>
 */
final class LocalRegistry {

    private final Map<String, Map<String, InstanceInfo>> apps = new HashMap<>();

    /**
     * Replaces the whole registry.
     *
     * @return the applications whose instances may have changed (every application before and after)
     */
    Set<String> replace(Applications full) {
        Set<String> touched = new HashSet<>(apps.keySet());
        apps.clear();
        for (Application app : full.getRegisteredApplications()) {
            for (InstanceInfo instance : app.getInstancesAsIsFromEureka()) {
                put(appName(app, instance), instance);
            }
        }
        touched.addAll(apps.keySet());
        return touched;
    }

    /**
     * Applies a delta.
     *
     * @return the applications whose instances changed
     */
    Set<String> apply(Applications delta) {
        Set<String> touched = new HashSet<>();
        for (Application app : delta.getRegisteredApplications()) {
            for (InstanceInfo instance : app.getInstancesAsIsFromEureka()) {
                String name = appName(app, instance);
                if (instance.getActionType() == InstanceInfo.ActionType.DELETED) {
                    Map<String, InstanceInfo> instances = apps.get(name);
                    if (instances != null && instances.remove(instance.getId()) != null) {
                        touched.add(name);
                        if (instances.isEmpty()) apps.remove(name);
                    }
                } else {
                    InstanceInfo previous = put(name, instance);
                    if (previous == null || !sameState(previous, instance)) touched.add(name);
                }
            }
        }
        return touched;
    }

    private InstanceInfo put(String app, InstanceInfo instance) {
        return apps.computeIfAbsent(app, k -> new HashMap<>()).put(instance.getId(), instance);
    }

    /** True when two copies of an instance agree on everything the mapping reads and on when they last changed. */
    static boolean sameState(InstanceInfo a, InstanceInfo b) {
        return a.getStatus() == b.getStatus()
                && a.getLastUpdatedTimestamp() == b.getLastUpdatedTimestamp()
                && Objects.equals(a.getLastDirtyTimestamp(), b.getLastDirtyTimestamp())
                && Objects.equals(a.getIPAddr(), b.getIPAddr())
                && Objects.equals(a.getHostName(), b.getHostName())
                && a.getPort() == b.getPort()
                && a.getSecurePort() == b.getSecurePort()
                && a.isPortEnabled(InstanceInfo.PortType.UNSECURE) == b.isPortEnabled(InstanceInfo.PortType.UNSECURE)
                && a.isPortEnabled(InstanceInfo.PortType.SECURE) == b.isPortEnabled(InstanceInfo.PortType.SECURE)
                && Objects.equals(a.getMetadata(), b.getMetadata())
                && Objects.equals(dataCenter(a), dataCenter(b));
    }

    private static Object dataCenter(InstanceInfo instance) {
        DataCenterInfo dc = instance.getDataCenterInfo();
        if (dc instanceof AmazonInfo aws) return aws.getMetadata();
        return dc == null ? null : dc.getName();
    }

    private static String appName(Application app, InstanceInfo instance) {
        String name = app.getName() != null ? app.getName() : instance.getAppName();
        return name == null ? "" : name;
    }

    /** The instances of one application (empty when it has none). */
    Collection<InstanceInfo> instances(String app) {
        Map<String, InstanceInfo> instances = apps.get(app);
        return instances == null ? List.of() : instances.values();
    }

    Set<String> applications() {
        return apps.keySet();
    }

    int instanceCount() {
        int n = 0;
        for (Map<String, InstanceInfo> instances : apps.values()) n += instances.size();
        return n;
    }

    /** Eureka's reconcile hash of this copy, computed as the server computes {@code apps_hashcode}. */
    String reconcileHash() {
        TreeMap<String, AtomicInteger> counts = new TreeMap<>();
        for (Map<String, InstanceInfo> instances : apps.values()) {
            for (InstanceInfo instance : instances.values()) {
                InstanceStatus status = instance.getStatus() == null ? InstanceStatus.UNKNOWN : instance.getStatus();
                counts.computeIfAbsent(status.name(), k -> new AtomicInteger()).incrementAndGet();
            }
        }
        return Applications.getReconcileHashCode(counts);
    }
}
