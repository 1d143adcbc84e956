package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.dubbo.DubboOverrides;
import dev.meshbridge.core.dubbo.DubboUrl;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.watch.Duplicates;
import dev.meshbridge.core.watch.ServicePorts;
import dev.meshbridge.core.watch.ShardPublisher;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.zookeeper.Watcher.Event.EventType;

/**
 * The watcher's copy of the part of the ZooKeeper tree it needs, and the services derived from it. Used by the
 * watcher's one owner thread only, so it has no locks.
 *
 * <p>How it stays right:
 *
 * <ol>
 *   <li>a listing replaces what is known under its znode; a watch event adds or removes one znode; both are applied
 *       in the order they arrived, which ZooKeeper keeps consistent (a read that saw a change arrives after the event
 *       for that change), so the copy converges on the tree;
 *   <li>only what the services need is kept: provider URLs (as a 128-bit digest of the znode name, with the parsed
 *       endpoint), instance endpoints and the mapping; consumers, configurators, routers, {@code metadata} and
 *       {@code config} are never read;
 *   <li>every change marks its service node dirty; {@link #drain} derives the dirty nodes' services and hands them to
 *       the kit's {@link ShardPublisher}, which sends only what differs from before.
 * </ol>
 */
final class ZookeeperCatalog {

    static final String PROVIDERS = "providers";
    static final String CONFIGURATORS = "configurators";
    static final String MAPPING = "mapping";
    /** The config center under a root ({@code /dubbo/config}) and its group ({@code dubbo}). */
    static final String CONFIG = "config";

    static final String CONFIG_GROUP = "dubbo";

    /** Dubbo's category nodes under an interface; {@code providers} and {@code configurators} are read. */
    static final Set<String> DUBBO_CATEGORIES = Set.of(PROVIDERS, "consumers", "routers", CONFIGURATORS);

    /** Dubbo's nodes under its root that hold no services. */
    static final Set<String> IGNORED_CHILDREN = Set.of("metadata");

    /** Layout prefixes of {@link ServiceKey#namespace()}: which kind of service, under which root. */
    static final String DUBBO_NS = "dubbo:";

    static final String DUBBO_APP_NS = "dubbo-app:";
    static final String DUBBO_MAPPING_NS = "dubbo-mapping:";
    static final String SPRING_NS = "spring-cloud:";

    private enum Kind {
        SERVICE,
        MAPPING,
        CONFIG,
        IGNORED
    }

    /** A provider znode name, by its 128-bit digest: names are long URLs, and only equality is needed. */
    private record NameKey(long hi, long lo) {}

    private record MappingRef(String root, String iface) {}

    /** An instance whose znode is gone, kept until its re-registration window is over. */
    private record Departure(Child child, String id) {}

    private static final class Root {
        final String path;
        final Map<String, Child> children = new HashMap<>();

        Root(String path) {
            this.path = path;
        }
    }

    private static final class Child {
        final Root root;
        final String name;
        final Kind kind;
        Map<NameKey, Leaf> providers = new HashMap<>();
        /** Dubbo 2.6 override URLs under {@code configurators}, by znode name (null: not a usable rule). */
        Map<String, DubboUrl> configurators = Map.of();

        final Map<String, Leaf> instances = new HashMap<>();
        final Map<String, List<String>> mappings = new HashMap<>();
        Set<ServiceKey> keys = Set.of();
        boolean removed;

        Child(Root root, String name, Kind kind) {
            this.root = root;
            this.name = name;
            this.kind = kind;
        }
    }

    private final RegistryConfig config;
    private final ZookeeperOptions options;
    private final RegistryStatus status;
    private final LeafParser parser;
    private final MessageDigest md5;
    private final Map<String, Root> roots = new LinkedHashMap<>();
    private final Map<String, Set<MappingRef>> mappingsByApp = new HashMap<>();
    private final Set<Child> dirty = new LinkedHashSet<>();
    private final Set<MappingRef> dirtyMappings = new LinkedHashSet<>();
    private final Map<Departure, Long> departing = new LinkedHashMap<>();
    /** The config center's configurator rules, by root and key ({@code <iface>:<version>:<group>.configurators}). */
    private final Map<String, Map<String, List<DubboOverrides.Rule>>> configRules = new HashMap<>();

    private final long reregistrationNanos;
    private final LongSupplier nanoTime;

    ZookeeperCatalog(RegistryConfig config, ZookeeperOptions options, RegistryStatus status, LongSupplier nanoTime) {
        this.config = config;
        this.options = options;
        this.status = status;
        this.nanoTime = nanoTime;
        this.reregistrationNanos = options.reregistrationWindow().toNanos();
        this.parser = new LeafParser(status);
        for (String r : options.servicesPaths()) roots.put(r, new Root(r));
        try {
            this.md5 = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no MD5", e);
        }
    }

    // ------------------------------------------------------------------ listings and reads

    /** The children of a root; every service node under it is listed again. */
    void rootListed(String rootPath, List<String> names, Consumer<ZnodeRead> next) {
        Root root = roots.get(rootPath);
        Set<String> present = new HashSet<>(names);
        for (Iterator<Child> it = root.children.values().iterator(); it.hasNext(); ) {
            Child c = it.next();
            if (!present.contains(c.name)) {
                it.remove();
                markRemoved(c);
            }
        }
        for (String name : names) {
            Child c = child(root, name);
            if (c != null && c.kind != Kind.IGNORED) next.accept(ZnodeRead.listNode(rootPath, name));
        }
    }

    /** The root does not exist (or was deleted): nothing is under it. */
    void rootGone(String rootPath) {
        rootListed(rootPath, List.of(), r -> {});
    }

    /** The children of a service node (or of {@code mapping}); instances and mappings are read again. */
    void nodeListed(String rootPath, String name, List<String> names, Consumer<ZnodeRead> next) {
        Child c = child(roots.get(rootPath), name);
        if (c == null || c.kind == Kind.IGNORED) return;
        Set<String> present = new HashSet<>(names);
        if (c.kind == Kind.MAPPING) {
            for (String iface : List.copyOf(c.mappings.keySet())) {
                if (!present.contains(iface)) mappingRead(rootPath, iface, null);
            }
            for (String iface : names) next.accept(ZnodeRead.readMapping(rootPath, iface));
            return;
        }
        if (c.kind == Kind.CONFIG) {
            if (present.contains(CONFIG_GROUP)) next.accept(ZnodeRead.listConfig(rootPath));
            else configListed(rootPath, List.of(), r -> {});
            return;
        }
        if (present.contains(PROVIDERS)) {
            next.accept(ZnodeRead.listProviders(rootPath, name));
        } else {
            providersGone(rootPath, name);
        }
        if (present.contains(CONFIGURATORS)) {
            next.accept(ZnodeRead.listConfigurators(rootPath, name));
        } else {
            configuratorsListed(rootPath, name, List.of());
        }
        for (String id : List.copyOf(c.instances.keySet())) {
            if (!present.contains(id)) instanceGone(c, id);
        }
        for (String id : names) {
            if (DUBBO_CATEGORIES.contains(id)) continue;
            instanceBack(c, id);
            c.instances.putIfAbsent(id, Leaf.Unusable.PENDING);
            next.accept(ZnodeRead.readInstance(rootPath, name, id));
        }
    }

    /** The node is gone (a listing or read found no node): what was under it is gone too. */
    void nodeGone(String rootPath, String name) {
        Root root = roots.get(rootPath);
        Child c = root.children.remove(name);
        if (c != null) markRemoved(c);
    }

    /** The provider URLs of one interface; names seen before keep their parsed provider. */
    void providersListed(String rootPath, String name, List<String> names) {
        Child c = child(roots.get(rootPath), name);
        if (c == null || c.kind != Kind.SERVICE) return;
        Map<NameKey, Leaf> fresh = HashMap.newHashMap(names.size());
        String dir = providersPath(c);
        for (String n : names) {
            NameKey k = key(n);
            Leaf old = c.providers.get(k);
            fresh.put(k, old != null ? old : parser.provider(dir + "/" + n, n));
        }
        boolean changed = !fresh.keySet().equals(c.providers.keySet());
        c.providers = fresh;
        if (changed) markDirty(c);
    }

    /** The {@code providers} node of an interface does not exist (or was deleted). */
    void providersGone(String rootPath, String name) {
        Child c = roots.get(rootPath).children.get(name);
        if (c == null) return;
        if (!c.providers.isEmpty()) {
            c.providers = new HashMap<>();
            markDirty(c);
        }
    }

    /**
     * The data of one x-discovery instance, or null when it is gone. Garbage written over a good instance is reported
     * and the last good value kept.
     */
    void instanceRead(String rootPath, String name, String id, byte[] data) {
        Root root = roots.get(rootPath);
        if (data == null) {
            Child c = root.children.get(name);
            if (c != null) instanceGone(c, id);
            return;
        }
        Child c = child(root, name);
        if (c == null || c.kind != Kind.SERVICE) return;
        instanceBack(c, id);
        Leaf leaf = parser.instance(ZnodeRead.join(ZnodeRead.join(rootPath, name), id), data);
        Leaf old = c.instances.get(id);
        // garbage written over a good instance does not take it away: the last good value stays
        if (leaf == Leaf.Unusable.MALFORMED && old instanceof Leaf.Instance) return;
        c.instances.put(id, leaf);
        if (!leaf.equals(old)) markDirty(c);
    }

    /** The applications mapped to an interface ({@code <root>/mapping/<interface>}), or null when it is gone. */
    void mappingRead(String rootPath, String iface, byte[] data) {
        Child m = child(roots.get(rootPath), MAPPING);
        if (m == null) return;
        List<String> apps = data == null ? null : LeafParser.mappingApps(data);
        List<String> old = apps == null ? m.mappings.remove(iface) : m.mappings.put(iface, apps);
        if (Objects.equals(old, apps)) return;
        MappingRef ref = new MappingRef(rootPath, iface);
        if (old != null) {
            for (String app : old) {
                Set<MappingRef> refs = mappingsByApp.get(app);
                if (refs != null && refs.remove(ref) && refs.isEmpty()) mappingsByApp.remove(app);
            }
        }
        if (apps != null) {
            for (String app : apps)
                mappingsByApp.computeIfAbsent(app, a -> new HashSet<>()).add(ref);
        }
        dirtyMappings.add(ref);
    }

    // ------------------------------------------------------------------ overrides (configurators)

    /** The Dubbo 2.6 override URLs under {@code <root>/<interface>/configurators}; names seen before keep their rule. */
    void configuratorsListed(String rootPath, String name, List<String> names) {
        Child c = roots.get(rootPath).children.get(name);
        if (c == null || c.kind != Kind.SERVICE) return;
        if (names.isEmpty() && c.configurators.isEmpty()) return;
        Map<String, DubboUrl> fresh = new HashMap<>();
        for (String n : names) {
            fresh.put(n, c.configurators.containsKey(n) ? c.configurators.get(n) : overrideUrl(c, n));
        }
        if (!fresh.equals(c.configurators)) {
            c.configurators = fresh;
            markDirty(c);
        }
    }

    private DubboUrl overrideUrl(Child c, String name) {
        String path = ZnodeRead.join(c.root.path, c.name) + "/" + CONFIGURATORS + "/" + name;
        try {
            DubboUrl url = DubboUrl.parseEncoded(name);
            if (!url.protocol().equals("empty")) DubboOverrides.fromUrl(url); // refuses what is not a configurator
            return url;
        } catch (IllegalArgumentException e) {
            status.skipped(path, "configurator URL: " + e.getMessage());
            return null;
        }
    }

    /** The children of {@code <root>/config/dubbo}: configurator rules are read, everything else left alone. */
    void configListed(String rootPath, List<String> names, Consumer<ZnodeRead> next) {
        Map<String, List<DubboOverrides.Rule>> rules = configRules.get(rootPath);
        Set<String> present = new HashSet<>(names);
        if (rules != null) {
            for (String key : List.copyOf(rules.keySet())) {
                if (!present.contains(key)) configRead(rootPath, key, null);
            }
        }
        for (String key : names) {
            if (relevantRule(key)) next.accept(ZnodeRead.readConfig(rootPath, key));
        }
    }

    /**
     * One rule of the config center, or null when it is gone. A rule that cannot be parsed is reported and the rules
     * known before are kept, as Dubbo's consumer does.
     */
    void configRead(String rootPath, String key, byte[] data) {
        if (!relevantRule(key)) return;
        Map<String, List<DubboOverrides.Rule>> rules = configRules.computeIfAbsent(rootPath, r -> new HashMap<>());
        List<DubboOverrides.Rule> parsed;
        if (data == null || data.length == 0) {
            parsed = null;
        } else {
            try {
                parsed = List.copyOf(DubboOverrides.parse(new String(data, StandardCharsets.UTF_8)));
                for (DubboOverrides.Rule r : parsed) {
                    if (r.unsupported() != null) {
                        status.skipped(configPath(rootPath, key), "not applied: " + r.unsupported());
                    }
                }
            } catch (IllegalArgumentException | ClassCastException e) {
                status.skipped(
                        configPath(rootPath, key),
                        "configurator rule: " + e.getMessage() + "; keeping the rules before it");
                return;
            }
        }
        List<DubboOverrides.Rule> old = parsed == null ? rules.remove(key) : rules.put(key, parsed);
        if (Objects.equals(old, parsed)) return;
        markRuleUsers(key);
    }

    /** Marks the interfaces a config-center rule may apply to: all of them for an application rule. */
    private void markRuleUsers(String key) {
        String base = key.substring(0, key.length() - DubboOverrides.CONFIGURATORS_SUFFIX.length());
        int colon = base.indexOf(':');
        String iface = colon < 0 ? null : base.substring(0, colon);
        for (Root r : roots.values()) {
            for (Child c : r.children.values()) {
                if (c.kind != Kind.SERVICE || c.providers.isEmpty()) continue;
                if (iface == null || decode(c.name).equals(iface)) markDirty(c);
            }
        }
    }

    /** Service rules ({@code iface:version:group.configurators}), and the consumer application's own. */
    private boolean relevantRule(String key) {
        if (!key.endsWith(DubboOverrides.CONFIGURATORS_SUFFIX)) return false;
        String base = key.substring(0, key.length() - DubboOverrides.CONFIGURATORS_SUFFIX.length());
        if (base.indexOf(':') > 0) return true;
        return options.dubboConsumerApplication() != null && base.equals(options.dubboConsumerApplication());
    }

    private static String configPath(String rootPath, String key) {
        return ZnodeRead.join(rootPath, CONFIG) + "/" + CONFIG_GROUP + "/" + key;
    }

    /** The rule lists for one interface's providers, in the order Dubbo's consumer applies them. */
    private List<List<DubboOverrides.Rule>> rulesFor(Child c, String iface, String version, String group) {
        List<DubboOverrides.Rule> registry = new ArrayList<>();
        boolean cleared = false;
        // by znode name: Dubbo's consumer applies rules that tie in its order (same address and priority) in
        // ZooKeeper's child order, which differs between the servers of an ensemble; a fixed order keeps bridge
        // replicas identical
        for (DubboUrl u : new TreeMap<>(c.configurators).values()) {
            if (u == null) continue;
            if (u.protocol().equals("empty")) cleared = true;
            DubboOverrides.Rule r = u.protocol().equals("empty") ? null : DubboOverrides.fromUrl(u);
            if (r != null) registry.add(r);
        }
        if (cleared) registry.clear();
        List<DubboOverrides.Rule> application = new ArrayList<>();
        List<DubboOverrides.Rule> service = new ArrayList<>();
        String appKey = options.dubboConsumerApplication() == null
                ? null
                : options.dubboConsumerApplication() + DubboOverrides.CONFIGURATORS_SUFFIX;
        String serviceKey = DubboOverrides.ruleKey(iface, version, group);
        for (Map<String, List<DubboOverrides.Rule>> byKey : configRules.values()) {
            if (appKey != null) application.addAll(byKey.getOrDefault(appKey, List.of()));
            service.addAll(byKey.getOrDefault(serviceKey, List.of()));
        }
        if (registry.isEmpty() && application.isEmpty() && service.isEmpty()) return List.of();
        return List.of(registry, application, service);
    }

    /** The provider's endpoint with what the rules say about {@code disabled}, {@code enabled} and {@code weight}. */
    private Endpoint overridden(
            Leaf.DubboProvider p, String iface, String version, String group, List<List<DubboOverrides.Rule>> rules) {
        if (rules.isEmpty()) return p.endpoint();
        Endpoint e = p.endpoint();
        DubboOverrides.Provider provider = new DubboOverrides.Provider(
                e.address(), e.port(p.portName()), DubboOverrides.serviceKey(iface, group, version), p.params());
        Map<String, String> params = DubboOverrides.apply(provider, options.dubboConsumerApplication(), rules);
        boolean enabled = DubboNaming.enabled(params);
        int weight;
        try {
            weight = DubboNaming.weight(params);
        } catch (IllegalArgumentException ex) {
            status.skipped("override of " + e.address() + ":" + e.port(p.portName()) + " " + iface, ex.getMessage());
            weight = e.weight();
        }
        if (enabled == e.enabled() && weight == e.weight()) return e;
        return new Endpoint(e.address(), e.ports(), weight, enabled, e.health(), e.labels(), e.locality());
    }

    // ------------------------------------------------------------------ departing instances

    /**
     * An x-discovery instance znode is gone. A good instance stays for the re-registration window (curator x-discovery
     * deletes and re-creates every instance after each reconnect of its client); any other leaves at once.
     */
    private void instanceGone(Child c, String id) {
        Leaf old = c.instances.get(id);
        if (old == null) return;
        if (old instanceof Leaf.Instance && reregistrationNanos > 0) {
            departing.putIfAbsent(new Departure(c, id), nanoTime.getAsLong() + reregistrationNanos);
            return;
        }
        c.instances.remove(id);
        departing.remove(new Departure(c, id));
        markDirty(c);
    }

    /** The instance znode exists (again). */
    private void instanceBack(Child c, String id) {
        if (!departing.isEmpty()) departing.remove(new Departure(c, id));
    }

    /**
     * Removes the departing instances whose window is over.
     *
     * @return nanoseconds until the next one is due, or -1 when none is left
     */
    long expireDepartures() {
        long now = nanoTime.getAsLong();
        for (Iterator<Map.Entry<Departure, Long>> it = departing.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Departure, Long> e = it.next();
            if (e.getValue() - now > 0) return e.getValue() - now;
            it.remove();
            Departure d = e.getKey();
            if (d.child().instances.remove(d.id()) != null) markDirty(d.child());
        }
        return -1;
    }

    boolean hasDepartures() {
        return !departing.isEmpty();
    }

    // ------------------------------------------------------------------ watch events

    /**
     * One event of the root's persistent recursive watch.
     *
     * @param relative the path below the root ({@code ""} for the root itself)
     */
    void event(String rootPath, EventType type, String relative, Consumer<ZnodeRead> next) {
        Root root = roots.get(rootPath);
        boolean gone = type == EventType.NodeDeleted;
        if (relative.isEmpty()) {
            if (gone) rootGone(rootPath);
            else if (type == EventType.NodeCreated) next.accept(ZnodeRead.listRoot(rootPath));
            return;
        }
        String[] parts = relative.split("/", 4);
        String name = parts[0];
        if (parts.length == 1) {
            if (gone) nodeGone(rootPath, name);
            else if (type == EventType.NodeCreated) {
                Child c = child(root, name);
                if (c != null && c.kind != Kind.IGNORED) next.accept(ZnodeRead.listNode(rootPath, name));
            }
            return;
        }
        Child c = gone ? root.children.get(name) : child(root, name);
        if (c == null || c.kind == Kind.IGNORED) return;
        String second = parts[1];
        if (c.kind == Kind.CONFIG) {
            if (!second.equals(CONFIG_GROUP)) return;
            if (parts.length == 2) {
                if (gone) configListed(rootPath, List.of(), r -> {});
                else if (type == EventType.NodeCreated) next.accept(ZnodeRead.listConfig(rootPath));
            } else if (parts.length == 3) {
                if (gone) configRead(rootPath, parts[2], null);
                else if (type == EventType.NodeCreated || type == EventType.NodeDataChanged) {
                    if (relevantRule(parts[2])) next.accept(ZnodeRead.readConfig(rootPath, parts[2]));
                }
            }
            return;
        }
        if (c.kind == Kind.MAPPING) {
            if (parts.length != 2) return;
            if (gone) mappingRead(rootPath, second, null);
            else next.accept(ZnodeRead.readMapping(rootPath, second));
            return;
        }
        if (parts.length == 2) {
            if (second.equals(PROVIDERS)) {
                if (gone) providersGone(rootPath, name);
                else if (type == EventType.NodeCreated) {
                    next.accept(ZnodeRead.listProviders(rootPath, name));
                }
            } else if (second.equals(CONFIGURATORS)) {
                if (gone) configuratorsListed(rootPath, name, List.of());
                else if (type == EventType.NodeCreated) next.accept(ZnodeRead.listConfigurators(rootPath, name));
            } else if (!DUBBO_CATEGORIES.contains(second)) {
                if (gone) {
                    instanceGone(c, second);
                } else {
                    instanceBack(c, second);
                    c.instances.putIfAbsent(second, Leaf.Unusable.PENDING);
                    next.accept(ZnodeRead.readInstance(rootPath, name, second));
                }
            }
            return;
        }
        if (parts.length == 3 && second.equals(CONFIGURATORS) && c.kind == Kind.SERVICE) {
            String n = parts[2];
            if (gone) {
                if (c.configurators.containsKey(n)) {
                    Map<String, DubboUrl> fresh = new HashMap<>(c.configurators);
                    fresh.remove(n);
                    c.configurators = fresh;
                    markDirty(c);
                }
            } else if (type == EventType.NodeCreated && !c.configurators.containsKey(n)) {
                Map<String, DubboUrl> fresh = new HashMap<>(c.configurators);
                fresh.put(n, overrideUrl(c, n));
                c.configurators = fresh;
                markDirty(c);
            }
            return;
        }
        if (parts.length == 3 && second.equals(PROVIDERS)) {
            String url = parts[2];
            NameKey k = key(url);
            if (gone) {
                if (c.providers.remove(k) != null) markDirty(c);
            } else if (type == EventType.NodeCreated && !c.providers.containsKey(k)) {
                c.providers.put(k, parser.provider(providersPath(c) + "/" + url, url));
                markDirty(c);
            }
        }
    }

    // ------------------------------------------------------------------ derived services

    /** Number of service nodes known (interfaces, applications, services), for logs. */
    int nodeCount() {
        int n = 0;
        for (Root r : roots.values()) n += r.children.size();
        return n;
    }

    boolean hasChanges() {
        return !dirty.isEmpty() || !dirtyMappings.isEmpty();
    }

    /**
     * Derives the services of every dirty node and hands them to the publisher.
     *
     * @return how many services were derived (for the sync log)
     */
    int drain(ShardPublisher out) {
        int n = 0;
        for (Child c : dirty) {
            if (c.kind != Kind.SERVICE) continue;
            Set<MappingRef> byApp = mappingsByApp.get(c.name);
            if (byApp != null) dirtyMappings.addAll(byApp);
            String iface = decode(c.name);
            for (Root r : roots.values()) {
                Child m = r.children.get(MAPPING);
                if (m != null && m.mappings.containsKey(iface)) dirtyMappings.add(new MappingRef(r.path, iface));
            }
            Map<ServiceKey, ServiceUpsert> now = c.removed ? Map.of() : derive(c);
            apply(c.keys, now, out);
            n += now.size();
            c.keys = now.isEmpty() ? Set.of() : Set.copyOf(now.keySet());
        }
        dirty.clear();
        for (MappingRef ref : dirtyMappings) {
            ServiceKey key = new ServiceKey(
                    ZookeeperWatcherProvider.TYPE, config.name(), DUBBO_MAPPING_NS + ref.root(), "", ref.iface(), "");
            ServiceUpsert u = deriveMapping(key, ref);
            apply(Set.of(key), u == null ? Map.of() : Map.of(key, u), out);
            if (u != null) n++;
        }
        dirtyMappings.clear();
        return n;
    }

    private static void apply(Set<ServiceKey> before, Map<ServiceKey, ServiceUpsert> now, ShardPublisher out) {
        for (ServiceKey k : before) {
            if (!now.containsKey(k)) out.remove(k);
        }
        now.values().forEach(out::upsert);
    }

    private Map<ServiceKey, ServiceUpsert> derive(Child c) {
        Map<ServiceKey, ServiceUpsert> out = new HashMap<>();
        if (!c.providers.isEmpty()) deriveInterface(c, out);
        if (!c.instances.isEmpty()) deriveInstances(c, out);
        return out;
    }

    /** Interface-level Dubbo: one service per (version, group) of the interface. */
    private void deriveInterface(Child c, Map<ServiceKey, ServiceUpsert> out) {
        String iface = decode(c.name);
        Map<List<String>, List<Leaf.DubboProvider>> byVersionGroup = new HashMap<>();
        for (Leaf l : c.providers.values()) {
            if (l instanceof Leaf.DubboProvider p) {
                byVersionGroup
                        .computeIfAbsent(List.of(p.version(), p.group()), k -> new ArrayList<>())
                        .add(p);
            }
        }
        for (Map.Entry<List<String>, List<Leaf.DubboProvider>> e : byVersionGroup.entrySet()) {
            String version = e.getKey().get(0);
            String group = e.getKey().get(1);
            ServiceKey key = new ServiceKey(
                    ZookeeperWatcherProvider.TYPE, config.name(), DUBBO_NS + c.root.path, group, iface, version);
            List<Duplicates.Candidate> candidates = new ArrayList<>(e.getValue().size());
            Map<String, Protocol> protocols = new HashMap<>();
            String application = "";
            List<List<DubboOverrides.Rule>> rules = rulesFor(c, iface, version, group);
            for (Leaf.DubboProvider p : e.getValue()) {
                candidates.add(
                        new Duplicates.Candidate(overridden(p, iface, version, group, rules), p.timestamp(), p.id()));
                protocols.merge(p.portName(), p.protocol(), (a, b) -> a.compareTo(b) <= 0 ? a : b);
                if (!p.application().isEmpty()
                        && (application.isEmpty() || p.application().compareTo(application) < 0))
                    application = p.application();
            }
            List<Endpoint> endpoints = Duplicates.pick(candidates).endpoints();
            List<ServicePort> ports = ServicePorts.of(config, endpoints, protocols::get);
            String host;
            try {
                if (!hasAlphanumeric(iface)) throw new IllegalArgumentException("interface name gives no host");
                host = DubboNaming.interfaceHost(
                        options.dubboInterfaceHost(),
                        config.name(),
                        iface,
                        version,
                        group,
                        application,
                        interfaceEnvironment(c.root.path));
            } catch (IllegalArgumentException ex) {
                status.skipped(key.toString(), ex.getMessage());
                continue;
            }
            Map<String, String> labels = new TreeMap<>();
            labels.put("dubbo.interface", iface);
            if (!version.isEmpty()) labels.put("dubbo.version", version);
            if (!group.isEmpty()) labels.put("dubbo.group", group);
            out.put(key, new ServiceUpsert(key, host, ports, endpoints, serviceLabels(key, labels)));
        }
    }

    /** x-discovery services: Dubbo applications and Spring Cloud services, told apart by each instance's content. */
    private void deriveInstances(Child c, Map<ServiceKey, ServiceUpsert> out) {
        List<Leaf.Instance> dubbo = new ArrayList<>();
        List<Leaf.Instance> spring = new ArrayList<>();
        for (Leaf l : c.instances.values()) {
            if (l instanceof Leaf.Instance i) (i.dubboApplication() ? dubbo : spring).add(i);
        }
        Map<String, String> appVars = new HashMap<>();
        appVars.put("application", c.name);
        appVars.put("registry", config.name());
        DubboNaming.Environment.zookeeper(c.root.path, c.root.path.equals(options.homeApplicationRoot()))
                .putInto(appVars);
        putInstances(
                out,
                c,
                DUBBO_APP_NS,
                dubbo,
                options.dubboApplicationHost(),
                appVars,
                Map.of("dubbo.application", c.name));
        putInstances(
                out,
                c,
                SPRING_NS,
                spring,
                options.springCloudHost(),
                Map.of("service", c.name, "root", c.root.path.substring(1), "registry", config.name()),
                Map.of());
    }

    private void putInstances(
            Map<ServiceKey, ServiceUpsert> out,
            Child c,
            String layout,
            List<Leaf.Instance> instances,
            HostTemplate template,
            Map<String, String> vars,
            Map<String, String> labels) {
        if (instances.isEmpty()) return;
        ServiceKey key =
                new ServiceKey(ZookeeperWatcherProvider.TYPE, config.name(), layout + c.root.path, "", c.name, "");
        ServiceUpsert u = instancesUpsert(key, instances, template, vars, labels);
        if (u != null) out.put(key, u);
    }

    /**
     * The interface's service as found through {@code <root>/mapping/<interface>}: the instances of the mapped
     * applications, under the interface's host without version or group. None while the interface has interface-level
     * providers in this registry (they say more: version, group, weight per interface).
     */
    private ServiceUpsert deriveMapping(ServiceKey key, MappingRef ref) {
        Child m = roots.get(ref.root()).children.get(MAPPING);
        List<String> apps = m == null ? null : m.mappings.get(ref.iface());
        if (apps == null || apps.isEmpty() || hasInterfaceProviders(ref.iface())) return null;
        List<Leaf.Instance> instances = new ArrayList<>();
        for (String app : apps) {
            for (Root r : roots.values()) {
                Child c = r.children.get(app);
                if (c == null || c.kind != Kind.SERVICE) continue;
                for (Leaf l : c.instances.values()) {
                    if (l instanceof Leaf.Instance i && i.dubboApplication()) instances.add(i);
                }
            }
        }
        if (instances.isEmpty()) return null;
        Map<String, String> labels = new TreeMap<>();
        labels.put("dubbo.interface", ref.iface());
        if (apps.size() == 1) labels.put("dubbo.application", apps.get(0));
        Map<String, String> vars = new HashMap<>();
        vars.put("interface", ref.iface());
        vars.put("version", "");
        vars.put("group", "");
        vars.put("application", apps.get(0));
        vars.put("registry", config.name());
        interfaceEnvironment(ref.root()).putInto(vars);
        return instancesUpsert(key, instances, options.dubboInterfaceHost(), vars, labels);
    }

    /** The environment of Dubbo interfaces under a root: its {@code {env}} names every root but the home one. */
    private DubboNaming.Environment interfaceEnvironment(String rootPath) {
        return DubboNaming.Environment.zookeeper(rootPath, rootPath.equals(options.homeInterfaceRoot()));
    }

    private boolean hasInterfaceProviders(String iface) {
        String encoded = URLEncoder.encode(iface, StandardCharsets.UTF_8);
        for (Root r : roots.values()) {
            Child c = r.children.get(encoded);
            if (c == null) continue;
            for (Leaf l : c.providers.values()) {
                if (l instanceof Leaf.DubboProvider) return true;
            }
        }
        return false;
    }

    private ServiceUpsert instancesUpsert(
            ServiceKey key,
            List<Leaf.Instance> instances,
            HostTemplate template,
            Map<String, String> vars,
            Map<String, String> labels) {
        List<Duplicates.Candidate> candidates = new ArrayList<>(instances.size());
        Map<String, Protocol> protocols = new HashMap<>();
        for (Leaf.Instance i : instances) {
            candidates.add(new Duplicates.Candidate(i.endpoint(), i.registeredAt(), i.id()));
            i.protocols().forEach((name, p) -> protocols.merge(name, p, (a, b) -> a.compareTo(b) <= 0 ? a : b));
        }
        List<Endpoint> endpoints = Duplicates.pick(candidates).endpoints();
        List<ServicePort> ports = ServicePorts.of(config, endpoints, protocols::get);
        String host;
        try {
            if (!hasAlphanumeric(key.name())) throw new IllegalArgumentException("name gives no host");
            host = template.render(vars);
        } catch (IllegalArgumentException ex) {
            status.skipped(key.toString(), ex.getMessage());
            return null;
        }
        return new ServiceUpsert(key, host, ports, endpoints, serviceLabels(key, labels));
    }

    /** Service-level labels, sanitized; what had to be dropped is reported (once per service and key). */
    private java.util.SortedMap<String, String> serviceLabels(ServiceKey key, Map<String, String> raw) {
        Labels.Result r = Labels.sanitize(raw);
        if (!r.dropped().isEmpty()) status.droppedLabels(key.toString(), r.dropped());
        return r.labels();
    }

    // ------------------------------------------------------------------ helpers

    private Child child(Root root, String name) {
        if (root.path.equals("/") && name.equals("zookeeper")) return null;
        return root.children.computeIfAbsent(name, n -> new Child(root, n, kindOf(n)));
    }

    private static Kind kindOf(String name) {
        if (name.equals(MAPPING)) return Kind.MAPPING;
        if (name.equals(CONFIG)) return Kind.CONFIG;
        if (IGNORED_CHILDREN.contains(name)) return Kind.IGNORED;
        return Kind.SERVICE;
    }

    private void markDirty(Child c) {
        dirty.add(c);
    }

    private void markRemoved(Child c) {
        c.removed = true;
        departing.keySet().removeIf(d -> d.child() == c);
        if (c.kind == Kind.CONFIG) {
            Map<String, List<DubboOverrides.Rule>> rules = configRules.remove(c.root.path);
            if (rules != null) rules.keySet().forEach(this::markRuleUsers);
            return;
        }
        if (c.kind == Kind.MAPPING) {
            for (String iface : List.copyOf(c.mappings.keySet())) {
                List<String> apps = c.mappings.remove(iface);
                MappingRef ref = new MappingRef(c.root.path, iface);
                for (String app : apps) {
                    Set<MappingRef> refs = mappingsByApp.get(app);
                    if (refs != null && refs.remove(ref) && refs.isEmpty()) mappingsByApp.remove(app);
                }
                dirtyMappings.add(ref);
            }
            return;
        }
        dirty.add(c);
    }

    private static String providersPath(Child c) {
        return ZnodeRead.join(c.root.path, c.name) + "/" + PROVIDERS;
    }

    private NameKey key(String name) {
        byte[] d = md5.digest(name.getBytes(StandardCharsets.UTF_8));
        ByteBuffer b = ByteBuffer.wrap(d);
        return new NameKey(b.getLong(), b.getLong());
    }

    private static String decode(String name) {
        try {
            return URLDecoder.decode(name, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return name;
        }
    }

    private static boolean hasAlphanumeric(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = Character.toLowerCase(s.charAt(i));
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
        }
        return false;
    }
}
