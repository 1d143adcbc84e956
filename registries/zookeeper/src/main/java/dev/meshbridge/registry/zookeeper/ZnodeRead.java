package dev.meshbridge.registry.zookeeper;

import java.util.Objects;

/**
 * One listing or data read the watcher issues against ZooKeeper.
 *
 * @param kind what is read
 * @param root the watched root
 * @param child the service, interface or {@code mapping} node under the root ({@code ""} for {@link Kind#LIST_ROOT})
 * @param leaf the instance id or mapped interface ({@code ""} when not a leaf read)
 */
record ZnodeRead(Kind kind, String root, String child, String leaf) {

    enum Kind {
        /** Children of a root: the services, interfaces and Dubbo's reserved nodes. */
        LIST_ROOT,
        /** Children of a service node: Dubbo categories or x-discovery instance ids. */
        LIST_NODE,
        /** Children of {@code <interface>/providers}: the provider URLs. */
        LIST_PROVIDERS,
        /** Data of one x-discovery instance. */
        READ_INSTANCE,
        /** Data of {@code <root>/mapping/<interface>}. */
        READ_MAPPING,
        /** Children of {@code <interface>/configurators}: Dubbo 2.6 override URLs. */
        LIST_CONFIGURATORS,
        /** Children of {@code <root>/config/dubbo}: the config center's rules. */
        LIST_CONFIG,
        /** Data of {@code <root>/config/dubbo/<key>}: one rule of the config center. */
        READ_CONFIG
    }

    ZnodeRead {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(child, "child");
        Objects.requireNonNull(leaf, "leaf");
    }

    static ZnodeRead listRoot(String root) {
        return new ZnodeRead(Kind.LIST_ROOT, root, "", "");
    }

    static ZnodeRead listNode(String root, String child) {
        return new ZnodeRead(Kind.LIST_NODE, root, child, "");
    }

    static ZnodeRead listProviders(String root, String child) {
        return new ZnodeRead(Kind.LIST_PROVIDERS, root, child, "");
    }

    static ZnodeRead readInstance(String root, String child, String id) {
        return new ZnodeRead(Kind.READ_INSTANCE, root, child, id);
    }

    static ZnodeRead listConfigurators(String root, String child) {
        return new ZnodeRead(Kind.LIST_CONFIGURATORS, root, child, "");
    }

    static ZnodeRead listConfig(String root) {
        return new ZnodeRead(Kind.LIST_CONFIG, root, ZookeeperCatalog.CONFIG, "");
    }

    static ZnodeRead readConfig(String root, String key) {
        return new ZnodeRead(Kind.READ_CONFIG, root, ZookeeperCatalog.CONFIG, key);
    }

    static ZnodeRead readMapping(String root, String iface) {
        return new ZnodeRead(Kind.READ_MAPPING, root, ZookeeperCatalog.MAPPING, iface);
    }

    /** The znode this read is about. */
    String path() {
        return switch (kind) {
            case LIST_ROOT -> root;
            case LIST_NODE -> join(root, child);
            case LIST_PROVIDERS -> join(root, child) + "/" + ZookeeperCatalog.PROVIDERS;
            case READ_INSTANCE, READ_MAPPING -> join(root, child) + "/" + leaf;
            case LIST_CONFIGURATORS -> join(root, child) + "/" + ZookeeperCatalog.CONFIGURATORS;
            case LIST_CONFIG -> join(root, child) + "/" + ZookeeperCatalog.CONFIG_GROUP;
            case READ_CONFIG -> join(root, child) + "/" + ZookeeperCatalog.CONFIG_GROUP + "/" + leaf;
        };
    }

    /** {@code parent/name}, where the parent may be {@code /}. */
    static String join(String parent, String name) {
        return parent.equals("/") ? "/" + name : parent + "/" + name;
    }
}
